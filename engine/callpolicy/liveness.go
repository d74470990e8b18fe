package callpolicy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
)

// Liveness. An agent can be alive and get nowhere: its CLI waits on a
// model that never answers, or keeps printing "Reconnecting..." at an
// endpoint that is down. Every attempt is watched by what its executor
// reports (executors.Activity) and stopped:
//
//   - after an idle timeout without progress (anything but the CLI's own
//     retries, errors and reconnects): a transient failure, retried like
//     any other;
//   - once its CLI has said for UnreachableFor that it cannot reach its
//     model endpoint, with no progress since: the executor is unavailable
//     and the run pauses with the fix. A CLI that gives up on a dead
//     endpoint by itself (its failure says Unreachable) is retried, on a
//     count of its own since nothing was sent or paid, until its waits add
//     up to UnreachableFor, and then pauses the run the same way.
//
// Both bounds hold on whichever machine runs the attempt (RunAttempt);
// the second one's retries are decided here, by counts and backoffs, so
// that a Temporal workflow replays them alike.
const (
	// DefaultIdleTimeout is the idle timeout of calls that set none and
	// whose run and executor set none. Ten minutes: a healthy agent shows
	// something much sooner (a tool call, a message, a streamed token, a
	// turn starting), while the longest silences seen are one long
	// reasoning turn or one tool the CLI itself runs and bounds (Claude
	// Code's Bash tool stops at 10 minutes at most; Codex returns from a
	// command after seconds and polls it). Shorter would kill sound
	// agents and pay for their work twice; longer holds a slot and a
	// hung process for nothing.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultUnreachableFor is how long a CLI may say that it cannot reach
	// its model endpoint before the run pauses: long enough to ride out a
	// restart of a local model server or a network blip, and short enough
	// that a dead endpoint is reported within a minute.
	DefaultUnreachableFor = 30 * time.Second
)

// Bounds bound one attempt. Zero means no bound.
type Bounds struct {
	// Timeout bounds the whole attempt: running out is a transient failure.
	Timeout time.Duration
	// Idle bounds the time without progress.
	Idle time.Duration
	// Unreachable bounds the time the executor says it cannot reach its
	// endpoint, with no progress since.
	Unreachable time.Duration
}

// stalled is why a watchdog stopped an attempt.
type stalled struct {
	unreachable bool
	after       time.Duration
	last        executors.Activity
}

func (s *stalled) Error() string { return s.failure().Error() }

// failure is the classified executor failure of a stopped attempt.
func (s *stalled) failure() *executors.Error {
	if s.unreachable {
		return &executors.Error{Class: executors.Unavailable, Unreachable: true,
			Message: fmt.Sprintf("it cannot reach its model endpoint (for %s, with no progress since): %s", s.after, s.last.Text),
			Fix:     UnreachableFix}
	}
	msg := fmt.Sprintf("the agent made no progress for %s (idle timeout)", s.after)
	if !s.last.At.IsZero() {
		msg += fmt.Sprintf("; its last activity was %s", Describe(s.last))
	}
	return &executors.Error{Class: executors.Transient, Message: msg}
}

// UnreachableFix is what to do about an executor that cannot reach its
// model endpoint.
const UnreachableFix = "make the model endpoint reachable from this machine (is the model server up? check the executor's base URL, proxy and network), then resume the run"

// Describe is an activity as a user reads it: "tool: shell: npm test".
func Describe(a executors.Activity) string {
	switch {
	case a.Text != "":
	case a.Kind == executors.ActivityStream:
		return "output streaming"
	default:
		return a.Kind
	}
	return a.Kind + ": " + a.Text
}

// watchdog stops an attempt that makes no progress (see Bounds).
type watchdog struct {
	b      Bounds
	cancel context.CancelCauseFunc
	wake   chan struct{}
	quit   chan struct{}
	done   sync.WaitGroup

	mu       sync.Mutex
	progress time.Time // the last progress, or the start
	down     time.Time // the first "unreachable" since then; zero for none
	last     executors.Activity
}

// watch starts watching an attempt run under a context cancel cancels.
func watch(b Bounds, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{b: b, cancel: cancel, wake: make(chan struct{}, 1), quit: make(chan struct{}), progress: time.Now()}
	w.done.Add(1)
	go w.loop()
	return w
}

// observe notes what the executor reports, stamping an activity that has
// no time yet.
func (w *watchdog) observe(p executors.Progress) {
	now := time.Now()
	a := p.Activity
	if a != nil && a.At.IsZero() {
		a.At = now
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case a == nil:
		if p.Usage != nil || p.History != nil {
			w.progress, w.down = now, time.Time{}
		}
		return
	case a.Kind == executors.ActivityUnreachable:
		if w.down.IsZero() && w.b.Unreachable > 0 {
			w.down = now
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	case !a.Stalled():
		w.progress, w.down = now, time.Time{}
	}
	w.last = *a
}

// deadline is when the attempt is stalled unless it progresses first.
func (w *watchdog) deadline() (time.Time, *stalled) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var at time.Time
	var why *stalled
	if w.b.Idle > 0 {
		at, why = w.progress.Add(w.b.Idle), &stalled{after: w.b.Idle, last: w.last}
	}
	if !w.down.IsZero() {
		if d := w.down.Add(w.b.Unreachable); at.IsZero() || d.Before(at) {
			at, why = d, &stalled{unreachable: true, after: w.b.Unreachable, last: w.last}
		}
	}
	return at, why
}

func (w *watchdog) loop() {
	defer w.done.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		at, why := w.deadline()
		if why != nil && !time.Now().Before(at) {
			w.cancel(why)
			return
		}
		wait := time.Hour
		if why != nil {
			wait = time.Until(at)
		}
		t.Reset(wait)
		select {
		case <-w.quit:
			return
		case <-w.wake:
		case <-t.C:
		}
	}
}

// stop ends the watch.
func (w *watchdog) stop() {
	close(w.quit)
	w.done.Wait()
}

// stalledBy is the watchdog's verdict on an attempt run under ctx, if it
// stopped it.
func stalledBy(ctx context.Context) *stalled {
	var s *stalled
	if errors.As(context.Cause(ctx), &s) {
		return s
	}
	return nil
}
