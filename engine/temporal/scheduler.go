package temporal

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/lang"
)

// coroutines is the lang.Scheduler of a script inside a Temporal workflow.
// A branch is a workflow coroutine (workflow.Go) and a wait is
// workflow.Await: the SDK runs one coroutine at a time, switching only where
// one waits, in an order fixed by the workflow's history, so a replay on
// another worker takes the same turns.
//
// Each coroutine blocks through its own workflow.Context, which travels in
// the context.Context the host passes around. Cancelling that
// context.Context is how the workflow stops a script: it happens in
// workflow code (a signal handler, the watcher of Temporal's cancellation),
// so the moment it happens is deterministic too.
type coroutines struct{}

var _ lang.Scheduler = coroutines{}

// wfKey keys the coroutine's workflow.Context in a context.Context.
type wfKey struct{}

// withWorkflow returns ctx carrying wctx, the workflow.Context of the
// coroutine that will use it.
func withWorkflow(ctx context.Context, wctx workflow.Context) context.Context {
	return context.WithValue(ctx, wfKey{}, wctx)
}

// workflowOf returns the workflow.Context ctx carries. A host that waits
// with a ctx this package did not give it has broken the Scheduler
// contract; that is a bug, and it panics.
func workflowOf(ctx context.Context) workflow.Context {
	wctx, ok := ctx.Value(wfKey{}).(workflow.Context)
	if !ok {
		panic("temporal: a script host waited with a context the Scheduler did not give it")
	}
	return wctx
}

func (coroutines) Go(ctx context.Context, fn func(ctx context.Context)) {
	workflow.Go(workflowOf(ctx), func(wctx workflow.Context) { fn(withWorkflow(ctx, wctx)) })
}

func (coroutines) NewWake() lang.Wake { return &wake{} }

// wake is a flag that workflow.Await watches. Notify is called from
// workflow code only (the coroutines that settle calls), so it needs no lock.
type wake struct{ notified bool }

func (w *wake) Notify() { w.notified = true }

func (w *wake) Wait(ctx context.Context) error {
	err := workflow.Await(workflowOf(ctx), func() bool { return w.notified || ctx.Err() != nil })
	switch {
	case w.notified:
		w.notified = false
		return nil
	case ctx.Err() != nil:
		return context.Cause(ctx)
	default:
		// The hosts' contexts hang off a disconnected workflow context, so
		// Temporal's cancellation reaches them only through ctx; this is a
		// safety net.
		return fmt.Errorf("%w: %v", engine.ErrStopped, err)
	}
}
