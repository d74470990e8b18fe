package web

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
)

// SSE event names. Every engine event goes out as "workflow" with its type
// in the envelope, so one listener gets them all; "reset" tells a client
// that it missed events and must rebuild from the overview.
const (
	sseWorkflow = "workflow"
	sseReset    = "reset"
)

// events is GET /api/events: server-sent events, one per engine event,
// with id: = EPOCH-SEQUENCE, where EPOCH names this server process (see
// Server.epoch). A client resumes after the last id it saw with the
// Last-Event-ID header (EventSource sends it when it reconnects) or
// ?since=; it gets every later event exactly once while they are still in
// the bus's ring, and a reset event when they are not or when the id comes
// from another process: sequences start again at 1 in each process, so a
// bare number cannot tell a restart from a gap. A bare sequence (the
// overview's and a start response's) is read as this process's. ?runId=
// keeps only one run's events. Without a starting point the stream starts
// now.
func (s *Server) events(c echo.Context) error {
	req := c.Request()
	start, err := streamStart(req)
	if err != nil {
		return err
	}
	since, resume := start.seq, start.given
	filter, err := runFilter(c.QueryParam("runId"))
	if err != nil {
		return err
	}
	if s.activeSSE.Add(1) > int64(s.cfg.MaxStreams) {
		s.activeSSE.Add(-1)
		c.Response().Header().Set("Retry-After", "5")
		return newAPIError(http.StatusServiceUnavailable, codeTooManyStreams,
			"this runtime already serves %d event streams, its limit; close a dashboard tab or an attached CLI, or retry later", s.cfg.MaxStreams)
	}
	defer s.activeSSE.Add(-1)
	bus := s.rt.Events()
	// Subscribe before reading the ring: an event published in between is
	// then in both, and the sequence check drops the copy.
	sub := bus.Subscribe(s.cfg.StreamBuffer, filter)
	defer sub.Close()
	if !resume {
		since = bus.Sequence()
	}

	res := c.Response()
	h := res.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	res.WriteHeader(http.StatusOK)
	// Every round of writes gets its deadline: a client that does not
	// read for StreamWriteTimeout is cut off, and what its stream held
	// is freed.
	rc := http.NewResponseController(res)
	arm := func() { _ = rc.SetWriteDeadline(time.Now().Add(s.cfg.StreamWriteTimeout)) }
	st := &stream{w: bufio.NewWriterSize(res, 4096), flush: rc.Flush, sent: since, bus: bus, filter: filter, epoch: s.epoch,
		encoded: s.encoded}
	arm()
	st.printf("retry: 1000\n\n")
	switch {
	case resume && start.epoch != "" && start.epoch != s.epoch:
		st.reset()
	case resume:
		st.catchUp()
	}
	if err := st.flushNow(); err != nil {
		return nil
	}

	keepalive := time.NewTicker(s.cfg.Keepalive)
	defer keepalive.Stop()
	ctx := req.Context()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.streams.Done():
			// The runtime closed before the streams end: its last events
			// (runs paused by the shutdown) are queued; send them.
			arm()
			st.drain(sub)
			_ = st.flushNow()
			return nil
		case <-keepalive.C:
			arm()
			st.printf(": keepalive\n\n")
		case ev, ok := <-sub.C:
			if !ok {
				return nil
			}
			arm()
			st.deliver(ev)
			// Write what else is queued before flushing: one syscall for
			// a burst.
			for more := true; more; {
				select {
				case ev, ok = <-sub.C:
					if !ok {
						return nil
					}
					st.deliver(ev)
				default:
					more = false
				}
			}
			// Events dropped at the end of a burst would otherwise wait
			// for the next event to be noticed.
			if sub.TakeLag() {
				st.catchUp()
			}
		}
		if err := st.flushNow(); err != nil {
			return nil
		}
	}
}

// drain sends what the subscription holds without waiting for more.
func (st *stream) drain(sub *engine.Subscription) {
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				return
			}
			st.deliver(ev)
		default:
			if sub.TakeLag() {
				st.catchUp()
			}
			return
		}
	}
}

// stream writes one client's events and remembers the last it sent.
type stream struct {
	w       *bufio.Writer
	flush   func() error
	err     error
	sent    int64
	bus     *engine.Bus
	filter  func(engine.Event) bool
	epoch   string
	encoded *eventCache
}

// deliver sends an event from the subscription. A reset from the bus means
// this stream fell behind its buffer: it catches up from the ring, which
// usually still holds what it missed.
func (st *stream) deliver(ev engine.Event) {
	if ev.Type == engine.EventSubscriberReset {
		st.catchUp()
		return
	}
	st.send(ev)
}

// catchUp sends the ring's events after the last one sent, or a reset
// when some of them already left the ring or were never ours.
func (st *stream) catchUp() {
	evs, ok := st.bus.Since(st.sent)
	// A sequence beyond ours comes from a runtime that has since been
	// restarted: sequences start again at 1 in each process.
	if !ok || st.sent > st.bus.Sequence() {
		st.reset()
		return
	}
	for _, ev := range evs {
		if st.filter == nil || st.filter(ev) {
			st.send(ev)
		}
	}
}

// reset tells the client to rebuild from the overview, and goes on from
// now.
func (st *stream) reset() {
	st.sent = st.bus.Sequence()
	st.printf("id: %s-%d\nevent: %s\ndata: {\"sequence\":%d,\"type\":%q,\"epoch\":%q}\n\n",
		st.epoch, st.sent, sseReset, st.sent, sseReset, st.epoch)
}

func (st *stream) send(ev engine.Event) {
	if ev.Sequence <= st.sent {
		return
	}
	st.printf("id: %s-%d\nevent: %s\ndata: ", st.epoch, ev.Sequence, sseWorkflow)
	// Written as is: the shared encoding is not copied (bufio passes a
	// large write straight through).
	if st.err == nil {
		_, st.err = st.w.Write(st.encoded.encode(ev))
	}
	st.printf("\n\n")
	st.sent = ev.Sequence
}

func (st *stream) printf(format string, args ...any) {
	if st.err == nil {
		_, st.err = fmt.Fprintf(st.w, format, args...)
	}
}

func (st *stream) flushNow() error {
	if st.err == nil {
		st.err = st.w.Flush()
	}
	if st.err == nil {
		st.err = st.flush()
	}
	return st.err
}

// streamPoint is where a client asks a stream to start: after sequence
// seq of the process named by epoch ("" for a bare sequence, taken as this
// process's). given is false when the client named no point: the stream
// starts now.
type streamPoint struct {
	epoch string
	seq   int64
	given bool
}

// streamStart reads Last-Event-ID, else ?since=: an event id
// (EPOCH-SEQUENCE) or a bare sequence.
func streamStart(req *http.Request) (streamPoint, error) {
	v := req.Header.Get("Last-Event-ID")
	if v == "" {
		v = req.URL.Query().Get("since")
	}
	if v == "" {
		return streamPoint{}, nil
	}
	p, ok := parseEventID(v)
	if !ok {
		return streamPoint{}, newAPIError(http.StatusBadRequest, codeBadRequest,
			"Last-Event-ID/since must be an event id (EPOCH-SEQUENCE) or a sequence, not %q", v)
	}
	return p, nil
}

func parseEventID(v string) (streamPoint, bool) {
	epoch, num := "", v
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		epoch, num = v[:i], v[i+1:]
		if !validEpoch(epoch) {
			return streamPoint{}, false
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return streamPoint{}, false
	}
	return streamPoint{epoch: epoch, seq: n, given: true}, true
}

func runFilter(runID string) (func(engine.Event) bool, error) {
	if runID == "" {
		return nil, nil
	}
	if err := store.ValidRunID(runID); err != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: codeBadID, message: err.Error(), err: err}
	}
	return func(e engine.Event) bool { return e.RunID == runID || e.Type == engine.EventSubscriberReset }, nil
}
