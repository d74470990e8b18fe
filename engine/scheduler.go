package engine

import (
	"context"
	"fmt"
	"sync"
)

// scheduler runs a run's live agent calls under its concurrency cap. Calls
// queue in the order the script made them, so a wide fan-out starts its
// items in order, and they run on at most cap long-lived workers: a
// goroutine per call would pay for a fresh stack each time, which cost a
// tenth of the engine's time per call. A worker is free again as soon as
// its call's executor returns; the journal write is finished by the
// journal's own goroutine.
//
// A burst of submits must wake as many workers as it queued calls. idle
// counts parked workers that no submit has claimed yet: a submit that
// signals claims one (idle--) at once, under the lock, rather than leaving
// it to the woken worker, which only runs later. Counting it down on wake-up
// instead made every submit of a burst signal the same parked worker, and a
// fan-out of 16 ran one call at a time.
type scheduler struct {
	mu    sync.Mutex
	wake  *sync.Cond
	gone  *sync.Cond // signalled when the last worker has returned
	queue []*agentCall
	// assigned are calls a submit gave a free worker, not yet picked up:
	// they hold their slot from the moment they were made, as on
	// Temporal, so the end of the script never finds them queued.
	assigned []*agentCall
	limit    int
	workers  int
	idle     int
	busy     int // workers with a call under way
	closed   bool
}

func newScheduler(limit int) *scheduler {
	s := &scheduler{limit: limit}
	s.wake = sync.NewCond(&s.mu)
	s.gone = sync.NewCond(&s.mu)
	return s
}

// submit queues c. It reports false once the scheduler is closed: the
// execution is over and c will not run. A call that finds no worker free
// is marked as waiting for one (agentCall.waited).
func (s *scheduler) submit(c *agentCall) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	switch {
	case s.idle > 0:
		// sync.Cond wakes waiters in the order they parked, one per
		// Signal, so each claimed worker is a different one.
		s.idle--
		s.assign(c)
		s.wake.Signal()
	case s.workers < s.limit:
		s.workers++
		s.assign(c)
		go s.work()
	default:
		c.waited = true
		s.queue = append(s.queue, c)
	}
	return true
}

// assign gives c a slot; the caller holds s.mu.
func (s *scheduler) assign(c *agentCall) {
	s.assigned = append(s.assigned, c)
	s.busy++
}

func (s *scheduler) work() {
	s.mu.Lock()
	var next *agentCall
	for {
		c := next
		next = nil
		if c == nil && len(s.assigned) > 0 {
			c = s.assigned[0]
			s.assigned[0] = nil
			s.assigned = s.assigned[1:]
		}
		if c == nil {
			if len(s.queue) == 0 && !s.closed {
				s.idle++
				// The submit that wakes us has already taken us off idle;
				// close wakes everyone and no longer counts.
				s.wake.Wait()
				continue
			}
			if s.closed {
				s.workers--
				if s.workers == 0 {
					s.gone.Broadcast()
				}
				s.mu.Unlock()
				return
			}
			c = s.pop()
		}
		s.mu.Unlock()
		handed := false
		c.handOff = func() { handed, next = true, s.take() }
		runGuarded(c)
		s.mu.Lock()
		if !handed {
			s.busy--
		}
	}
}

// take is how a worker whose call no longer holds its slot (its executor
// returned, or it never started) takes the next queued call, before the
// script hears how its own call ended, as a Temporal workflow starts the
// next call before the script runs on: which calls are under way when the
// script throws is then the same on both. It returns nil once closed.
func (s *scheduler) take() *agentCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy--
	if s.closed || len(s.queue) == 0 {
		return nil
	}
	return s.pop()
}

// pop takes the head of the queue; the caller holds s.mu. A call that
// waited for its slot is refused here if a sibling met the agent cap
// meanwhile (a call that found a slot is under way, as in the Node
// runtime).
func (s *scheduler) pop() *agentCall {
	c := s.queue[0]
	s.queue[0] = nil
	s.queue = s.queue[1:]
	s.busy++
	if c.waited {
		c.refused = c.batch.Err()
	}
	return c
}

// runGuarded runs c; a panic in it (in an executor, say, on an answer it
// did not expect) fails c's run, and the worker goes on with the next call.
func runGuarded(c *agentCall) {
	defer func() {
		if x := recover(); x != nil {
			c.settle(nil, c.run.recovered("agent call "+c.Path, x))
		}
	}()
	// The answer of this worker's last call goes out to the journal as
	// this one would start: once its write is done, the worker knows
	// whether the journal can still be written. If not, the call would
	// run and be paid for, and its answer lost; the run is pausing.
	if err := c.run.journal.WaitWritten(context.WithoutCancel(c.ctx)); err != nil {
		c.run.fail(fmt.Errorf("journal call %s: %w", c.Path, err))
		c.settle(nil, err)
		return
	}
	c.runLive()
}

// close stops the workers once their current calls return and hands back
// the calls still queued, which will not run in this execution.
func (s *scheduler) close() []*agentCall {
	queued, _ := s.closeCounting()
	return queued
}

// closeCounting is close, and also says how many workers have a call
// under way (see wait).
func (s *scheduler) closeCounting() (queued []*agentCall, busy int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		busy = s.busy
	}
	s.closed = true
	queued = s.queue
	s.queue = nil
	s.wake.Broadcast()
	return queued, busy
}

// wait waits, once the scheduler is closed, until every worker has
// returned from the call it had taken: the calls under way have ended.
func (s *scheduler) wait() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.workers > 0 {
		s.gone.Wait()
	}
}
