package jsvm

import (
	"math"
	"time"

	"github.com/dop251/goja"

	"github.com/dynworkflow/dynworkflow/lang"
)

// setup prepares a fresh VM: determinism, scope tracking, and the globals a
// workflow sees: those of the Node runtime's VM. There is deliberately no
// require, fetch or setTimeout, and process has only cwd(): agents do the
// work, the script only coordinates them.
func (r *run) setup() error {
	if err := r.readBuiltins(); err != nil {
		return err
	}
	if err := r.installJSONStringify(); err != nil {
		return err
	}
	r.vm.SetRandSource(func() float64 { return 0 })
	r.vm.SetTimeSource(func() time.Time { return time.Unix(0, 0).UTC() })
	r.vm.SetAsyncContextTracker(&r.scopes)
	if err := r.installRegExpTranslation(); err != nil {
		return err
	}
	if err := r.installIntl(); err != nil {
		return err
	}
	if _, err := r.vm.RunProgram(r.script.prelude); err != nil {
		return err
	}
	if err := r.installGuards(); err != nil {
		return err
	}
	args := goja.Undefined()
	if raw := r.env.Args(); raw != nil {
		v, err := r.fromJSON(raw)
		if err != nil {
			return &lang.Error{File: r.script.src.path, Message: "the run's args are not valid JSON: " + r.describeThrownError(err)}
		}
		args = v
	}
	globals := map[string]any{
		"agent":      r.agent,
		"parallel":   r.parallel,
		"pipeline":   r.pipeline,
		"workflow":   r.workflow,
		"checkpoint": r.checkpoint,
		"phase":      r.phase,
		"log":        r.log,
		"args":       args,
		"cwd":        r.env.Cwd(),
		"process":    r.process(),
		"budget":     r.budget(),
		"console":    r.console(),
	}
	for name, v := range globals {
		// A call of a primitive is a yield to the engine: it restarts the
		// busy clock.
		if fn, ok := v.(func(goja.FunctionCall) goja.Value); ok {
			v = func(call goja.FunctionCall) goja.Value {
				r.busy.running()
				return fn(call)
			}
		}
		if err := r.vm.Set(name, v); err != nil {
			return err
		}
	}
	// Called by every throw statement (see throws.go); hidden from the
	// script's enumeration and not writable.
	return r.vm.GlobalObject().DefineDataProperty(thrownName, r.vm.ToValue(r.noteThrown),
		goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
}

// phase(title) sets the progress group for the calls that follow in the
// current scope.
func (r *run) phase(call goja.FunctionCall) goja.Value {
	title := call.Argument(0)
	if !goja.IsString(title) {
		r.typeError("phase(): the title must be a string, not %s", kind(title))
	}
	r.env.Phase(r.scopes.current, title.String())
	return goja.Undefined()
}

// log(message) records a narrator line.
func (r *run) log(call goja.FunctionCall) goja.Value {
	r.env.Log(r.scopes.current, "info", r.format(call.Arguments))
	return goja.Undefined()
}

// console sends console.log and friends to the narrator, at the level their
// names suggest.
func (r *run) console() *goja.Object {
	console := r.vm.NewObject()
	levels := map[string]string{"log": "info", "info": "info", "debug": "info", "warn": "warn", "error": "error"}
	for name, level := range levels {
		_ = console.Set(name, func(call goja.FunctionCall) goja.Value {
			r.busy.running()
			r.env.Log(r.scopes.current, level, r.format(call.Arguments))
			return goja.Undefined()
		})
	}
	return console
}

// process is the Node runtime's frozen { cwd() }, for scripts that ask it
// where they run: no env, no exit, nothing else of Node's process.
func (r *run) process() *goja.Object {
	p := r.vm.NewObject()
	cwd := r.vm.ToValue(r.env.Cwd())
	_ = p.Set("cwd", func(goja.FunctionCall) goja.Value { return cwd })
	if _, err := r.builtins.freeze(goja.Undefined(), p); err != nil {
		panic(err)
	}
	return p
}

// budget is the script's read-only view of the token budget:
// { total, spent(), remaining() }, with total null and remaining()
// Infinity when the run has no budget.
func (r *run) budget() *goja.Object {
	b := r.vm.NewObject()
	view := r.env.Budget()
	total := goja.Null()
	if view != nil {
		if n, ok := view.Total(); ok {
			total = r.vm.ToValue(n)
		}
	}
	_ = b.Set("total", total)
	_ = b.Set("spent", func(goja.FunctionCall) goja.Value {
		if view == nil {
			return r.vm.ToValue(0)
		}
		return r.vm.ToValue(view.Spent())
	})
	_ = b.Set("remaining", func(goja.FunctionCall) goja.Value {
		if view != nil {
			if n, ok := view.Remaining(); ok {
				return r.vm.ToValue(n)
			}
		}
		return r.vm.ToValue(math.Inf(1))
	})
	if _, err := r.builtins.freeze(goja.Undefined(), b); err != nil {
		panic(err)
	}
	return b
}
