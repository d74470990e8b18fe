package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Each limit stops the run with a message that names the flag to change,
// and is reported in the run's log.
func TestLimitsAreReported(t *testing.T) {
	tests := []struct {
		name   string
		script string
		opts   func(*engine.Options)
		want   []string // in the run's error
	}{
		{
			name:   "agent cap",
			script: `for (let i = 0; i < 5; i++) await agent('step ' + i)`,
			opts:   func(o *engine.Options) { o.MaxAgents = 3 },
			want:   []string{"cap of 3 agents", "--max-agents"},
		},
		{
			name:   "item cap",
			script: `await parallel([1, 2, 3, 4, 5].map(i => () => agent('x ' + i)))`,
			opts:   func(o *engine.Options) { o.MaxItems = 4 },
			want:   []string{"5 items exceed the cap of 4", "--max-items"},
		},
		{
			name:   "token budget",
			script: `for (let i = 0; i < 100; i++) await agent('a long enough prompt to spend some tokens, number ' + i)`,
			opts:   func(o *engine.Options) { o.TokenBudget = 100 },
			want:   []string{"token budget is spent", "--token-budget"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, simulate.Config{})
			opts := testOptions()
			tc.opts(&opts)
			o := h.run(h.write("l.workflow.js", "export const meta = { name: 'l', description: 'limits' }\n"+tc.script), "", opts)
			mustStatus(t, o, engine.StatusFailed)
			for _, w := range tc.want {
				if !strings.Contains(o.Error, w) {
					t.Errorf("error %q lacks %q", o.Error, w)
				}
			}
			if !strings.Contains(o.Error, "l.workflow.js:") {
				t.Errorf("error %q does not name the script position", o.Error)
			}
			d, err := h.rt.Inspect(o.RunID)
			if err != nil {
				t.Fatal(err)
			}
			reported := false
			for _, l := range d.Logs {
				reported = reported || strings.HasPrefix(l.Message, "limit reached")
			}
			if !reported {
				t.Errorf("the limit is not in the run's log: %+v", d.Logs)
			}
		})
	}
}

// The budget is hard: no agent starts once it is spent, and the script sees
// spent() and remaining() move.
func TestBudgetGuardsALoop(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	opts := testOptions()
	opts.TokenBudget = 200
	o := h.run(h.write("b.workflow.js", `export const meta = { name: 'b', description: 'budget guard' }
let rounds = 0
while (budget.remaining() > 40) { await agent('round ' + rounds); rounds++ }
return { rounds, spent: budget.spent(), total: budget.total }`), "", opts)
	mustStatus(t, o, engine.StatusCompleted)
	var res struct{ Rounds, Spent, Total int }
	if err := json.Unmarshal(o.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.Rounds == 0 || res.Total != 200 || res.Spent > 200 || int64(res.Spent) != o.Stats.InputTokens+o.Stats.OutputTokens {
		t.Fatalf("result %+v stats %+v", res, o.Stats)
	}
}

func TestSchemaAnswers(t *testing.T) {
	const schema = `{ type: 'object', required: ['score'], properties: { score: { type: 'integer', minimum: 1, maximum: 5 } } }`
	tests := []struct {
		name     string
		prompt   string
		status   engine.Status
		attempts int
		inError  string
	}{
		{"valid at once", "rate this", engine.StatusCompleted, 1, ""},
		{"repaired after one bad answer", "[simulate:invalid-once] rate this", engine.StatusCompleted, 2, ""},
		{"never valid", "[simulate:invalid] rate this", engine.StatusFailed, 3, "did not satisfy the schema after 3 attempts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, simulate.Config{})
			o := h.run(h.write("s.workflow.js", `export const meta = { name: 's', description: 'schema' }
const r = await agent('`+tc.prompt+`', { schema: `+schema+` })
return r.score`), "", testOptions())
			mustStatus(t, o, tc.status)
			if !strings.Contains(o.Error, tc.inError) {
				t.Errorf("error %q lacks %q", o.Error, tc.inError)
			}
			d, err := h.rt.Inspect(o.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Calls) != 1 || d.Calls[0].Attempts != tc.attempts {
				t.Fatalf("calls %+v, want one call with %d attempts", d.Calls, tc.attempts)
			}
			if tc.status == engine.StatusCompleted {
				var score int
				if err := json.Unmarshal(o.Result, &score); err != nil || score < 1 || score > 5 {
					t.Errorf("result %s is not the validated score", o.Result)
				}
			} else if d.Calls[0].Status != "failed" {
				t.Errorf("the call is %s, want failed in the journal", d.Calls[0].Status)
			}
		})
	}
}

// A schema only the running script makes (a literal one fails at load:
// see TestLiteralOptionsAreCheckedAtLoad) is checked before the agent runs.
func TestBadSchemaThrowsBeforeRunning(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	o := h.run(h.write("b.workflow.js", `export const meta = { name: 'b', description: 'bad schema' }
await agent('x', { schema: JSON.parse('{"type": "no-such-type"}') })`), "", testOptions())
	mustStatus(t, o, engine.StatusFailed)
	if !strings.Contains(o.Error, "not a valid JSON Schema") || o.Stats.Agents != 0 {
		t.Fatalf("error %q stats %+v", o.Error, o.Stats)
	}
}

func TestRetriesAndFailures(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	opts := testOptions()
	opts.AgentRetries = 1
	o := h.run(h.write("r.workflow.js", `export const meta = { name: 'r', description: 'retries' }
const a = await agent('[simulate:transient] flaky')
const b = await agent('[simulate:fail] broken')
const c = await agent('[simulate:transient] flaky without retries', { retries: 0 })
return [a !== null, b, c]`), "", opts)
	mustStatus(t, o, engine.StatusCompleted)
	if string(o.Result) != `[true,null,null]` {
		t.Fatalf("result %s, want [true,null,null]: a retried transient failure succeeds, terminal and unretried ones give null", o.Result)
	}
	if o.Stats.Live != 1 || o.Stats.Failed != 2 {
		t.Fatalf("stats %+v", o.Stats)
	}
}

// A rate limit parks the run until the reset the provider gave: paused,
// with ResumeAt and the reason. A resume before the reset parks it again
// without calling the executor, unless the user asks to try now.
func TestRateLimitParksTheRunUntilTheReset(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	script := `export const meta = { name: 'rl', description: 'rate limit' }
const a = await agent('before')
const b = await agent('PROMPT')
return [a, b]`
	start := time.Now()
	o := h.run(h.write("rl.workflow.js", strings.Replace(script, "PROMPT", "[simulate:ratelimit=1h] limited", 1)), "", testOptions())
	mustStatus(t, o, engine.StatusPaused)
	if !strings.HasPrefix(o.PauseReason, "waiting for quota until ") || !strings.Contains(o.PauseReason, "simulated rate limit") {
		t.Fatalf("pause reason %q", o.PauseReason)
	}
	if o.ResumeAt == nil || o.ResumeAt.Before(start.Add(time.Hour)) || o.ResumeAt.After(time.Now().Add(time.Hour)) {
		t.Fatalf("resume at %v, want the reset an hour after the limit", o.ResumeAt)
	}
	edited := h.write("rl2.workflow.js", strings.Replace(script, "PROMPT", "no longer limited", 1))
	early := h.resume(o.RunID, engine.ResumeRequest{Script: edited})
	mustStatus(t, early, engine.StatusPaused)
	if early.Stats.Live != 0 || early.ResumeAt == nil || !early.ResumeAt.Equal(*o.ResumeAt) {
		t.Fatalf("an early resume: stats %+v, resume at %v; want it parked again, nothing run", early.Stats, early.ResumeAt)
	}
	// A user's resume before the reset tries now.
	resumed := h.resume(o.RunID, engine.ResumeRequest{Script: edited, TryNow: true})
	mustStatus(t, resumed, engine.StatusCompleted)
	if resumed.Stats.Replayed != 1 || resumed.Stats.Live != 1 {
		t.Fatalf("stats %+v", resumed.Stats)
	}
}

func TestCheckpointsHeadless(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	o := h.run(h.write("c.workflow.js", `export const meta = { name: 'c', description: 'checkpoints' }
const channel = await checkpoint('Which channel?', { kind: 'select', choices: ['beta', 'stable'], default: 'stable' })
const go = await checkpoint('Ship it?', { default: true })
return { channel, go }`), "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	if string(o.Result) != `{"channel":"stable","go":true}` {
		t.Fatalf("result %s", o.Result)
	}
	d, _ := h.rt.Inspect(o.RunID)
	if len(d.Calls) != 2 || d.Calls[0].Kind != "checkpoint" || d.Calls[0].Source != "headless-default" {
		t.Fatalf("checkpoint answers not journaled: %+v", d.Calls)
	}
	again := h.resume(o.RunID, engine.ResumeRequest{})
	if string(again.Result) != string(o.Result) {
		t.Fatalf("replayed answers differ: %s", again.Result)
	}

	aborted := h.run(h.write("a.workflow.js", `export const meta = { name: 'a', description: 'abort' }
await checkpoint('Delete production?')
return 'deleted'`), "", testOptions())
	mustStatus(t, aborted, engine.StatusFailed)
	if !strings.Contains(aborted.Error, "needs an answer") || !strings.Contains(aborted.Error, "a.workflow.js:2") {
		t.Fatalf("error %q", aborted.Error)
	}
	bad := h.run(h.write("bad.workflow.js", `export const meta = { name: 'b', description: 'bad' }
await checkpoint('Pick', { kind: 'select', choices: ['a'], default: 'z' })`), "", testOptions())
	if !strings.Contains(bad.Error, "not a valid answer") {
		t.Fatalf("error %q", bad.Error)
	}
}

func TestNestedWorkflows(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	h.write(".dynworkflow/workflows/child.workflow.js", `export const meta = { name: 'child', description: 'a saved child' }
const xs = await parallel(args.items.map(i => () => agent('child work ' + i)))
return xs.length`)
	h.write("lib/deeper.workflow.js", `export const meta = { name: 'deeper', description: 'tries to nest again' }
return await workflow('child', { items: [1] })`)
	o := h.run(h.write("parent.workflow.js", `export const meta = { name: 'parent', description: 'calls children' }
const byName = await workflow('child', { items: [1, 2, 3] })
const byPath = await workflow('./.dynworkflow/workflows/child.workflow.js', { items: [4] })
let nested = 'no error'
try { await workflow('lib/deeper.workflow.js') } catch (e) { nested = e.message }
return { byName, byPath, nested }`), "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	var res struct {
		ByName, ByPath int
		Nested         string
	}
	if err := json.Unmarshal(o.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.ByName != 3 || res.ByPath != 1 || !strings.Contains(res.Nested, "cannot start another") {
		t.Fatalf("result %s", o.Result)
	}
	d, _ := h.rt.Inspect(o.RunID)
	if d.Calls[0].Path != "/wf.0:child/par.0/0/agent.0" {
		t.Fatalf("child call path %s", d.Calls[0].Path)
	}
	missing := h.run(h.write("m.workflow.js", `export const meta = { name: 'm', description: 'missing child' }
return await workflow('nope')`), "", testOptions())
	if !strings.Contains(missing.Error, `no saved workflow named "nope"`) {
		t.Fatalf("error %q", missing.Error)
	}
}

// Event sequence numbers only go up, and a run's events tell its story.
func TestEventsAreSequenced(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	sub := h.rt.Events().Subscribe(4096, nil)
	o := h.run(h.write("e.workflow.js", `export const meta = { name: 'e', description: 'events' }
phase('One')
log('hello')
await parallel([1, 2, 3].map(i => () => agent('x ' + i)))`), "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	sub.Close()
	var last int64
	count := map[string]int{}
	for e := range sub.C {
		if e.Sequence <= last {
			t.Fatalf("sequence %d after %d", e.Sequence, last)
		}
		last = e.Sequence
		count[e.Type]++
	}
	want := map[string]int{engine.EventRunStarted: 1, engine.EventPhase: 1, engine.EventLog: 1, engine.EventCallStarted: 3, engine.EventCallFinished: 3, engine.EventRunStatus: 1}
	for typ, n := range want {
		if count[typ] != n {
			t.Errorf("%d %s events, want %d (all: %v)", count[typ], typ, n, count)
		}
	}
}

// silentResponder is a human who never answers.
type silentResponder struct{}

func (silentResponder) Ask(ctx context.Context, _, _ string, _ lang.CheckpointRequest) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, context.Cause(ctx)
}

// A checkpoint with timeoutMs that nobody answers in time falls back to its
// headless policy: the default, journaled as such, or abort.
func TestCheckpointTimeout(t *testing.T) {
	h := newHarnessWith(t, simulate.Config{}, func(c *engine.Config) { c.Responder = silentResponder{} })
	o := h.run(h.write("t.workflow.js", `export const meta = { name: 't', description: 'timeouts' }
return await checkpoint('Ship it?', { default: false, timeoutMs: 20 })`), "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	d, _ := h.rt.Inspect(o.RunID)
	if string(o.Result) != "false" || d.Calls[0].Source != "timeout-default" {
		t.Fatalf("result %s, source %q: want the default, journaled as a timeout", o.Result, d.Calls[0].Source)
	}
	aborted := h.run(h.write("a.workflow.js", `export const meta = { name: 'a', description: 'abort' }
return await checkpoint('Delete production?', { timeoutMs: 20 })`), "", testOptions())
	mustStatus(t, aborted, engine.StatusFailed)
	if !strings.Contains(aborted.Error, "nobody answered within 20ms") {
		t.Fatalf("error %q", aborted.Error)
	}
}

// A script that names its phases only in agent() (as the Node runtime's
// README does) begins each phase with its first call: one phase event and
// one journaled phase line per title, and the run's current phase follows.
func TestAgentPhasesBeginPhases(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	sub := h.rt.Events().Subscribe(4096, func(e engine.Event) bool { return e.Type == engine.EventPhase })
	o := h.run(h.write("p.workflow.js", `export const meta = { name: 'p', description: 'phases in agent()', phases: [{ title: 'Scan' }, { title: 'Fix' }] }
await parallel([1, 2, 3].map(i => () => agent('scan ' + i, { phase: 'Scan' })))
phase('Fix')
await agent('fix', { phase: 'Fix' })
await agent('scan again', { phase: 'Scan' })`), "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	sub.Close()
	var titles []string
	for e := range sub.C {
		titles = append(titles, e.Payload.(engine.PhasePayload).Title)
	}
	if strings.Join(titles, ",") != "Scan,Fix" {
		t.Errorf("phase events %q, want Scan then Fix once each", titles)
	}
	d, err := h.rt.Inspect(o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Summary.Phase != "Fix" {
		t.Errorf("the run's phase is %q, want Fix, the last phase begun", d.Summary.Phase)
	}
	phases := 0
	for _, l := range d.Logs {
		if l.Level == "phase" {
			phases++
		}
	}
	if phases != 2 {
		t.Errorf("%d phase lines in the log, want 2", phases)
	}
}
