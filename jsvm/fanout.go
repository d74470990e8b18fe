package jsvm

import (
	"strconv"

	"github.com/dop251/goja"
)

const wrapHint = "parallel() takes functions that return promises; wrap each call: () => agent(...)"

// parallel(thunks) calls every function at once, each in its own branch
// scope, and returns a promise of their results in input order once all
// have settled. A branch that throws yields null: parallel never rejects.
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

	p, resolve, _ := r.vm.NewPromise()
	results := make([]any, len(thunks))
	pending := len(thunks)
	settle := func(i int, v goja.Value) {
		results[i] = v
		if pending--; pending == 0 {
			must(resolve(r.vm.NewArray(results...)))
		}
	}
	for i, thunk := range thunks {
		fail := func(reason goja.Value) {
			r.env.BranchFailed(branches[i], r.thrown(reason))
			settle(i, goja.Null())
		}
		v, ex := r.enter(branches[i], thunk)
		if ex != nil {
			fail(ex.Value())
			continue
		}
		r.whenSettled(v, func(v goja.Value) { settle(i, v) }, fail)
	}
	if len(thunks) == 0 {
		must(resolve(r.vm.NewArray()))
	}
	return r.vm.ToValue(p)
}

// pipeline(items, ...stages) sends every item through the stages on its
// own: stage k+1 of an item starts as soon as its stage k is done, whatever
// the other items are doing. A stage is called as stage(prev, item, index),
// where prev is the item itself for the first stage. A stage that throws
// makes its item null and skips the item's remaining stages.
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

	p, resolve, _ := r.vm.NewPromise()
	results := make([]any, len(items))
	pending := len(items)
	settle := func(i int, v goja.Value) {
		results[i] = v
		if pending--; pending == 0 {
			must(resolve(r.vm.NewArray(results...)))
		}
	}
	var step func(i, k int, prev goja.Value)
	step = func(i, k int, prev goja.Value) {
		fail := func(reason goja.Value) {
			r.env.BranchFailed(itemScopes[i], r.thrown(reason))
			settle(i, goja.Null())
		}
		scope := r.env.Stage(itemScopes[i], k)
		v, ex := r.enter(scope, stages[k], prev, items[i], r.vm.ToValue(i))
		if ex != nil {
			fail(ex.Value())
			return
		}
		r.whenSettled(v, func(v goja.Value) {
			if k+1 < len(stages) {
				step(i, k+1, v)
			} else {
				settle(i, v)
			}
		}, fail)
	}
	for i, item := range items {
		step(i, 0, item)
	}
	if len(items) == 0 {
		must(resolve(r.vm.NewArray()))
	}
	return r.vm.ToValue(p)
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
