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
// different order (and an agent cap would fall on different calls). So the
// turn passes first-in first-out, the way JavaScript's microtask queue
// runs promise continuations:
//
//   - parallel and pipeline queue their branches in index order before the
//     caller gives up its turn, so branch 0 runs first, then branch 1, ...;
//   - a thread that calls the engine gives up its turn and queues again
//     once the answer is in; an answer at hand (a replayed call) queues it
//     at once, behind the threads already waiting, as an await on a
//     resolved promise does.
//
// The only order left to chance is the order answers arrive in, which is
// the agents' and is the same in both languages.
//
// Goroutines never wait on their own: a branch is started with the engine's
// Scheduler and sleeps in a lang.Wake, so that under a durable-execution
// engine the branches are its deterministic coroutines.
type turns struct {
	sched lang.Scheduler
	mu    sync.Mutex
	held  bool
	queue []*waiter
}

// A waiter is a goroutine's place in line for the turn. It is queued once,
// by wake; the goroutine then sleeps on its Wake until the turn is its own.
type waiter struct {
	t       *turns
	queued  bool
	granted bool
	wk      lang.Wake
}

func (t *turns) waiter() *waiter { return &waiter{t: t, wk: t.sched.NewWake()} }

// wake queues w for the turn, or gives it the turn at once when nobody
// holds it. Calling it again does nothing, so an answer and a stop may
// both wake the same waiter.
func (w *waiter) wake() {
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
	t.queue = append(t.queue, w)
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

// pass gives the turn to the first waiter in line, or frees it.
func (t *turns) pass() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.queue) == 0 {
		t.held = false
		return
	}
	w := t.queue[0]
	t.queue[0] = nil
	t.queue = t.queue[1:]
	w.grant()
}
