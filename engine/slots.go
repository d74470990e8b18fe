package engine

import "sync"

// slots is the run's concurrency cap. Calls waiting for a slot queue in the
// order the script made them, so a wide fan-out starts its items in order,
// and a waiting call holds no goroutine: the call that frees a slot hands it
// to the next one.
type slots struct {
	mu      sync.Mutex
	free    int
	waiting []*agentCall
	closed  bool
}

func newSlots(n int) *slots { return &slots{free: n} }

// acquire gives c a slot (true) or queues it until one frees up (false).
// After close it refuses (ok false): the execution is over.
func (s *slots) acquire(c *agentCall) (now, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, false
	}
	if s.free > 0 {
		s.free--
		return true, true
	}
	s.waiting = append(s.waiting, c)
	return false, true
}

// release frees a slot, or hands it straight to the next waiting call,
// which the caller must then start.
func (s *slots) release() *agentCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) > 0 && !s.closed {
		next := s.waiting[0]
		s.waiting[0] = nil
		s.waiting = s.waiting[1:]
		return next
	}
	s.free++
	return nil
}

// close refuses new calls and returns the ones still waiting, which will
// never run in this execution.
func (s *slots) close() []*agentCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	waiting := s.waiting
	s.waiting = nil
	return waiting
}
