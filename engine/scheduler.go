package engine

import "sync"

// scheduler runs a run's live agent calls under its concurrency cap. Calls
// queue in the order the script made them, so a wide fan-out starts its
// items in order, and they run on at most cap long-lived workers: a
// goroutine per call would pay for a fresh stack each time, which cost a
// tenth of the engine's time per call. A worker is free again as soon as
// its call's executor returns; the journal write is finished by the
// journal's own goroutine.
type scheduler struct {
	mu      sync.Mutex
	wake    *sync.Cond
	queue   []*agentCall
	limit   int
	workers int
	idle    int
	closed  bool
}

func newScheduler(limit int) *scheduler {
	s := &scheduler{limit: limit}
	s.wake = sync.NewCond(&s.mu)
	return s
}

// submit queues c. It reports false once the scheduler is closed: the
// execution is over and c will not run.
func (s *scheduler) submit(c *agentCall) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.queue = append(s.queue, c)
	switch {
	case s.idle > 0:
		s.wake.Signal()
	case s.workers < s.limit:
		s.workers++
		go s.work()
	}
	return true
}

func (s *scheduler) work() {
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closed {
			s.idle++
			s.wake.Wait()
			s.idle--
		}
		if s.closed {
			s.workers--
			s.mu.Unlock()
			return
		}
		c := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.mu.Unlock()
		c.runLive()
	}
}

// close stops the workers once their current calls return and hands back
// the calls still queued, which will not run in this execution.
func (s *scheduler) close() []*agentCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	queued := s.queue
	s.queue = nil
	s.wake.Broadcast()
	return queued
}
