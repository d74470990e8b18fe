package fakemodel

import (
	"fmt"
	"net"
	"time"
)

// Stop stops the server at once, as a model server that dies does: it
// stops listening and drops every connection, streams midway included, so
// that a CLI's next request is refused. Restart brings it back.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, ln := s.http, s.ln
	s.mu.Unlock()
	_ = ln.Close() // refused from now on, whether Serve has started or not
	_ = srv.Close()
}

// Restart listens again on the address the server had, after Stop.
func (s *Server) Restart() error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("fakemodel: listen again on %s: %w", s.addr, err)
	}
	s.listen(ln)
	return nil
}

// RateLimit answers every model request with 429 until the quota resets
// at until, saying when as a provider does: in a Retry-After header and in
// the error message ("retry after 5s"). Later requests are answered as
// usual. Requests lists the refused ones too, with the Err429 scenario.
func (s *Server) RateLimit(until time.Time) {
	s.mu.Lock()
	s.limitedUntil = until
	s.mu.Unlock()
}

// RateLimitFromNext is RateLimit with the reset d after the next request
// arrives, however long a client takes to start: that request and every
// one in the next d are refused.
func (s *Server) RateLimitFromNext(d time.Duration) {
	s.mu.Lock()
	s.limitNext = d
	s.mu.Unlock()
}
