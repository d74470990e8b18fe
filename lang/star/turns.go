package star

import (
	"context"
	"sync"

	"github.com/dynworkflow/dynworkflow/lang"
)

// turns is the run's interpreter lock, handed from thread to thread in a
// fixed order. Starlark values are not safe for concurrent use, so one
// goroutine runs Starlark at a time; which one runs next must not depend on
// the Go scheduler either, or a resumed run would make its calls in a
// different order (and an agent cap would fall on different calls). The
// order is JavaScript's, so that the twins of a workflow in the two
// languages make the same calls in the same order:
//
//   - a fan-out enters its branches one after the other, as parallel()
//     calls its functions: branch 0 runs until it waits (for an answer, or
//     for a fan-out of its own, whose branches it enters first), then
//     branch 1, and so on; the turn goes back to the thread entering them
//     before anyone else (entering);
//   - then the threads whose fan-out has settled, in the order they
//     settled, as the continuations of settled promises run in
//     JavaScript's microtask queue (soon);
//   - then the threads whose call has been answered, in the order the
//     answers came, as the answers reach JavaScript's event loop: each one
//     runs, with every thread it lets go on, until all wait again, before
//     the next answer is taken. An answer at hand (a replayed call, a
//     limit) queues at once, as our JavaScript host posts it to its loop.
//
// The only order left to chance is the order answers arrive in, which is
// the agents' and is the same in both languages.
//
// Goroutines never wait on their own: a branch is started with the engine's
// Scheduler and sleeps in a lang.Wake, so that under a durable-execution
// engine the branches are its deterministic coroutines.
type turns struct {
	sched    lang.Scheduler
	mu       sync.Mutex
	held     bool
	entering []*waiter // innermost last
	soon     []*waiter
	answered []*waiter
}

// A waiter is a goroutine's place in line for the turn. It is queued once,
// by wake, wakeSoon or enter; the goroutine then sleeps on its Wake until
// the turn is its own.
type waiter struct {
	t       *turns
	queued  bool
	granted bool
	wk      lang.Wake
}

func (t *turns) waiter() *waiter { return &waiter{t: t, wk: t.sched.NewWake()} }

// wake queues w behind the threads whose calls were answered, or gives it
// the turn at once when nobody holds it. Calling it again does nothing,
// so an answer and a stop may both wake the same waiter.
func (w *waiter) wake() { w.queue(&w.t.answered) }

// wakeSoon queues w behind the threads whose fan-out has settled.
func (w *waiter) wakeSoon() { w.queue(&w.t.soon) }

func (w *waiter) queue(line *[]*waiter) {
	t := w.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if w.queued {
		return
	}
	w.queued = true
	if !t.held {
		t.held = true
		w.grant()
		return
	}
	*line = append(*line, w)
}

// grant hands w the turn; the caller holds t.mu.
func (w *waiter) grant() {
	w.granted = true
	w.wk.Notify()
}

func (w *waiter) hasTurn() bool {
	w.t.mu.Lock()
	defer w.t.mu.Unlock()
	return w.granted
}

// waitOrStop blocks until w holds the turn, or ctx is done first; ctx is
// the context the Scheduler gave the calling goroutine.
func (w *waiter) waitOrStop(ctx context.Context) error {
	for !w.hasTurn() {
		if err := w.wk.Wait(ctx); err != nil && !w.hasTurn() {
			return err
		}
	}
	return nil
}

// wait blocks until w holds the turn, even when ctx is done.
func (w *waiter) wait(ctx context.Context) { _ = w.waitOrStop(context.WithoutCancel(ctx)) }

// take blocks until the caller holds the turn, behind everyone queued.
func (t *turns) take(ctx context.Context) {
	w := t.waiter()
	w.wake()
	w.wait(ctx)
}

// enter hands the caller's turn to branch, a goroutine waiting for its
// first turn, and blocks until the turn comes back: once branch waits, or
// is done. ctx is the caller's.
func (t *turns) enter(ctx context.Context, branch *waiter) {
	back := t.waiter()
	t.mu.Lock()
	back.queued = true
	t.entering = append(t.entering, back)
	branch.queued = true
	branch.grant()
	t.mu.Unlock()
	back.wait(ctx)
}

// pass gives the turn to the first waiter in line, or frees it.
func (t *turns) pass() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.entering); n > 0 {
		w := t.entering[n-1]
		t.entering[n-1] = nil
		t.entering = t.entering[:n-1]
		w.grant()
		return
	}
	for _, line := range []*[]*waiter{&t.soon, &t.answered} {
		if len(*line) > 0 {
			w := (*line)[0]
			(*line)[0] = nil
			*line = (*line)[1:]
			w.grant()
			return
		}
	}
	t.held = false
}
