package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// bigAnswers is an executor whose answers and transcripts are size bytes
// each, derived from the prompt. It counts its answers by prompt: a run
// cancelled by a pause gives none, and runs again on resume.
type bigAnswers struct {
	size int
	runCounts
}

func newBigAnswers(size int) *bigAnswers { return &bigAnswers{size: size} }

func (b *bigAnswers) Name() string { return "big" }

func (b *bigAnswers) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	if i := strings.Index(req.Prompt, "[sleep="); i >= 0 {
		d, _ := time.ParseDuration(strings.TrimSuffix(req.Prompt[i+len("[sleep="):], "]"))
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return executors.Result{}, ctx.Err()
		}
	}
	b.count(req.Prompt)
	text := bigText(req.Prompt, b.size)
	return executors.Result{Text: text, Usage: executors.Usage{InputTokens: 1, OutputTokens: int64(b.size / 4)},
		History: []executors.HistoryItem{{Kind: "message", Role: "assistant", Text: text}}}, nil
}

// bigText is size bytes that only prompt gives.
func bigText(prompt string, size int) string {
	sum := sha256.Sum256([]byte(prompt))
	return strings.Repeat(hex.EncodeToString(sum[:]), size/64+1)[:size]
}

// runCounts counts an executor's runs by key: what was paid for.
type runCounts struct {
	mu   sync.Mutex
	runs map[string]int
}

func (r *runCounts) count(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs == nil {
		r.runs = map[string]int{}
	}
	r.runs[key]++
}

// ranTwice lists the keys that ran more than once.
func (r *runCounts) ranTwice() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k, n := range r.runs {
		if n > 1 {
			out = append(out, fmt.Sprintf("%q ran %d times", k, n))
		}
	}
	return out
}

// bigFanOut is n agents on the big executor; the script checks each answer
// is the one its prompt gives, and returns their total size.
func bigFanOut(n int, sleep string) string {
	return fmt.Sprintf(`export const meta = { name: 'big', description: 'large answers' }
const out = await parallel(Array.from({ length: %d }, (_, i) => () => agent('item ' + i + '%s', { executor: 'big' })))
return out.reduce((n, a) => n + a.length, 0)
`, n, sleep)
}

// TestLargeAnswersResume is the run that could not be resumed: 24 calls
// answering 100 KB each. Every answer of the first execution used to
// travel in the next execution's start input, over Temporal's limit on one
// payload ("Blob data size exceeds limit"). The run completes; a resume
// replays all 24 answers without running any again.
func TestLargeAnswersResume(t *testing.T) {
	c := newClient(t)
	big := newBigAnswers(100 << 10)
	startWorker(t, c, "w1", executors.NewSet(big))
	path := writeScript(t, "big.workflow.js", bigFanOut(24, ""))
	in := startFile(t, c, path, "", engine.DefaultOptions(), false)
	first := wait(t, c, in.RunID)
	want := fmt.Sprint(24 * 100 << 10)
	if first.Status != engine.StatusCompleted || string(first.Result) != want {
		t.Fatalf("first execution: %s %s %s", first.Status, first.Result, first.Error)
	}
	if _, err := c.Resume(context.Background(), in.RunID, ResumeRequest{}); err != nil {
		t.Fatal(err)
	}
	again := wait(t, c, in.RunID)
	if again.Status != engine.StatusCompleted || string(again.Result) != want || again.Stats.Replayed != 24 || again.Stats.Live != 0 {
		t.Fatalf("resumed: %s %s replayed %d live %d %s", again.Status, again.Result, again.Stats.Replayed, again.Stats.Live, again.Error)
	}
	if twice := big.ranTwice(); len(twice) > 0 {
		t.Errorf("paid twice: %v", twice)
	}
	d, err := c.Detail(context.Background(), in.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Calls) != 24 {
		t.Fatalf("show lists %d calls", len(d.Calls))
	}
	for _, call := range d.Calls {
		prompt := call.Prompt
		if got, want := string(call.Result), `"`+bigText(prompt, 100<<10)+`"`; got != want {
			t.Errorf("%s: show has a result of %d bytes, want the answer's %d", call.Path, len(got), len(want))
		}
		if len(call.History) != 1 || len(call.History[0].Text) != 100<<10 {
			t.Errorf("%s: show has no full transcript", call.Path)
		}
	}
	replay(t, c, in.RunID)
}

// counting runs the simulated executor and counts its runs by prompt and
// attempt: what was paid for.
type counting struct {
	executors.Executor
	runCounts
}

func newCounting() *counting {
	return &counting{Executor: simulate.New(simulate.Config{})}
}

func (c *counting) Run(ctx context.Context, req executors.Request, o executors.Observer) (executors.Result, error) {
	c.count(fmt.Sprintf("%s #%d", req.Prompt, req.Attempt))
	return c.Executor.Run(ctx, req, o)
}

// rollScript makes calls of every kind an execution can hand on to the one
// that continues it: answers, a call that gives up (null), one whose
// required failure the script catches, a schema repair, a transient retry,
// a checkpoint's default and a child workflow. The token budget it reads
// must come out the same.
const rollScript = `export const meta = { name: 'roll', description: 'continues as new' }
phase('first')
const first = await parallel(Array.from({ length: 12 }, (_, i) => () => agent('a' + i + ' [simulate:sleep=20ms]')))
console.log('first done')
const failed = await agent('gives up [simulate:fail]')
let caught = null
try { await agent('required [simulate:fail]', { required: true }) } catch (e) { caught = e.code }
const repaired = await agent('repaired [simulate:invalid-once]', { schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } })
const retried = await agent('retried [simulate:transient]')
const go = await checkpoint('Go on?', { kind: 'confirm', default: true, headless: 'default' })
const child = await workflow('child.workflow.js', { n: 3 })
phase('second')
const second = await parallel(Array.from({ length: 12 }, (_, i) => () => agent('b' + i + ' [simulate:sleep=20ms]')))
return { first: first.length, failed, caught, repaired: typeof repaired.n, retried: retried.length > 0, go, child, second: second.length, spent: budget.spent() }
`

const rollChild = `export const meta = { name: 'child', description: 'a child' }
return await parallel(Array.from({ length: args.n }, (_, i) => () => agent('child ' + i)))
`

// TestRollover runs a script whose history fills many times over: each
// execution continues as new, and the run ends as an uninterrupted local
// run does, with every call paid for once, the same result and the same
// figures; show lists each call once, and every execution's history
// replays.
func TestRollover(t *testing.T) {
	c := newClient(t)
	exec := newCounting()
	startWorker(t, c, "w1", executors.NewSet(exec))
	startWorker(t, c, "w2", executors.NewSet(exec))
	path := writeScript(t, "roll.workflow.js", rollScript)
	write(t, filepath.Join(filepath.Dir(path), "child.workflow.js"), rollChild)
	opts := engine.DefaultOptions()
	opts.Concurrency, opts.RetryBackoff = 3, time.Millisecond
	local, localDetail := runLocally(t, path, "", opts)

	b, script, err := BundleFile(c.hosts, path)
	if err != nil {
		t.Fatal(err)
	}
	in, err := c.Start(context.Background(), StartRequest{Bundle: b, Script: script, Options: opts, Cwd: filepath.Dir(path),
		Heartbeat: 5 * time.Second, RollEvents: 35})
	if err != nil {
		t.Fatal(err)
	}
	st := wait(t, c, in.RunID)
	if st.Status != engine.StatusCompleted || string(st.Result) != string(local.Result) {
		t.Fatalf("on Temporal: %s %s %s\nlocally: %s", st.Status, st.Result, st.Error, local.Result)
	}
	t.Logf("%d executions", st.Epoch+1)
	if st.Epoch < 3 {
		t.Errorf("the run ended in execution %d: it did not continue as new often enough to test it", st.Epoch)
	}
	if st.Stats.Live != local.Stats.Live || st.Stats.Failed != local.Stats.Failed || st.Stats.Replayed != 0 || st.Stats.Retried != local.Stats.Retried {
		t.Errorf("stats on Temporal %+v, locally %+v", st.Stats, local.Stats)
	}
	if twice := exec.ranTwice(); len(twice) > 0 {
		t.Errorf("paid twice: %v", twice)
	}
	d, err := c.Detail(context.Background(), in.RunID)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, call := range d.Calls {
		calls[call.Path]++
	}
	if len(d.Calls) != local.Stats.Agents+1 { // the checkpoint too
		t.Errorf("show lists %d calls, the local run made %d agent calls and a checkpoint", len(d.Calls), local.Stats.Agents)
	}
	for p, n := range calls {
		if n > 1 {
			t.Errorf("show lists %s %d times", p, n)
		}
	}
	if got, want := logLines(d.Logs), logLines(localDetail.Logs); got != want {
		t.Errorf("show's log on Temporal:\n%s\nlocally:\n%s", got, want)
	}
	continued := 0
	for _, x := range d.Executions {
		if x.End != nil && x.End.Status == string(StatusContinued) {
			continued++
		}
	}
	if continued != st.Epoch {
		t.Errorf("%d of %d executions continued as new: %+v", continued, st.Epoch+1, d.Executions)
	}
	replay(t, c, in.RunID)
}

// TestLargeRunPausedAndResumed pauses a run of large answers whose
// history rolled over, and resumes it: the resume replays every answer of
// every execution, from pages and blobs, and pays for none twice.
func TestLargeRunPausedAndResumed(t *testing.T) {
	c := newClient(t)
	big := newBigAnswers(100 << 10)
	startWorker(t, c, "w1", executors.NewSet(big))
	startWorker(t, c, "w2", executors.NewSet(big))
	path := writeScript(t, "big.workflow.js", bigFanOut(40, " [sleep=50ms]"))
	b, script, err := BundleFile(c.hosts, path)
	if err != nil {
		t.Fatal(err)
	}
	opts := engine.DefaultOptions()
	opts.Concurrency = 4
	in, err := c.Start(context.Background(), StartRequest{Bundle: b, Script: script, Options: opts, Cwd: filepath.Dir(path),
		Heartbeat: 5 * time.Second, RollEvents: 30})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, in.RunID, "20 answers over rollovers", func(st State) bool { return st.Stats.Live >= 20 && st.Epoch >= 1 })
	if err := c.Pause(context.Background(), in.RunID, "a test asked"); err != nil {
		t.Fatal(err)
	}
	paused := wait(t, c, in.RunID)
	if paused.Status != engine.StatusPaused {
		t.Fatalf("after pause: %s %s", paused.Status, paused.Error)
	}
	if _, err := c.Resume(context.Background(), in.RunID, ResumeRequest{}); err != nil {
		t.Fatal(err)
	}
	st := wait(t, c, in.RunID)
	if want := fmt.Sprint(40 * 100 << 10); st.Status != engine.StatusCompleted || string(st.Result) != want {
		t.Fatalf("after resume: %s %s %s", st.Status, st.Result, st.Error)
	}
	if st.Stats.Replayed < paused.Stats.Live || st.Stats.Replayed+st.Stats.Live != 40 {
		t.Errorf("the resume replayed %d and ran %d; %d had finished when it paused", st.Stats.Replayed, st.Stats.Live, paused.Stats.Live)
	}
	// An agent that answered as the pause cancelled it may have its answer
	// refused, and run again; an answer Temporal recorded never does.
	execs, err := c.readRun(context.Background(), in.RunID)
	if err != nil {
		t.Fatal(err)
	}
	answered := map[string]int{}
	for _, e := range execs {
		for _, r := range e.calls {
			if r.status == "done" {
				answered[r.input.Path]++
			}
		}
	}
	for path, n := range answered {
		if n > 1 {
			t.Errorf("%s was answered %d times", path, n)
		}
	}
	if len(answered) != 40 {
		t.Errorf("%d calls answered", len(answered))
	}
	replay(t, c, in.RunID)
}

// logLines is a log without its times, in order.
func logLines(logs []engine.LogLine) string {
	var b strings.Builder
	for _, l := range logs {
		fmt.Fprintf(&b, "%s %s %s\n", l.Scope, l.Level, l.Message)
	}
	return b.String()
}
