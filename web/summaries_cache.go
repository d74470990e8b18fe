package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
)

// summariesCache keeps the encoded run summaries the overview and the run
// list answer with. Listing a project reads every run's snapshot (about
// 40 ms for 1,000 runs), far too slow to do per request of dashboards
// polling at 200 requests/s; so requests get the latest listing, and a
// goroutine refreshes it in the background when it is behind the bus's
// sequence (at most every minAge) or older than maxAge (runs changed by
// other processes publish no event here). Each listing carries the
// sequence read before it was made: it reflects at least the events up to
// there, so a client streaming from that sequence misses nothing.
//
// After a change made through this server (start, delete, ...) the next
// request waits for a fresh listing, so a client sees its own change.
type summariesCache struct {
	rt        *engine.Runtime
	elsewhere RunSource // nil when every run is the runtime's
	log       *slog.Logger
	minAge    time.Duration
	maxAge    time.Duration

	mu      sync.Mutex
	fresh   chan struct{} // closed when a listing newer than the last invalidate is in
	body    json.RawMessage
	seq     int64
	at      time.Time
	err     error
	started int // generation of the latest refresh started
	stored  int // generation of the listing held
	running bool
}

func newSummariesCache(rt *engine.Runtime, elsewhere RunSource, log *slog.Logger) *summariesCache {
	return &summariesCache{rt: rt, elsewhere: elsewhere, log: log, minAge: 250 * time.Millisecond, maxAge: time.Second, fresh: make(chan struct{})}
}

// get returns the latest listing and the sequence it reflects, starting a
// refresh when it is stale. It waits only when there is no listing yet or
// after an invalidate.
func (c *summariesCache) get() (json.RawMessage, int64, error) {
	c.mu.Lock()
	if !c.running && (c.stored == 0 || c.staleLocked()) {
		c.startLocked()
	}
	fresh := c.fresh
	c.mu.Unlock()
	<-fresh
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.body, c.seq, c.err
}

func (c *summariesCache) staleLocked() bool {
	age := time.Since(c.at)
	return c.err != nil || age >= c.maxAge || age >= c.minAge && c.rt.Events().Sequence() != c.seq
}

// current returns a listing that reflects every event published before
// the call: the latest one when nothing happened since it was made, else
// a new one, waited for. A client that polls one run to its end and then
// lists (the Node runtime's client does) sees the end in the list.
func (c *summariesCache) current() (json.RawMessage, int64, error) {
	c.mu.Lock()
	behind := c.stored == 0 || c.seq < c.rt.Events().Sequence()
	c.mu.Unlock()
	if behind {
		c.invalidate()
	}
	return c.get()
}

// invalidate makes the next get wait for a listing started after now.
func (c *summariesCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Waiters on the current channel keep it: they asked before this
	// change, and a refresh already running answers them.
	c.fresh = make(chan struct{})
	c.startLocked()
}

func (c *summariesCache) startLocked() {
	c.started++
	c.running = true
	go c.refresh(c.started, c.fresh)
}

func (c *summariesCache) refresh(gen int, fresh chan struct{}) {
	seq := c.rt.Events().Sequence()
	runs, err := c.rt.List()
	if err == nil && c.elsewhere != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		more, merr := c.elsewhere.Summaries(ctx)
		cancel()
		if merr != nil {
			// The runtime's own runs still list.
			c.log.Warn("list runs that execute elsewhere", "err", merr)
		}
		runs = append(runs, more...)
		slices.SortStableFunc(runs, func(a, b store.Summary) int {
			if n := b.StartedAt.Compare(a.StartedAt); n != 0 {
				return n
			}
			return strings.Compare(b.RunID, a.RunID)
		})
	}
	var body json.RawMessage
	if err == nil {
		body, err = json.Marshal(nonNil(runs))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen > c.stored {
		if err == nil || c.body == nil {
			c.body, c.seq = body, seq
		}
		c.err, c.at, c.stored = err, time.Now(), gen
	}
	if gen == c.started {
		c.running = false
	}
	// Whoever waits on this refresh's channel may go: the listing now
	// held was started after whatever made them wait.
	select {
	case <-fresh:
	default:
		close(fresh)
	}
}
