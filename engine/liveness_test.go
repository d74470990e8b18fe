package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
)

// liveScript is a script of one line after its meta.
func liveScript(body string) string {
	return "export const meta = { name: 'live', description: 'liveness' }\n" + body + "\n"
}

// stuck is an executor whose attempts report what a test gives them and
// then hang until stopped, the first hang attempts of each call; later
// ones answer. It counts attempts by prompt.
type stuck struct {
	report []executors.Activity
	hangs  int
	// fail, when set, is what the hanging attempts fail with at once
	// instead of hanging.
	fail error
	// reported is closed once an attempt has reported its activity.
	reported chan struct{}
	once     sync.Once

	mu    sync.Mutex
	tries map[string]int
}

func newStuck(hangs int, report ...executors.Activity) *stuck {
	return &stuck{report: report, hangs: hangs, reported: make(chan struct{}), tries: map[string]int{}}
}

func (s *stuck) Name() string { return "stuck" }

func (s *stuck) Run(ctx context.Context, req executors.Request, observe executors.Observer) (executors.Result, error) {
	s.mu.Lock()
	s.tries[req.Prompt]++
	n := s.tries[req.Prompt]
	s.mu.Unlock()
	if n > s.hangs {
		return executors.Result{Text: "answer to " + req.Prompt}, nil
	}
	if s.fail != nil {
		return executors.Result{}, s.fail
	}
	for _, a := range s.report {
		a := a
		observe(executors.Progress{Activity: &a})
	}
	s.once.Do(func() { close(s.reported) })
	<-ctx.Done()
	return executors.Result{}, context.Cause(ctx)
}

func (s *stuck) attempts(prompt string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tries[prompt]
}

// Issue 23, item 5: an agent that makes no progress for its idle timeout
// is stopped and retried as a transient failure; the retry answers.
func TestIdleAgentIsStoppedAndRetried(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		idle         time.Duration
	}{
		{"run option", `return await agent('think', { retries: 1 })`, 150 * time.Millisecond},
		{"call option", `return await agent('think', { retries: 1, idleTimeoutMs: 150 })`, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exec := newStuck(1, executors.NewActivity(executors.ActivityTool, "shell: sleep 1000"))
			h := newHarnessOn(t, exec)
			opts := testOptions()
			opts.Executor, opts.IdleTimeout = "stuck", tc.idle
			out := h.run(h.write("idle.workflow.js", liveScript(tc.script)), "", opts)
			if out.Status != engine.StatusCompleted || string(out.Result) != `"answer to think"` {
				t.Fatalf("outcome %s %s (%s), want completed with the retry's answer", out.Status, out.Result, out.Error)
			}
			if out.Stats.Retried != 1 || exec.attempts("think") != 2 {
				t.Fatalf("retried %d, attempts %d; want the idle attempt retried once", out.Stats.Retried, exec.attempts("think"))
			}
			var retry map[string]any
			for _, rec := range h.journal(out.RunID) {
				if rec["type"] == "call.retry" {
					retry = rec
				}
			}
			errInfo, _ := retry["error"].(map[string]any)
			msg, _ := errInfo["message"].(string)
			if errInfo["class"] != "transient" || !strings.Contains(msg, "no progress") || !strings.Contains(msg, "shell: sleep 1000") {
				t.Fatalf("retry record %v, want a transient idle timeout naming the last activity", retry)
			}
		})
	}
}

// A CLI that keeps saying it cannot reach its endpoint (Codex's
// "Reconnecting... waiting for network") pauses the run with the executor
// unavailable and the fix; resumed once the endpoint is back, the call
// answers.
func TestDeadEndpointPausesTheRun(t *testing.T) {
	exec := newStuck(1, executors.NewActivity(executors.ActivityUnreachable, "Reconnecting... waiting for network (Connection failed: error sending request)"))
	h := newHarnessOn(t, exec)
	opts := testOptions()
	opts.Executor, opts.UnreachableFor = "stuck", 200*time.Millisecond
	s := h.write("dead.workflow.js", liveScript(`return await agent('hello')`))
	start := time.Now()
	out := h.run(s, "", opts)
	took := time.Since(start)
	if out.Status != engine.StatusPaused || !strings.Contains(out.PauseReason, "executor stuck is unavailable") ||
		!strings.Contains(out.PauseReason, "cannot reach its model endpoint") || !strings.Contains(out.PauseReason, "Fix: make the model endpoint reachable") {
		t.Fatalf("outcome %s (%s), want paused for an unreachable endpoint with the fix", out.Status, out.PauseReason)
	}
	t.Logf("paused as unavailable after %s (limit %s)", took.Round(time.Millisecond), opts.UnreachableFor)
	if again := h.resume(out.RunID, engine.ResumeRequest{}); again.Status != engine.StatusCompleted {
		t.Fatalf("resume: %s (%s %s)", again.Status, again.PauseReason, again.Error)
	}
}

// A CLI that gives up on a dead endpoint by itself (Pi's "Connection
// error.") is retried, nothing having been sent, on a count of its own:
// a call with no retries left still waits for the endpoint, and the run
// pauses once the waits add up to the limit.
func TestUnreachableFailuresPauseTheRun(t *testing.T) {
	exec := newStuck(1000)
	exec.fail = &executors.Error{Class: executors.Transient, Unreachable: true, Message: "pi: Connection error."}
	h := newHarnessOn(t, exec)
	opts := testOptions()
	opts.Executor, opts.UnreachableFor, opts.RetryBackoff = "stuck", 100*time.Millisecond, 10*time.Millisecond
	out := h.run(h.write("refused.workflow.js", liveScript(`return await agent('hello', { retries: 0 })`)), "", opts)
	if out.Status != engine.StatusPaused || !strings.Contains(out.PauseReason, "cannot reach its model endpoint") ||
		!strings.Contains(out.PauseReason, "Connection error.") {
		t.Fatalf("outcome %s (%s), want paused for an unreachable endpoint", out.Status, out.PauseReason)
	}
	if n := exec.attempts("hello"); n < 3 {
		t.Fatalf("%d attempts; want the unreachable endpoint tried again, whatever the call's retries", n)
	}
}

// The last activity of a running call is visible, what and when, in the
// run's detail (show) and in call.progress events (SSE), and a call whose
// CLI keeps retrying is named by the live view's Progress.
func TestLastActivityIsVisible(t *testing.T) {
	exec := newStuck(1, executors.NewActivity(executors.ActivityTool, "shell: npm test"),
		executors.NewActivity(executors.ActivityRetry, "Reconnecting... 2/5 (stream disconnected)"))
	h := newHarnessOn(t, exec)
	sub := h.rt.Events().Subscribe(64, func(e engine.Event) bool { return e.Type == engine.EventCallProgress })
	defer sub.Close()
	opts := testOptions()
	opts.Executor = "stuck"
	r := h.start(h.write("busy.workflow.js", liveScript(`return await agent('work', { label: 'tests' })`)), "", opts)
	<-exec.reported
	// The call's start reaches the journal with its next write.
	var d *engine.Detail
	for deadline := time.Now().Add(time.Minute); ; {
		var err error
		if d, err = h.rt.Inspect(r.ID()); err != nil {
			t.Fatal(err)
		}
		if len(d.Calls) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(d.Calls) != 1 {
		t.Fatalf("calls %+v, want the running one", d.Calls)
	}
	a := d.Calls[0].Activity
	if a == nil || a.Activity.Kind != executors.ActivityRetry || !strings.Contains(a.Activity.Text, "Reconnecting") ||
		a.Activity.At.IsZero() || a.Label != "tests" {
		t.Fatalf("activity in the detail = %+v, want the retry, stamped", a)
	}
	if time.Since(a.Since) > time.Minute || a.Since.After(a.Activity.At) {
		t.Fatalf("progress since %v, want the tool call's time, before the retry at %v", a.Since, a.Activity.At)
	}
	troubled := r.Progress().Troubled
	if len(troubled) != 1 || troubled[0].Path != d.Calls[0].Path {
		t.Fatalf("Progress().Troubled = %+v, want the retrying call", troubled)
	}
	var kinds []string
	for len(kinds) < 2 {
		ev := <-sub.C
		if p, ok := ev.Payload.(engine.ProgressPayload); ok && p.Progress.Activity != nil {
			kinds = append(kinds, p.Progress.Activity.Kind)
		}
	}
	if kinds[0] != executors.ActivityTool || kinds[1] != executors.ActivityRetry {
		t.Fatalf("call.progress activities %v, want tool then retry", kinds)
	}
	_ = r.Stop()
	h.wait(r)
}
