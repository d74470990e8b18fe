package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dynworkflow/dynworkflow/executors"
)

// Event is one state change. Sequence is monotonic per Runtime, so a client
// that saw event n has seen everything before it.
type Event struct {
	Sequence  int64     `json:"sequence"`
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	RunID     string    `json:"runId,omitempty"`
	Payload   any       `json:"payload,omitempty"`
}

// Event types.
const (
	EventRunStarted   = "run.started"
	EventRunResumed   = "run.resumed"
	EventRunStatus    = "run.status"
	EventCallStarted  = "call.started"
	EventCallFinished = "call.finished"
	EventCallReplayed = "call.replayed"
	EventCallFailed   = "call.failed"
	EventCallRetry    = "call.retry"
	EventCallProgress = "call.progress"
	EventPhase        = "phase"
	EventLog          = "log"
	EventLimit        = "limit"
	EventCheckpoint   = "checkpoint.answered"
	// EventBranchFailed is a parallel() branch or pipeline() item that
	// threw and became null: a script error (ScriptErrorPayload).
	EventBranchFailed = "branch.failed"
	// EventRunSpend comes after every live call: what the run has spent,
	// what its running calls are expected to cost, and its cap.
	EventRunSpend        = "run.spend"
	EventSubscriberReset = "reset"
)

// Bus fans events out to subscribers and keeps the latest ones in a ring, so
// a client that reconnects can catch up. Events are a live acceleration: the
// journal stays the truth.
type Bus struct {
	mu   sync.Mutex
	seq  int64
	ring []Event // grows as events come, up to size: most runtimes never fill it
	size int
	next int // ring write position
	full bool
	subs map[subscriber]struct{}
}

// subscriber is a Subscription or a Queue; deliver runs under the bus lock.
type subscriber interface{ deliver(Event) }

// NewBus returns a bus keeping the last ringSize events. The ring takes
// memory as events come, not up front: a server's ring of 65,536 events is
// 5 MB, which the garbage collector would scan at every cycle.
func NewBus(ringSize int) *Bus {
	return &Bus{size: max(ringSize, 1), subs: map[subscriber]struct{}{}}
}

// Publish stamps and delivers an event. It never blocks: a subscriber that
// cannot keep up loses events and is told so with a reset event.
func (b *Bus) Publish(runID, typ string, payload any) {
	b.mu.Lock()
	b.seq++
	ev := Event{Sequence: b.seq, Timestamp: time.Now().UTC(), Type: typ, RunID: runID, Payload: payload}
	if !b.full && b.next == len(b.ring) {
		if len(b.ring) == cap(b.ring) {
			b.ring = slices.Grow(b.ring, min(max(2*len(b.ring), 64), b.size)-len(b.ring))
		}
		b.ring = b.ring[:len(b.ring)+1]
	}
	b.ring[b.next] = ev
	b.next++
	if b.next == b.size {
		b.next, b.full = 0, true
	}
	for s := range b.subs {
		s.deliver(ev)
	}
	b.mu.Unlock()
}

// Sequence is the number of the latest event.
func (b *Bus) Sequence() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seq
}

// Since returns the events after seq still in the ring. ok is false when
// some of them already left the ring: the caller must rebuild its state
// from the store instead.
func (b *Bus) Since(seq int64) (events []Event, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sinceLocked(seq)
}

func (b *Bus) sinceLocked(seq int64) ([]Event, bool) {
	n := b.next
	if b.full {
		n = len(b.ring)
	}
	oldest := b.seq - int64(n) + 1
	if seq+1 < oldest {
		return nil, false
	}
	var out []Event
	for s := max(seq+1, oldest); s <= b.seq; s++ {
		idx := (b.next - int(b.seq-s) - 1 + len(b.ring)) % len(b.ring)
		out = append(out, b.ring[idx])
	}
	return out, true
}

// Subscription receives events on C until Close.
type Subscription struct {
	C      <-chan Event
	c      chan Event
	bus    *Bus
	filter func(Event) bool
	lagged bool
}

// Subscribe returns a subscription with room for buffer undelivered events.
// filter, if not nil, selects the events it gets.
func (b *Bus) Subscribe(buffer int, filter func(Event) bool) *Subscription {
	c := make(chan Event, max(buffer, 1))
	s := &Subscription{C: c, c: c, bus: b, filter: filter}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Close stops delivery and closes C.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	if _, ok := s.bus.subs[s]; ok {
		delete(s.bus.subs, s)
		close(s.c)
	}
	s.bus.mu.Unlock()
}

// TakeLag reports whether events were dropped because C was full, and
// clears it. A caller that has drained C and sees true catches up with
// Since; the reset event the bus would otherwise send with the next event
// is then not sent, since the next event may never come.
func (s *Subscription) TakeLag() bool {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	lagged := s.lagged
	s.lagged = false
	return lagged
}

// deliver runs under the bus lock.
func (s *Subscription) deliver(ev Event) {
	if s.filter != nil && !s.filter(ev) {
		return
	}
	if s.lagged {
		select {
		case s.c <- Event{Sequence: ev.Sequence, Timestamp: ev.Timestamp, Type: EventSubscriberReset}:
			s.lagged = false
		default:
			return
		}
	}
	select {
	case s.c <- ev:
	default:
		s.lagged = true
	}
}

// Queue receives events as a Subscription does, with the same bound and
// the same reset event after a loss, but holds only the events waiting:
// a subscription's channel is allocated whole (8,192 events are 640 KB of
// a 1,000-agent run's 5 MB live heap), a queue grows as events wait.
type Queue struct {
	bus    *Bus
	filter func(Event) bool
	limit  int
	ready  chan struct{}
	// Guarded by bus.mu.
	events, spare  []Event
	lagged, closed bool
}

// SubscribeQueue returns a queue that holds at most limit events not yet
// taken. filter, if not nil, selects the events it gets.
func (b *Bus) SubscribeQueue(limit int, filter func(Event) bool) *Queue {
	q := &Queue{bus: b, filter: filter, limit: max(limit, 1), ready: make(chan struct{}, 1)}
	b.mu.Lock()
	b.subs[q] = struct{}{}
	b.mu.Unlock()
	return q
}

// Ready is signalled when events are waiting, and closed by Close.
func (q *Queue) Ready() <-chan struct{} { return q.ready }

// Take returns the events waiting, oldest first, and empties the queue.
// The slice is only valid until the next Take. After Close it still
// returns what was waiting.
func (q *Queue) Take() []Event {
	q.bus.mu.Lock()
	defer q.bus.mu.Unlock()
	out := q.events
	q.events, q.spare = q.spare[:0], out
	return out
}

// Close stops delivery and closes Ready.
func (q *Queue) Close() {
	q.bus.mu.Lock()
	defer q.bus.mu.Unlock()
	if !q.closed {
		q.closed = true
		delete(q.bus.subs, q)
		close(q.ready)
	}
}

// deliver runs under the bus lock; it drops events exactly as a
// Subscription with a buffer of limit does.
func (q *Queue) deliver(ev Event) {
	if q.filter != nil && !q.filter(ev) {
		return
	}
	if q.lagged {
		if len(q.events) >= q.limit {
			return
		}
		q.events = append(q.events, Event{Sequence: ev.Sequence, Timestamp: ev.Timestamp, Type: EventSubscriberReset})
		q.lagged = false
	}
	if len(q.events) < q.limit {
		q.events = append(q.events, ev)
	} else {
		q.lagged = true
	}
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// StartedPayload comes with run.started and run.resumed. A resume says
// which rule it applied and the script hashes before and after.
type StartedPayload struct {
	Name    string `json:"name"`
	Script  string `json:"script"`
	Rule    string `json:"rule,omitempty"`
	Epoch   int    `json:"epoch,omitempty"`
	OldHash string `json:"oldHash,omitempty"`
	NewHash string `json:"newHash,omitempty"`
	// Trace is the execution's trace when tracing is on, and Links the
	// traces of the earlier executions that were traced, oldest first.
	Trace *TraceContext  `json:"trace,omitempty"`
	Links []TraceContext `json:"links,omitempty"`
}

// StatusPayload comes with run.status: how an execution ended, and how
// many of its calls were replayed from the journal or ran live.
type StatusPayload struct {
	Status      Status `json:"status"`
	PauseReason string `json:"pauseReason,omitempty"`
	// ResumeAt is, for a run parked until its executor's quota resets,
	// when that is: it resumes by itself then under serve.
	ResumeAt *time.Time `json:"resumeAt,omitempty"`
	Error    string     `json:"error,omitempty"`
	Epoch    int        `json:"epoch"`
	Replayed int        `json:"replayed"`
	Live     int        `json:"live"`
	Failed   int        `json:"failed"`
	Retried  int        `json:"retried,omitempty"`
	// ScriptErrors, on the status an execution ended with, are the errors
	// its script threw in fan-out branches that became null, by cause.
	ScriptErrors []ScriptErrorGroup `json:"scriptErrors,omitempty"`
}

// CallPayload comes with the call.* events. call.started carries the
// prompt, call.finished the result, call.replayed both, so that a client
// can show what each agent was asked and answered from the stream alone;
// both are bounded (see preview), and the run's detail has them whole.
type CallPayload struct {
	Path     string `json:"path"`
	Label    string `json:"label,omitempty"`
	Phase    string `json:"phase,omitempty"`
	Executor string `json:"executor,omitempty"`
	Prompt   string `json:"prompt,omitempty"`
	// Result is the call's answer as JSON (a string for text), when it
	// fits the bound; otherwise ResultPreview has the start of its text.
	Result        json.RawMessage `json:"result,omitempty"`
	ResultPreview string          `json:"resultPreview,omitempty"`
	// Truncated says the prompt (call.started) or the result
	// (call.finished, call.replayed) was cut to fit an event.
	Truncated bool             `json:"truncated,omitempty"`
	Usage     *executors.Usage `json:"usage,omitempty"`
	Error     string           `json:"error,omitempty"`
	Attempt   int              `json:"attempt,omitempty"`
	// Class is why a call is retried (call.retry: transient,
	// infrastructure, schema) or failed (call.failed: terminal, or
	// transient once its retries ran out), and WaitMs how long a retry
	// waits before its next attempt.
	Class  string `json:"class,omitempty"`
	WaitMs int64  `json:"waitMs,omitempty"`
	// Worktree is an isolated call's worktree: where it runs (call.started)
	// and what became of it (call.finished, call.failed).
	Worktree *Worktree `json:"worktree,omitempty"`
	// Model, Effort and Permissions are what the call runs with
	// (call.started), and Route the route that chose them, if one did; on
	// call.finished, Model is the model that answered and Provider its
	// provider, when the executor says.
	Model       string `json:"model,omitempty"`
	Route       string `json:"route,omitempty"`
	Effort      string `json:"effort,omitempty"`
	Permissions string `json:"permissions,omitempty"`
	Provider    string `json:"provider,omitempty"`
	// QueuedMs is how long the call waited for a free worker
	// (call.started); DurationMs how long it ran, retries included
	// (call.finished, call.failed).
	QueuedMs   int64 `json:"queuedMs,omitempty"`
	DurationMs int64 `json:"durationMs,omitempty"`
}

// eventTextMax bounds the prompt and the result one event carries: the
// bus keeps tens of thousands of events for clients that reconnect, and a
// prompt can be a whole file.
const eventTextMax = 2 << 10

// withPrompt sets the payload's prompt, cut to eventTextMax.
func (p CallPayload) withPrompt(prompt string) CallPayload {
	if len(prompt) > eventTextMax {
		// A copy: a substring would keep the whole prompt in the ring.
		prompt, p.Truncated = strings.Clone(cutText(prompt, eventTextMax)), true
	}
	p.Prompt = prompt
	return p
}

// withResult sets the payload's result, or the start of its text when the
// whole does not fit.
func (p CallPayload) withResult(result json.RawMessage) CallPayload {
	if len(result) <= eventTextMax {
		p.Result = result
		return p
	}
	text := string(result)
	var s string
	if json.Unmarshal(result, &s) == nil {
		text = s
	}
	p.ResultPreview, p.Truncated = strings.Clone(cutText(text, eventTextMax)), true
	return p
}

// cutText cuts s to at most n bytes, on a character boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// SpendPayload comes with run.spend.
type SpendPayload struct {
	// CostUSD is what every execution of the run has cost so far.
	CostUSD float64 `json:"costUsd"`
	// ExpectedUSD is what the calls running now are expected to cost
	// (only under a cap, which is when it is estimated).
	ExpectedUSD float64 `json:"expectedUsd,omitempty"`
	// MaxCostUSD is the run's dollar cap; 0 for none.
	MaxCostUSD   float64 `json:"maxCostUsd,omitempty"`
	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
}

// ProgressPayload is live output of a running call.
type ProgressPayload struct {
	Path     string             `json:"path"`
	Progress executors.Progress `json:"progress"`
}

// CheckpointPayload comes with checkpoint.answered.
type CheckpointPayload struct {
	Path   string          `json:"path"`
	Prompt string          `json:"prompt"`
	Answer json.RawMessage `json:"answer"`
	Source string          `json:"source"`
	// Phase is the phase the checkpoint was asked in, and WaitedMs how
	// long it waited for its answer (none when replayed).
	Phase    string `json:"phase,omitempty"`
	WaitedMs int64  `json:"waitedMs,omitempty"`
}

// PhasePayload comes with phase.
type PhasePayload struct {
	Scope string `json:"scope"`
	Title string `json:"title"`
}

// LogPayload comes with log: a line of the run's log.
type LogPayload struct {
	Scope   string `json:"scope"`
	Level   string `json:"level"`
	Message string `json:"message"`
}

// LimitPayload comes with limit: a cap the run ran into.
type LimitPayload struct {
	Limit   string `json:"limit"`
	Message string `json:"message"`
}

// Line renders the payload for a terminal.
func (p PhasePayload) Line() string { return "── " + p.Title }

// Line renders the payload for a terminal.
func (p LogPayload) Line() string {
	if p.Level == "info" || p.Level == "" {
		return p.Message
	}
	return p.Level + ": " + p.Message
}
