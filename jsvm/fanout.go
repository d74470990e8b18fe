package jsvm

import (
	"strconv"

	"github.com/dop251/goja"

	"github.com/dynworkflow/dynworkflow/lang"
)

const wrapHint = "parallel() takes functions that return promises; wrap each call: () => agent(...)"

// parallel(thunks) calls every function at once, each in its own branch
// scope, and returns a promise of their results in input order once all
// have settled. A branch that throws yields null, unless it throws a
// non-recoverable error of the engine (the agent cap, the token budget,
// ...): then the promise rejects with it at once (see lang.NonRecoverable).
func (r *run) parallel(call goja.FunctionCall) goja.Value {
	arg := call.Argument(0)
	if kind(arg) != "an array" {
		r.typeError("parallel() takes an array of functions, not %s; %s", kind(arg), wrapHint)
	}
	// The item cap is checked on the length, before a single item is
	// read: a list of 50 million would take seconds and gigabytes to copy
	// only to be refused.
	branches, err := r.env.Parallel(r.scopes.current, length(arg.(*goja.Object)))
	if err != nil {
		r.throw(err)
	}
	items := r.elements(arg.(*goja.Object))
	thunks := make([]goja.Callable, len(items))
	for i, v := range items {
		fn, ok := goja.AssertFunction(v)
		if !ok {
			r.typeError("parallel(): item %d is %s, not a function; %s", i, kind(v), wrapHint)
		}
		thunks[i] = fn
	}

	f, p := r.newFanout(len(thunks))
	for i, thunk := range thunks {
		f.enter(branches[i])
		v, ex := r.enter(branches[i], thunk)
		if ex != nil {
			f.fail(i, branches[i], ex.Value())
			continue
		}
		r.whenSettled(v, func(v goja.Value) { f.give(i, v) }, func(reason goja.Value) { f.fail(i, branches[i], reason) })
	}
	return p
}

// pipeline(items, ...stages) sends every item through the stages on its
// own: stage k+1 of an item starts as soon as its stage k is done, whatever
// the other items are doing. A stage is called as stage(prev, item, index),
// where prev is the item itself for the first stage. A stage that throws
// makes its item null and skips the item's remaining stages; a
// non-recoverable error rejects the whole pipeline, as in parallel.
func (r *run) pipeline(call goja.FunctionCall) goja.Value {
	arg := call.Argument(0)
	if kind(arg) != "an array" {
		r.typeError("pipeline() takes an array of items first, not %s", kind(arg))
	}
	if len(call.Arguments) < 2 {
		r.typeError("pipeline() needs at least one stage: pipeline(items, item => agent(...))")
	}
	stages := make([]goja.Callable, len(call.Arguments)-1)
	for k, v := range call.Arguments[1:] {
		fn, ok := goja.AssertFunction(v)
		if !ok {
			r.typeError("pipeline(): stage %d is %s, not a function", k, kind(v))
		}
		stages[k] = fn
	}
	// The cap before the copy, as in parallel.
	itemScopes, err := r.env.Pipeline(r.scopes.current, length(arg.(*goja.Object)), len(stages))
	if err != nil {
		r.throw(err)
	}
	items := r.elements(arg.(*goja.Object))

	f, p := r.newFanout(len(items))
	var step func(i, k int, prev goja.Value)
	step = func(i, k int, prev goja.Value) {
		fail := func(reason goja.Value) { f.fail(i, itemScopes[i], reason) }
		scope := r.env.Stage(itemScopes[i], k)
		f.enter(scope)
		v, ex := r.enter(scope, stages[k], prev, items[i], r.vm.ToValue(i))
		if ex != nil {
			fail(ex.Value())
			return
		}
		r.whenSettled(v, func(v goja.Value) {
			if k+1 < len(stages) {
				step(i, k+1, v)
			} else {
				f.give(i, v)
			}
		}, fail)
	}
	for i, item := range items {
		step(i, 0, item)
	}
	return p
}

// A fanout is a parallel() or pipeline() in flight: its promise, its
// branches' results so far, and its lang.Batch, which the calls made in
// its branches carry (see run.agent).
type fanout struct {
	r       *run
	batch   *lang.Batch
	scopes  []lang.Scope // those in r.batches, until every branch is done
	results []any
	left    int  // branches still running
	settled bool // the promise is resolved or rejected
	resolve func(any) error
	reject  func(any) error
}

// newFanout returns a fanout of n branches and its promise, resolved at
// once when there is no branch.
func (r *run) newFanout(n int) (*fanout, goja.Value) {
	p, resolve, reject := r.vm.NewPromise()
	f := &fanout{r: r, batch: &lang.Batch{}, results: make([]any, n), left: n, resolve: resolve, reject: reject}
	if n == 0 {
		f.settled = true
		must(resolve(r.vm.NewArray()))
	}
	return f, r.vm.ToValue(p)
}

// enter notes that the calls made in scope belong to f's batch.
func (f *fanout) enter(scope lang.Scope) {
	f.r.batches[scope] = f.batch
	f.scopes = append(f.scopes, scope)
}

// give records branch i's result.
func (f *fanout) give(i int, v goja.Value) {
	f.results[i] = v
	f.left--
	if f.left > 0 {
		return
	}
	for _, s := range f.scopes {
		delete(f.r.batches, s)
	}
	if !f.settled {
		f.settled = true
		must(f.resolve(f.r.vm.NewArray(f.results...)))
	}
}

// fail records that branch i, in scope, threw reason: the branch is null,
// or the whole fan-out rejects with reason when it is non-recoverable. The
// branches still running go on; what they give is dropped.
func (f *fanout) fail(i int, scope lang.Scope, reason goja.Value) {
	if err := f.r.nonRecoverable(reason); err != nil {
		if lang.CancelsQueued(err) {
			f.batch.Cancel(err)
		}
		if !f.settled {
			f.settled = true
			must(f.reject(reason))
		}
		f.give(i, goja.Null())
		return
	}
	f.r.env.BranchFailed(scope, f.r.thrown(reason))
	f.give(i, goja.Null())
}

// nonRecoverable returns the engine error reason was made from when it is
// one that ends a fan-out, else nil. Only the engine's errors can be: a
// value the script threw itself, whatever its code, is recoverable.
func (r *run) nonRecoverable(reason goja.Value) error {
	obj, ok := reason.(*goja.Object)
	if !ok {
		return nil
	}
	if ee, ok := r.engineErrors[obj]; ok {
		return lang.NonRecoverable(ee.err)
	}
	return nil
}

// length is an array's length.
func length(arr *goja.Object) int {
	return int(arr.Get("length").ToInteger())
}

// elements returns the elements of a JavaScript array; holes are undefined.
func (r *run) elements(arr *goja.Object) []goja.Value {
	out := make([]goja.Value, length(arr))
	for i := range out {
		if out[i] = arr.Get(strconv.Itoa(i)); out[i] == nil {
			out[i] = goja.Undefined()
		}
	}
	return out
}
