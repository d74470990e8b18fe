package star

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/dynworkflow/dynworkflow/lang"
)

// builtins are the predeclared names of every file of a run: the
// primitives, the budget, and Starlark's json module, str, repr and print,
// which measure what they are given first (see guards.go). None reads the
// clock or draws a random number.
func (r *run) builtins() starlark.StringDict {
	b := starlark.StringDict{
		"agent":      starlark.NewBuiltin("agent", r.agent),
		"checkpoint": starlark.NewBuiltin("checkpoint", r.checkpoint),
		"workflow":   starlark.NewBuiltin("workflow", r.workflow),
		"parallel":   starlark.NewBuiltin("parallel", r.parallel),
		"pipeline":   starlark.NewBuiltin("pipeline", r.pipeline),
		"phase":      starlark.NewBuiltin("phase", r.phase),
		"log":        starlark.NewBuiltin("log", r.log),
		"budget":     r.budget(),
		"cwd":        starlark.String(r.env.Cwd()),
	}
	for name, v := range r.guardedBuiltins() {
		b[name] = v
	}
	return b
}

// agent(prompt, label=, phase=, schema=, model=, effort=, agentType=,
// isolation=, executor=, permissions=, timeoutMs=, retries=) runs one agent and returns
// its text, the validated schema answer as dicts and lists, or None on a
// terminal failure. The options are those of JavaScript's agent(), checked
// by the same code; an option set to None counts as not set.
func (r *run) agent(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	scope, err := scopeOf(th, b.Name())
	if err != nil {
		return nil, err
	}
	prompt, err := promptArg("agent", "agent(prompt, label=..., schema=...)", args)
	if err != nil {
		return nil, err
	}
	raw, err := optionsJSON("agent()", kwargs, r.script.maxNesting)
	if err != nil {
		return nil, err
	}
	opts, err := lang.DecodeAgentOptions(raw)
	if err != nil {
		return nil, err
	}
	res, err := r.await(th, func(ctx context.Context, done lang.Done) { r.env.Agent(ctx, scope, prompt, opts, done) })
	if err != nil {
		return nil, err
	}
	return fromJSON(res)
}

// checkpoint(prompt, kind=, choices=, default=, headless=, timeoutMs=) asks
// a human and returns the answer.
func (r *run) checkpoint(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	scope, err := scopeOf(th, b.Name())
	if err != nil {
		return nil, err
	}
	prompt, err := promptArg("checkpoint", `checkpoint(prompt, kind="confirm", default=True)`, args)
	if err != nil {
		return nil, err
	}
	raw, err := optionsJSON("checkpoint()", kwargs, r.script.maxNesting)
	if err != nil {
		return nil, err
	}
	req, err := lang.DecodeCheckpoint(prompt, raw)
	if err != nil {
		return nil, err
	}
	res, err := r.await(th, func(ctx context.Context, done lang.Done) { r.env.Checkpoint(ctx, scope, req, done) })
	if err != nil {
		return nil, err
	}
	return fromJSON(res)
}

// workflow(name_or_path, args=None) runs a saved workflow or a script file
// (in either language) as a child and returns its result. As in
// JavaScript, {"scriptPath": ...} or {"name": ...} may stand for the name.
func (r *run) workflow(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	scope, err := scopeOf(th, b.Name())
	if err != nil {
		return nil, err
	}
	var ref, childArgs starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name_or_path", &ref, "args?", &childArgs); err != nil {
		return nil, err
	}
	if d, ok := ref.(*starlark.Dict); ok {
		for _, key := range []string{"scriptPath", "name"} {
			if v, found, _ := d.Get(starlark.String(key)); found {
				if _, isString := v.(starlark.String); isString {
					ref = v
					break
				}
			}
		}
	}
	name, ok := starlark.AsString(ref)
	if !ok || name == "" {
		return nil, fmt.Errorf("workflow(): the first argument must be a workflow name or a script path, not %s", typeOf(ref))
	}
	var raw json.RawMessage
	if childArgs != starlark.None {
		if raw, _, err = toJSON(childArgs, r.script.maxNesting); err != nil {
			var deep *lang.NestingError
			if errors.As(err, &deep) {
				deep.What = "workflow(): the args"
				return nil, deep
			}
			return nil, fmt.Errorf("workflow(): the args cannot be turned into JSON: %v", err)
		}
	}
	res, err := r.await(th, func(ctx context.Context, done lang.Done) { r.env.Workflow(ctx, scope, name, raw, done) })
	if err != nil {
		return nil, err
	}
	return fromJSON(res)
}

// phase(title) sets the progress group for the calls that follow in the
// current branch.
func (r *run) phase(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	scope, err := scopeOf(th, b.Name())
	if err != nil {
		return nil, err
	}
	var title starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &title); err != nil {
		return nil, err
	}
	s, ok := starlark.AsString(title)
	if !ok {
		return nil, fmt.Errorf("phase(): the title must be a string, not %s", typeOf(title))
	}
	r.env.Phase(scope, s)
	return starlark.None, nil
}

// log(*values, level="info") records a narrator line: the values as str()
// shows them, joined by spaces.
func (r *run) log(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	level := "info"
	for _, kv := range kwargs {
		name, _ := starlark.AsString(kv[0])
		s, ok := starlark.AsString(kv[1])
		if name != "level" || !ok || (s != "info" && s != "warn" && s != "error") {
			return nil, fmt.Errorf(`log(): the only option is level="info", "warn" or "error"`)
		}
		level = s
	}
	scope, err := scopeOf(th, b.Name())
	if err != nil {
		scope = r.env.Root() // a line logged while a file loads
	}
	parts := make([]string, len(args))
	for i, v := range args {
		if s, ok := starlark.AsString(v); ok {
			parts[i] = s
		} else {
			parts[i] = v.String()
		}
	}
	r.env.Log(scope, level, strings.Join(parts, " "))
	return starlark.None, nil
}

// budget is the script's read-only view of the token budget: total (None
// without a budget), spent() and remaining(). Without a budget remaining()
// is float("inf"), as JavaScript's is Infinity, so that a guard such as
// budget.remaining() < 2000 reads the same with and without one.
func (r *run) budget() starlark.Value {
	view := r.env.Budget()
	total := starlark.Value(starlark.None)
	if view != nil {
		if n, ok := view.Total(); ok {
			total = starlark.MakeInt64(n)
		}
	}
	spent := starlark.NewBuiltin("spent", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		if view == nil {
			return starlark.MakeInt(0), nil
		}
		return starlark.MakeInt64(view.Spent()), nil
	})
	remaining := starlark.NewBuiltin("remaining", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		if view != nil {
			if n, ok := view.Remaining(); ok {
				return starlark.MakeInt64(n), nil
			}
		}
		return starlark.Float(math.Inf(1)), nil
	})
	return &starlarkstruct.Module{Name: "budget", Members: starlark.StringDict{"total": total, "spent": spent, "remaining": remaining}}
}

// promptArg reads the one positional argument, a string, of agent() and
// checkpoint(); their options are keyword arguments.
func promptArg(fn, usage string, args starlark.Tuple) (string, error) {
	switch {
	case len(args) == 0:
		return "", fmt.Errorf("%s(): missing the prompt; write %s", fn, usage)
	case len(args) > 1:
		return "", fmt.Errorf("%s() takes the prompt and then keyword options, as in %s; got %d positional arguments", fn, usage, len(args))
	}
	s, ok := starlark.AsString(args[0])
	if !ok {
		return "", fmt.Errorf("%s(): the prompt must be a string, not %s", fn, typeOf(args[0]))
	}
	return s, nil
}

// optionsJSON turns keyword options into the JSON object lang decodes, so
// that both languages share the checks and their messages. A None option
// is left out.
func optionsJSON(fn string, kwargs []starlark.Tuple, limit int) (json.RawMessage, error) {
	if len(kwargs) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, kv := range kwargs {
		if kv[1] == starlark.None {
			continue
		}
		name, _ := starlark.AsString(kv[0])
		v, _, err := toJSON(kv[1], limit)
		var deep *lang.NestingError
		if errors.As(err, &deep) {
			deep.What = fmt.Sprintf("%s: option %s", fn, name)
			return nil, deep
		}
		if err != nil {
			return nil, fmt.Errorf("%s: option %s cannot be turned into JSON: %v", fn, name, err)
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		writeJSONString(&b, name)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
