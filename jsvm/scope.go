package jsvm

import (
	"github.com/dop251/goja"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Every primitive must be called with the scope of the code that calls it:
// the engine numbers calls within a scope, and a resumed run finds its
// cached results by those numbers. Branches of a parallel() or pipeline()
// interleave at every await, so the current scope is not a property of the
// Go stack. It is a property of the promise chain.
//
// goja's AsyncContextTracker follows exactly that: Grab is called whenever
// a promise reaction is registered (by await, .then, .catch) and its result
// is handed to Resumed before the reaction runs. So the scope that is
// current when a branch's code awaits is current again when it continues,
// however the branches interleave. parallel() and pipeline() make a
// branch's scope current for the synchronous part of the call that starts
// the branch (see enter), and the tracker carries it from there on.

// scopes implements goja.AsyncContextTracker.
type scopes struct {
	root, current lang.Scope
}

var _ goja.AsyncContextTracker = (*scopes)(nil)

func (s *scopes) reset(root lang.Scope) { s.root, s.current = root, root }

// Grab returns the scope to restore when the reaction being registered runs.
func (s *scopes) Grab() any { return s.current }

// Resumed makes the scope that was current when the reaction was
// registered current again.
func (s *scopes) Resumed(grabbed any) {
	if scope, ok := grabbed.(lang.Scope); ok {
		s.current = scope
	}
}

// Exited ends a reaction. The loop settles promises only from the top, where
// the root is current; where host code calls into the script from inside a
// reaction, enter puts back the scope it replaced.
func (s *scopes) Exited() { s.current = s.root }

// enter calls fn with scope current for the duration of the call. A
// JavaScript exception comes back as an error for the caller to record;
// an uncatchable one (an interrupt, a stack overflow) keeps unwinding.
func (r *run) enter(scope lang.Scope, fn goja.Callable, args ...goja.Value) (goja.Value, *goja.Exception) {
	prev := r.scopes.current
	r.scopes.current = scope
	defer func() { r.scopes.current = prev }()
	v, err := fn(goja.Undefined(), args...)
	if err == nil {
		return v, nil
	}
	if ex, ok := err.(*goja.Exception); ok {
		return nil, ex
	}
	panic(err)
}

// whenSettled calls fulfilled or rejected once v settles. v may be a
// promise, a thenable or a plain value, as with await. A call's own promise
// is watched directly (see pending); anything else through Promise.resolve
// and then, as await would.
func (r *run) whenSettled(v goja.Value, fulfilled, rejected func(goja.Value)) {
	if obj, ok := v.(*goja.Object); ok {
		if c := r.pending[obj]; c != nil {
			c.watchers = append(c.watchers, watcher{fulfilled, rejected})
			return
		}
	}
	onFulfilled := func(call goja.FunctionCall) goja.Value {
		fulfilled(call.Argument(0))
		return goja.Undefined()
	}
	onRejected := func(call goja.FunctionCall) goja.Value {
		rejected(call.Argument(0))
		return goja.Undefined()
	}
	p, err := r.builtins.resolve(r.builtins.Promise, v)
	if err == nil {
		_, err = r.builtins.then(p, r.vm.ToValue(onFulfilled), r.vm.ToValue(onRejected))
	}
	if err != nil {
		ex, ok := err.(*goja.Exception)
		if !ok {
			panic(err)
		}
		rejected(ex.Value())
	}
}

// must propagates an uncatchable error that settling a promise returned.
func must(err error) {
	if err != nil {
		panic(err)
	}
}
