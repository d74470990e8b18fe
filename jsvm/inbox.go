package jsvm

import (
	"sync"

	"github.com/dynworkflow/dynworkflow/lang"
)

// An inbox carries the answers of calls from the engine to the run's loop.
// The engine's Done callbacks must not block, so posting never waits: the
// queue is unbounded, and a Wake from the engine's Scheduler rouses the
// loop. An answer posted after the run has ended is simply never read.
type inbox struct {
	mu    sync.Mutex
	queue []func() error
	wake  lang.Wake
}

func newInbox(wake lang.Wake) *inbox {
	return &inbox{wake: wake}
}

// post queues f to run on the loop. It never blocks.
func (b *inbox) post(f func() error) {
	b.mu.Lock()
	b.queue = append(b.queue, f)
	b.mu.Unlock()
	b.wake.Notify()
}

// take returns everything queued, oldest first.
func (b *inbox) take() []func() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	return q
}
