package star

import "sync"

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
type turns struct {
	mu    sync.Mutex
	held  bool
	queue []*waiter
}

// A waiter is a goroutine's place in line for the turn. It is queued once,
// by wake; the goroutine then blocks on ch until the turn is its own.
type waiter struct {
	t    *turns
	once sync.Once
	ch   chan struct{}
}

func (t *turns) waiter() *waiter { return &waiter{t: t, ch: make(chan struct{})} }

// wake queues w for the turn, or gives it the turn at once when nobody
// holds it. Calling it again does nothing, so an answer and a stop may
// both wake the same waiter.
func (w *waiter) wake() {
	w.once.Do(func() {
		t := w.t
		t.mu.Lock()
		defer t.mu.Unlock()
		if !t.held {
			t.held = true
			close(w.ch)
			return
		}
		t.queue = append(t.queue, w)
	})
}

// wait blocks until w holds the turn.
func (w *waiter) wait() { <-w.ch }

// take blocks until the caller holds the turn, behind everyone queued.
func (t *turns) take() {
	w := t.waiter()
	w.wake()
	w.wait()
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
	close(w.ch)
}
