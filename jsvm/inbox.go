package jsvm

import "sync"

// An inbox carries the answers of calls from the engine's goroutines to the
// run's loop. The engine's Done callbacks must not block, so posting never
// waits: the queue is unbounded, and a one-slot channel wakes the loop.
// An answer posted after the run has ended is simply never read.
type inbox struct {
	mu    sync.Mutex
	queue []func() error
	wake  chan struct{}
}

func newInbox() *inbox {
	return &inbox{wake: make(chan struct{}, 1)}
}

// post queues f to run on the loop. It never blocks.
func (b *inbox) post(f func() error) {
	b.mu.Lock()
	b.queue = append(b.queue, f)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default: // the loop has a wake-up pending already
	}
}

// take returns everything queued, oldest first.
func (b *inbox) take() []func() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	return q
}
