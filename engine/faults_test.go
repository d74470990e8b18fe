package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
)

// faulty is an executor that fails the first attempts of each call with a
// failure of a given class, and counts what it was paid for: the answers
// it gave, by prompt.
type faulty struct {
	class executors.Class
	msg   string
	// failures is how many attempts of each call fail; -1 fails every one
	// while broken is set.
	failures int

	mu     sync.Mutex
	broken bool
	tries  map[string]int
	paid   map[string]int
}

func newFaulty(class executors.Class, msg string, failures int) *faulty {
	return &faulty{class: class, msg: msg, failures: failures, tries: map[string]int{}, paid: map[string]int{}}
}

func (f *faulty) Name() string { return "faulty" }

func (f *faulty) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	if err := ctx.Err(); err != nil {
		return executors.Result{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries[req.Prompt]++
	if f.tries[req.Prompt] <= f.failures || f.failures < 0 && f.broken && strings.Contains(req.Prompt, "fragile") {
		return executors.Result{Usage: executors.Usage{InputTokens: 1}}, &executors.Error{Class: f.class, Message: f.msg}
	}
	f.paid[req.Prompt]++
	return executors.Result{Text: "answer to " + req.Prompt, Usage: executors.Usage{InputTokens: 5, OutputTokens: 5}}, nil
}

func (f *faulty) setBroken(b bool) {
	f.mu.Lock()
	f.broken = b
	f.mu.Unlock()
}

func (f *faulty) paidTwice() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for p, n := range f.paid {
		if n != 1 {
			out = append(out, fmt.Sprintf("%s paid %d times", p, n))
		}
	}
	return out
}

// newHarnessOn is a harness whose only executor is exec.
func newHarnessOn(t *testing.T, exec executors.Executor) *harness {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{Store: st, Hosts: lang.NewRegistry(jsvm.New()), Executors: executors.NewSet(exec), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, dir: dir, rt: rt}
}

const fanout24 = `export const meta = { name: 'faults', description: 'a fan-out on a bad day' }
return await parallel(Array.from({ length: 24 }, (_, i) => () => agent((i === 13 ? 'fragile ' : 'task ') + i, { retries: 0 })))
`

// Issue 23, item 3: a fault of ours (our ancestor died, descriptors ran
// out, a pipe or a spawn failed) is never an agent's terminal failure.
// While it lasts a call is retried, without using up the agent's own
// retries (here none); once it lifts every call is answered.
func TestInfrastructureFaultThatLifts(t *testing.T) {
	exec := newFaulty(executors.Infrastructure, "pipe2: too many open files", callpolicy.InfrastructureRetries)
	h := newHarnessOn(t, exec)
	opts := testOptions()
	opts.Executor = "faulty"
	o := h.run(h.write("faults.workflow.js", fanout24), "", opts)
	mustStatus(t, o, engine.StatusCompleted)
	var answers []string
	if err := json.Unmarshal(o.Result, &answers); err != nil {
		t.Fatalf("result %s: %v", o.Result, err)
	}
	for i, a := range answers {
		if !strings.HasPrefix(a, "answer to ") {
			t.Errorf("call %d answered %q", i, a)
		}
	}
	if o.Stats.Failed != 0 || o.Stats.Live != 24 {
		t.Errorf("%d live, %d failed; want 24 live, none failed", o.Stats.Live, o.Stats.Failed)
	}
	if want := 24 * callpolicy.InfrastructureRetries; o.Stats.Retried != want {
		t.Errorf("%d retries counted, want %d", o.Stats.Retried, want)
	}
	if paid := exec.paidTwice(); len(paid) > 0 {
		t.Errorf("paid twice: %v", paid)
	}
}

// When the fault persists, the run pauses with the reason; nothing is
// journaled as failed, and resume, once the fault is fixed, completes the
// run without paying for any answer twice.
func TestInfrastructureFaultThatPersistsPauses(t *testing.T) {
	exec := newFaulty(executors.Infrastructure, "the runtime's ancestor is gone", -1)
	exec.setBroken(true)
	h := newHarnessOn(t, exec)
	opts := testOptions()
	opts.Executor, opts.Concurrency = "faulty", 2
	o := h.run(h.write("faults.workflow.js", fanout24), "", opts)
	mustStatus(t, o, engine.StatusPaused)
	if !strings.Contains(o.PauseReason, "the runtime's ancestor is gone") || !strings.Contains(o.PauseReason, "resume") {
		t.Errorf("pause reason %q: it must say what failed and that resume goes on", o.PauseReason)
	}
	if o.Stats.Failed != 0 {
		t.Errorf("%d calls failed: a fault of ours is never the agent's failure", o.Stats.Failed)
	}
	d, err := h.rt.Inspect(o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Summary.Status != string(engine.StatusPaused) || d.Summary.PauseReason != o.PauseReason || len(d.Failures) != 0 {
		t.Errorf("show says %s (%q), failures %+v", d.Summary.Status, d.Summary.PauseReason, d.Failures)
	}

	exec.setBroken(false)
	o = h.resume(o.RunID, engine.ResumeRequest{})
	mustStatus(t, o, engine.StatusCompleted)
	if o.Stats.Replayed+o.Stats.Live != 24 || o.Stats.Failed != 0 {
		t.Errorf("resume: %+v", o.Stats)
	}
	if paid := exec.paidTwice(); len(paid) > 0 {
		t.Errorf("paid twice: %v", paid)
	}
	exec.mu.Lock()
	answered := len(exec.paid)
	exec.mu.Unlock()
	if answered != 24 {
		t.Errorf("%d calls answered in all, want 24", answered)
	}
}

// Issue 23, item 4: a transient failure is retried by default, and every
// retry is counted where a user looks: the outcome, show, the journal and
// the events.
func TestTransientFailuresRetriedAndCounted(t *testing.T) {
	if engine.DefaultOptions().AgentRetries != callpolicy.DefaultAgentRetries || callpolicy.DefaultAgentRetries < 1 {
		t.Fatalf("the default options retry a transient failure %d times", engine.DefaultOptions().AgentRetries)
	}
	exec := newFaulty(executors.Transient, "503 overloaded", 2)
	h := newHarnessOn(t, exec)
	sub := h.rt.Events().Subscribe(1024, func(e engine.Event) bool { return e.Type == engine.EventCallRetry })
	defer sub.Close()
	opts := testOptions()
	opts.Executor = "faulty"
	opts.AgentRetries = engine.DefaultOptions().AgentRetries
	script := `export const meta = { name: 'flaky', description: 'flaky' }
return await parallel([1, 2, 3].map(i => () => agent('task ' + i)))
`
	o := h.run(h.write("flaky.workflow.js", script), "", opts)
	mustStatus(t, o, engine.StatusCompleted)
	if o.Stats.Live != 3 || o.Stats.Failed != 0 || o.Stats.Retried != 6 {
		t.Errorf("outcome: %d live, %d failed, %d retried; want 3, 0, 6", o.Stats.Live, o.Stats.Failed, o.Stats.Retried)
	}
	d, err := h.rt.Inspect(o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Summary.Stats.Retried != 6 {
		t.Errorf("show counts %d retries, want 6", d.Summary.Stats.Retried)
	}
	for _, c := range d.Calls {
		if c.Attempts != 3 {
			t.Errorf("show gives %s %d attempts, want 3", c.Path, c.Attempts)
		}
	}
	retries := 0
	for _, rec := range h.journal(o.RunID) {
		if rec["type"] == "call.retry" {
			retries++
		}
	}
	if retries != 6 {
		t.Errorf("%d call.retry records, want 6", retries)
	}
	for i := 0; i < 6; i++ {
		e := <-sub.C
		p, ok := e.Payload.(engine.CallPayload)
		if !ok || p.Class != "transient" || p.Error != "503 overloaded" || p.Attempt < 1 || p.WaitMs < 0 {
			t.Errorf("call.retry event %+v", e.Payload)
		}
	}
}
