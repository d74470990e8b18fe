package star

import (
	"context"
	"fmt"

	"go.starlark.net/starlark"

	"github.com/dynworkflow/dynworkflow/lang"
)

// parallel and pipeline fan out. Every branch runs on its own thread in its
// own goroutine, with its own scope on the thread, and takes its turn to
// run (see turns); the caller gives up its turn until every branch is done.
//
// What the branches are given, functions and items, is frozen first, and
// with a function everything it captures: branches interleave in an order
// that depends on which agent answers first, so state two of them could
// change would make a resumed run differ from the first. A branch that
// mutates such state fails with Starlark's own error ("cannot append to
// frozen list"); values a branch makes itself are its own to change.

// parallel(fns) calls every function with no arguments; parallel(items, fn)
// calls fn(item, index) for every item (fn(item) when fn takes one
// parameter), which cannot fall into the late binding of a lambda built in
// a loop. Results come back in input order once all branches are done; a
// branch that fails gives None and is reported to the engine, unless it
// fails with an error that ends the fan-out (see fanOut).
func (r *run) parallel(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	scope, err := scopeOf(th, b.Name())
	if err != nil {
		return nil, err
	}
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("parallel() takes no keyword arguments")
	}
	type branch struct {
		fn   starlark.Callable
		args starlark.Tuple
	}
	if len(args) != 1 && len(args) != 2 {
		return nil, fmt.Errorf("parallel() takes a list of functions, or a list of items and a function, not %d arguments", len(args))
	}
	want := "a list of functions"
	if len(args) == 2 {
		want = "a list of items"
	}
	// The item cap is checked on the length, before a single item is
	// read: range(50000000) would take seconds and gigabytes to list only
	// to be refused.
	n, err := count("parallel()", want, args[0])
	if err != nil {
		return nil, err
	}
	scopes, err := r.env.Parallel(scope, n)
	if err != nil {
		return nil, err
	}
	var branches []branch
	switch len(args) {
	case 1:
		fns := elements(args[0])
		for i, v := range fns {
			fn, ok := v.(starlark.Callable)
			if !ok {
				return nil, fmt.Errorf("parallel(): item %d is %s, not a function; pass items and a function instead: parallel(items, lambda item, i: agent(...))", i, typeOf(v))
			}
			branches = append(branches, branch{fn: fn})
		}
	case 2:
		items := elements(args[0])
		fn, ok := args[1].(starlark.Callable)
		if !ok {
			return nil, fmt.Errorf("parallel(items, fn): fn is %s, not a function", typeOf(args[1]))
		}
		for i, item := range items {
			branches = append(branches, branch{fn: fn, args: fit(fn, item, starlark.MakeInt(i))})
		}
	}
	for _, br := range branches {
		br.fn.Freeze()
		br.args.Freeze()
	}
	results, err := r.fanOut(th, scopes, func(ctx context.Context, i int) (starlark.Value, error) {
		th, release := r.newThread(ctx, fmt.Sprintf("%s/%d", th.Name, i), scopes[i])
		defer release()
		return starlark.Call(th, branches[i].fn, branches[i].args, nil)
	})
	if err != nil {
		return nil, err
	}
	return starlark.NewList(results), nil
}

// pipeline(items, stage, ...) sends every item through the stages on its
// own: stage k+1 of an item starts as soon as its stage k is done, whatever
// the other items are doing. A stage is called as stage(prev, item, index),
// or with as many of those as it takes, where prev is the item itself for
// the first stage. A stage that fails makes its item None and skips the
// item's remaining stages, unless it fails with an error that ends the
// fan-out (see fanOut).
func (r *run) pipeline(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	scope, err := scopeOf(th, b.Name())
	if err != nil {
		return nil, err
	}
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("pipeline() takes no keyword arguments")
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("pipeline() takes a list of items and then the stage functions")
	}
	n, err := count("pipeline()", "a list of items first", args[0])
	if err != nil {
		return nil, err
	}
	if len(args) < 2 {
		return nil, fmt.Errorf("pipeline() needs at least one stage: pipeline(items, lambda item: agent(...))")
	}
	stages := make([]starlark.Callable, len(args)-1)
	for k, v := range args[1:] {
		fn, ok := v.(starlark.Callable)
		if !ok {
			return nil, fmt.Errorf("pipeline(): stage %d is %s, not a function", k, typeOf(v))
		}
		stages[k] = fn
	}
	// The cap before the copy, as in parallel.
	itemScopes, err := r.env.Pipeline(scope, n, len(stages))
	if err != nil {
		return nil, err
	}
	items := elements(args[0])
	for _, fn := range stages {
		fn.Freeze()
	}
	for _, item := range items {
		item.Freeze()
	}
	results, err := r.fanOut(th, itemScopes, func(ctx context.Context, i int) (starlark.Value, error) {
		prev := items[i]
		for k, stage := range stages {
			sc := r.env.Stage(itemScopes[i], k)
			th, release := r.newThread(ctx, fmt.Sprintf("%s/%d/s%d", th.Name, i, k), sc)
			v, err := starlark.Call(th, stage, fit(stage, prev, items[i], starlark.MakeInt(i)), nil)
			release()
			if err != nil {
				return nil, err
			}
			prev = v
		}
		return prev, nil
	})
	if err != nil {
		return nil, err
	}
	return starlark.NewList(results), nil
}

// fanOut runs body(i) for every scope, each in its own branch of the
// engine's Scheduler taking turns with the others, and waits for all of
// them. The caller (thread th) enters the branches in index order, each
// running until it first waits, as JavaScript calls parallel()'s functions
// (see turns). A body that fails gives None, and the engine hears why;
// one that fails with a non-recoverable error (see lang.NonRecoverable)
// ends the fan-out at once with that error, while the branches still
// running go on and what they give is dropped, as when a JavaScript
// Promise.all rejects; when the run is stopping, the fan-out fails too.
func (r *run) fanOut(th *starlark.Thread, scopes []lang.Scope, body func(ctx context.Context, i int) (starlark.Value, error)) ([]starlark.Value, error) {
	results := make([]starlark.Value, len(scopes))
	if len(scopes) == 0 {
		return results, nil
	}
	ctx := ctxOf(th, r.ctx)
	// A branch that is a builtin (parallel(items, agent)) fails at no line
	// of its own: its error is placed at the fan-out.
	here := th.CallStack()
	// The calls of the branches carry the batch, which their threads'
	// contexts hand on to every call made on them.
	batch := &lang.Batch{}
	branchCtx := lang.WithBatch(ctx, batch)
	settled := r.turn.waiter()
	// Touched only by the holder of the turn.
	left, over := len(scopes), false
	var failure *lang.Error
	settle := func(err *lang.Error) {
		if !over {
			over, failure = true, err
			settled.wakeSoon()
		}
	}
	for i := range scopes {
		w := r.turn.waiter()
		r.turn.sched.Go(branchCtx, func(ctx context.Context) {
			w.wait(ctx)
			defer r.turn.pass()
			v, err := body(ctx, i)
			if err != nil {
				v = starlark.None
				le := r.scriptError(err)
				if le.Line == 0 {
					locate(le, here)
				}
				switch fatal := lang.NonRecoverable(err); {
				case r.ctx.Err() != nil || r.ended.Load():
				case fatal != nil:
					if lang.CancelsQueued(fatal) {
						batch.Cancel(fatal)
					}
					settle(le)
				default:
					r.env.BranchFailed(scopes[i], le)
				}
			}
			results[i] = v
			if left--; left == 0 {
				settle(nil)
			}
		})
		r.turn.enter(ctx, w)
	}
	r.turn.pass()
	settled.wait(ctx)
	if r.ctx.Err() != nil {
		return nil, r.stopped()
	}
	if failure != nil {
		return nil, branchFailure{failure}
	}
	return results, nil
}

// count checks that v can be fanned out over (a list, tuple or other
// iterable, not a dict) and counts its elements, without listing them when
// it knows its length.
func count(fn, want string, v starlark.Value) (int, error) {
	seq, ok := v.(starlark.Iterable)
	if !ok {
		return 0, fmt.Errorf("%s takes %s, not %s", fn, want, typeOf(v))
	}
	if _, isDict := v.(*starlark.Dict); isDict {
		return 0, fmt.Errorf("%s takes %s, not a dict; pass d.items() or d.keys()", fn, want)
	}
	if n := starlark.Len(v); n >= 0 {
		return n, nil
	}
	n := 0
	it := seq.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		n++
	}
	return n, nil
}

// elements lists the elements of an iterable that count accepted.
func elements(v starlark.Value) []starlark.Value {
	var out []starlark.Value
	if n := starlark.Len(v); n > 0 {
		out = make([]starlark.Value, 0, n)
	}
	it := v.(starlark.Iterable).Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		out = append(out, x)
	}
	return out
}

// fit trims args to what fn accepts, so that a stage may take just
// (prev) or (prev, item) as in JavaScript. A builtin gets the first
// argument only, so that parallel(prompts, agent) reads as it should.
func fit(fn starlark.Callable, args ...starlark.Value) starlark.Tuple {
	f, ok := fn.(*starlark.Function)
	if !ok {
		return starlark.Tuple(args[:min(1, len(args))])
	}
	if f.HasVarargs() {
		return args
	}
	n := f.NumParams() - f.NumKwonlyParams()
	if f.HasKwargs() {
		n--
	}
	return starlark.Tuple(args[:max(0, min(n, len(args)))])
}
