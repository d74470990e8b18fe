package lang

import (
	"context"
	"errors"
	"sync"
)

// What a failed branch does to its fan-out is decided here, once, for both
// hosts and every backend that runs them. The engine's errors say which
// kind they are; the rule that follows is the Node runtime's (its
// parallel() and pipeline() in src/workflow.ts):
//
//   - a branch (a parallel() function, a pipeline() item) that fails with a
//     recoverable error becomes null and the others go on;
//   - a non-recoverable error (the agent cap, the token budget, a provider's
//     usage limit, ...) ends the fan-out at once: it throws that error,
//     which the script may catch (JavaScript) or which fails the run
//     (Starlark, which has no try); the branches already running go on,
//     and their results are dropped (when the error ends the script, the
//     engine still lets their calls under way finish and keeps their
//     answers: callpolicy.FinishesCallsUnderWay);
//   - the agent cap also cancels the fan-out's own calls still waiting for a
//     concurrency slot (its Batch): they end with the same error instead of
//     starting.

// NonRecoverable returns the error that ends a whole fan-out when err ends
// one of its branches, or nil when err only makes that branch null. Only
// an engine error can: one with a Recoverable method that says false
// (engine.Error), wherever err wraps it; that error is returned.
func NonRecoverable(err error) error {
	var r interface {
		error
		Recoverable() bool
	}
	if errors.As(err, &r) && !r.Recoverable() {
		return r
	}
	return nil
}

// CancelsQueued reports whether err, ending a branch, also cancels the
// calls its fan-out still has queued (see Batch).
func CancelsQueued(err error) bool {
	var c interface{ CancelsQueued() bool }
	return errors.As(err, &c) && c.CancelsQueued()
}

// A Batch is the calls made in the branches of one parallel() or
// pipeline(), not counting those of a fan-out nested in them, which has
// its own. A host starts every such call with a context that carries the
// batch (WithBatch), and cancels the batch when a branch fails with an
// error for which CancelsQueued holds; the engine then ends each call of
// the batch that has not started yet with that error, instead of
// starting it. The zero Batch is ready to use.
type Batch struct {
	mu  sync.Mutex
	err error
}

// Cancel cancels b with err; the first error stays.
func (b *Batch) Cancel(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
	}
}

// Err is the error b was cancelled with, or nil. A nil Batch is never
// cancelled.
func (b *Batch) Err() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

type batchKey struct{}

// WithBatch returns ctx carrying b, the batch of the calls started with it.
func WithBatch(ctx context.Context, b *Batch) context.Context {
	return context.WithValue(ctx, batchKey{}, b)
}

// BatchOf returns the batch ctx carries, or nil for a call made outside
// any fan-out.
func BatchOf(ctx context.Context) *Batch {
	b, _ := ctx.Value(batchKey{}).(*Batch)
	return b
}
