package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Under serve, many runs share one process, so a fault in one of them
// must end that run and nothing else. Every goroutine a run starts (its
// script's, its calls', its child workflows', its journal callbacks',
// its branches') recovers a panic at its boundary, and the run fails with
// an error that says what happened: the journal is left as a crash would
// leave it, every finished call in it, and the run can be resumed. What no
// recover catches (a Go stack overflow) is kept out before it happens:
// the nesting limits of lang.

// ErrInternal is matched (with errors.Is) by the error of a run that failed
// on a panic.
var ErrInternal = errors.New("internal error")

// CodeInternal is the code of such a run's error.
const CodeInternal = "INTERNAL_ERROR"

// crashCause ends an execution after a panic in one of its goroutines.
type crashCause struct{ err *Error }

func (c *crashCause) Error() string { return c.err.Error() }
func (c *crashCause) Unwrap() error { return c.err }

// recovered fails the run on the panic x, recovered in where, and returns
// the run's error. It logs the stack: the panic is a bug to report.
func (r *Run) recovered(where string, x any) *Error {
	err := newError(CodeInternal, ErrInternal, fmt.Sprintf(
		"internal error in %s: %v; this is a bug in dynworkflow or a library it uses, not in the script: "+
			"the run failed, every finished call of it is journaled (resume it to go on), and no other run was affected", where, x))
	r.rt.log.Error("a run failed on a panic", "run", r.id, "where", where, "panic", fmt.Sprint(x), "stack", string(debug.Stack()))
	r.cancel(&crashCause{err})
	return err
}

// guard runs fn, failing the run if it panics.
func (r *Run) guard(where string, fn func()) {
	defer func() {
		if x := recover(); x != nil {
			r.recovered(where, x)
		}
	}()
	fn()
}

// onceDone makes sure done is called at most once: a call whose goroutine
// panicked after answering must not answer again.
func onceDone(done lang.Done) lang.Done {
	var once sync.Once
	return func(answer json.RawMessage, err error) { once.Do(func() { done(answer, err) }) }
}

// runGoroutines is the Scheduler of a local run: lang.Goroutines, whose
// branches fail the run rather than the process when they panic.
type runGoroutines struct {
	lang.Goroutines
	run *Run
}

func (g runGoroutines) Go(ctx context.Context, fn func(ctx context.Context)) {
	go g.run.guard("a branch of the script", func() { fn(ctx) })
}
