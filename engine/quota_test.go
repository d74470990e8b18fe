package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
)

// limited is a provider account over its quota until the test opens it:
// every call is refused with a 429 saying the quota resets in reset.
type limited struct {
	reset time.Duration

	mu     sync.Mutex
	open   bool
	starts []time.Time // when each attempt reached the provider
}

func (l *limited) Name() string { return "limited" }

func (l *limited) Run(_ context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.starts = append(l.starts, time.Now())
	if !l.open {
		return executors.Result{}, &executors.Error{Class: executors.RateLimited, Message: "429 Too Many Requests", RetryAfter: l.reset}
	}
	return executors.Result{Text: "answer to " + req.Prompt}, nil
}

func (l *limited) opened() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open = true
	return append([]time.Time(nil), l.starts...)
}

func (l *limited) attempts() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.starts...)
}

// Issue 23, Must-show 6, in one runtime: the first 429 parks its run
// until the reset, and a second run of the same account parks without
// calling the provider at all; the runtime that wakes parked runs (serve)
// resumes both at the reset, and each call is made once more, none paid
// twice.
func TestQuotaParksEveryRunOfTheAccount(t *testing.T) {
	lim := &limited{reset: 3 * time.Second}
	h := newHarnessOn(t, lim)
	opts := testOptions()
	opts.Executor, opts.Concurrency = "limited", 1
	a := h.run(h.write("a.workflow.js", `export const meta = { name: 'a', description: 'three calls' }
return await parallel(['x', 'y', 'z'].map(p => () => agent(p)))`), "", opts)
	mustStatus(t, a, engine.StatusPaused)
	if a.ResumeAt == nil {
		t.Fatalf("run a paused without a reset: %q", a.PauseReason)
	}
	b := h.run(h.write("b.workflow.js", `export const meta = { name: 'b', description: 'one call' }
return await agent('w')`), "", opts)
	mustStatus(t, b, engine.StatusPaused)
	if got := len(lim.attempts()); got != 1 {
		t.Fatalf("%d requests reached the provider before the reset; want the first only", got)
	}
	if b.ResumeAt == nil || !b.ResumeAt.Equal(*a.ResumeAt) {
		t.Fatalf("run b parked until %v, want a's reset %v (%q)", b.ResumeAt, a.ResumeAt, b.PauseReason)
	}
	for _, s := range []engine.Outcome{a, b} {
		if want := "waiting for quota until " + a.ResumeAt.Local().Format(time.TimeOnly); len(s.PauseReason) < len(want) || s.PauseReason[:len(want)] != want {
			t.Errorf("pause reason %q, want it to start %q", s.PauseReason, want)
		}
	}
	lim.opened()

	ended := h.rt.Events().Subscribe(64, func(ev engine.Event) bool { return ev.Type == engine.EventRunStatus })
	defer ended.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h.rt.WakeParked(ctx)
	done := map[string]bool{}
	for len(done) < 2 {
		select {
		case ev := <-ended.C:
			if p := ev.Payload.(engine.StatusPayload); p.Status == engine.StatusCompleted {
				done[ev.RunID] = true
			} else if p.Status != engine.StatusRunning {
				t.Fatalf("run %s woke to %s: %s", ev.RunID, p.Status, p.PauseReason)
			}
		case <-ctx.Done():
			t.Fatalf("the parked runs were not resumed at the reset; done: %v", done)
		}
	}
	starts := lim.attempts()
	if len(starts) != 5 {
		t.Fatalf("%d requests in all, want 5: the refused one and one per call", len(starts))
	}
	for _, s := range starts[1:] {
		if s.Before(*a.ResumeAt) {
			t.Errorf("a request at %v, before the reset at %v", s.Format(time.StampMilli), a.ResumeAt.Format(time.StampMilli))
		}
	}
}
