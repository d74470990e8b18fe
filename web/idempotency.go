package web

import (
	"crypto/sha256"
	"sync"
)

// idempotency remembers which run each requestId started, so that a
// client retrying POST /api/runs after a lost answer gets the same run
// instead of a second one. It keeps the latest entries only; a retry comes
// soon after the first try.
type idempotency struct {
	mu    sync.Mutex
	limit int
	byID  map[string]startedRun
	order []string
	// inflight serializes starts that carry a requestId, so two racing
	// retries cannot both start a run.
	inflight sync.Mutex
}

// startedRun is what a start answered, and a digest of what it was asked.
type startedRun struct {
	digest   [32]byte
	response StartResponse
}

func newIdempotency(limit int) *idempotency {
	return &idempotency{limit: limit, byID: map[string]startedRun{}}
}

func (m *idempotency) lookup(requestID string) (startedRun, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[requestID]
	return r, ok
}

func (m *idempotency) remember(requestID string, body []byte, resp StartResponse) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[requestID]; !ok {
		m.order = append(m.order, requestID)
	}
	m.byID[requestID] = startedRun{digest: sha256.Sum256(body), response: resp}
	for len(m.order) > m.limit {
		delete(m.byID, m.order[0])
		m.order = m.order[1:]
	}
}
