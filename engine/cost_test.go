package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// paid is an executor named like a real one that answers every call with
// the same usage, reporting no dollar figure (as codex does): the price
// table prices it. A call whose prompt holds "hold" waits until the test
// releases it (or its context ends), and says when it started.
type paid struct {
	name    string
	model   string
	usage   executors.Usage
	started chan string // the prompt of each attempt, as it starts
	release chan struct{}
	mu      sync.Mutex
	calls   int
}

func newPaid(name string) *paid {
	return &paid{name: name, model: "gpt-5.4", usage: executors.Usage{InputTokens: 100_000, OutputTokens: 10_000},
		started: make(chan string, 64), release: make(chan struct{})}
}

func (p *paid) Name() string                 { return p.name }
func (p *paid) Defaults() executors.Defaults { return executors.Defaults{Model: p.model} }

func (p *paid) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	p.mu.Lock()
	p.calls++
	p.mu.Unlock()
	if strings.Contains(req.Prompt, "hold") {
		p.started <- req.Prompt
		select {
		case <-p.release:
		case <-ctx.Done():
			// What a killed attempt used so far still counts.
			return executors.Result{Usage: executors.Usage{InputTokens: 1000}}, ctx.Err()
		}
	}
	return executors.Result{Text: "answer to " + req.Prompt, Usage: p.usage, Model: req.Model}, nil
}

func (p *paid) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// costHarness is a runtime whose executors are the simulator and a paid
// "codex" (gpt-5.4: $2.50 in, $15 out per million, so one call of the
// paid executor costs $0.40).
func costHarness(t *testing.T, configure func(*engine.Config)) (*harness, *paid) {
	p := newPaid("codex")
	h := newHarnessWith(t, simulate.Config{}, func(c *engine.Config) {
		c.Executors = executors.NewSet(simulate.New(simulate.Config{}), p)
		c.Hosts = lang.NewRegistry(jsvm.New(), star.New())
		configure(c)
	})
	return h, p
}

func paidOptions() engine.Options {
	o := testOptions()
	o.Executor, o.ExecutorSource = "codex", "flag"
	return o
}

// The dollar cap stops launching calls once what was spent and what the
// running calls are expected to cost would pass it, lets the running ones
// finish, pauses the run with the reason, and a resume with a higher cap
// goes on, replaying what finished.
func TestDollarCapPausesAndResumes(t *testing.T) {
	h, p := costHarness(t, func(c *engine.Config) {
		prices := cost.Builtin()
		// Nothing learned yet: a call is expected to cost what it does,
		// $0.40.
		prices.DefaultTokens = &executors.Usage{InputTokens: 100_000, OutputTokens: 10_000}
		c.Prices = prices
	})
	s := h.write("cap.workflow.js", `export const meta = { name: 'cap', description: 'ten paid calls, two at a time' }
return (await parallel(Array.from({ length: 10 }, (_, i) => () => agent('task ' + i)))).filter(Boolean).length`)
	opts := paidOptions()
	opts.Concurrency = 2
	opts.MaxCostUSD = 1.9 // four calls ($1.60) fit, a fifth ($2.00) does not
	o := h.run(s, "", opts)
	mustStatus(t, o, engine.StatusPaused)
	if !strings.Contains(o.PauseReason, "dollar cap") || !strings.Contains(o.PauseReason, "--max-cost $1.90") {
		t.Errorf("pause reason %q", o.PauseReason)
	}
	if p.count() != 4 || o.Stats.Live != 4 {
		t.Errorf("%d calls ran, %d finished; want 4 of them ($1.60) under a $1.90 cap", p.count(), o.Stats.Live)
	}
	if o.Stats.CostUSD < 1.59 || o.Stats.CostUSD > 1.61 {
		t.Errorf("the run cost $%v, want $1.60 (the table priced what the executor did not)", o.Stats.CostUSD)
	}
	d, _ := h.rt.Inspect(o.RunID)
	if d.Summary.MaxCostUSD != 1.9 || d.Summary.Stats.CostUSD < 1.59 {
		t.Errorf("the summary says cap $%v, spent $%v", d.Summary.MaxCostUSD, d.Summary.Stats.CostUSD)
	}

	// Raised to $3: what was spent ($1.60) counts, so three more fit.
	r := h.resume(o.RunID, engine.ResumeRequest{Options: func(o *engine.Options) { o.MaxCostUSD = 3 }})
	mustStatus(t, r, engine.StatusPaused)
	if p.count() != 7 || r.Stats.Replayed != 4 {
		t.Errorf("after raising the cap to $3: %d calls in all, %d replayed; want 7 and 4", p.count(), r.Stats.Replayed)
	}
	done := h.resume(o.RunID, engine.ResumeRequest{Options: func(o *engine.Options) { o.MaxCostUSD = 0 }})
	mustStatus(t, done, engine.StatusCompleted)
	if string(done.Result) != "10" || p.count() != 10 {
		t.Errorf("result %s after %d calls", done.Result, p.count())
	}
}

// A script's meta.maxCost caps a run that gives no --max-cost, in both
// languages.
func TestMetaMaxCost(t *testing.T) {
	for _, tc := range []struct{ file, text string }{
		{"m.workflow.js", `export const meta = { name: 'm', description: 'capped by its meta', maxCost: 0.5 }
await agent('one')
await agent('two')
return 'done'`},
		{"m.workflow.star", `meta = {"name": "m", "description": "capped by its meta", "maxCost": 0.5}
def main(args):
    agent("one")
    agent("two")
    return "done"
`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			h, p := costHarness(t, func(c *engine.Config) {
				prices := cost.Builtin()
				prices.DefaultTokens = &executors.Usage{InputTokens: 100_000, OutputTokens: 10_000}
				c.Prices = prices
			})
			o := h.run(h.write(tc.file, tc.text), "", paidOptions())
			mustStatus(t, o, engine.StatusPaused)
			if p.count() != 1 || !strings.Contains(o.PauseReason, "--max-cost $0.50") {
				t.Errorf("%d calls, pause %q: want one $0.40 call under the meta's $0.50", p.count(), o.PauseReason)
			}
		})
	}
}

// A user stops one running call: the script gets null from it (a required
// one throws), it is journaled as failed with class "stopped", and the run
// goes on. A restarted call's attempt is killed and it runs again; what the
// killed attempt used stays counted.
func TestStopAndRestartACall(t *testing.T) {
	h, p := costHarness(t, func(*engine.Config) {})
	s := h.write("ctl.workflow.js", `export const meta = { name: 'ctl', description: 'one call to steer' }
const [a, b] = await parallel([() => agent('hold a'), () => agent('plain b')])
return { a, b }`)
	r := h.start(s, "", paidOptions())
	<-p.started
	if err := h.rt.RestartCall(r.ID(), "/par.0/0/agent.0"); err != nil {
		t.Fatal(err)
	}
	<-p.started // the second attempt
	// 'plain b' answers at once, but on a busy machine not necessarily
	// before a's second attempt starts: wait for its end.
	waitCallStatus(t, h, r.ID(), "/par.0/1/agent.0", "done")
	if err := h.rt.RestartCall(r.ID(), "/par.0/1/agent.0"); !errors.Is(err, engine.ErrCallNotRunning) {
		t.Errorf("restarting a call that ended: %v", err)
	}
	p.release <- struct{}{}
	o := h.wait(r)
	mustStatus(t, o, engine.StatusCompleted)
	var res map[string]any
	_ = json.Unmarshal(o.Result, &res)
	if res["a"] != "answer to hold a" {
		t.Errorf("result %s", o.Result)
	}
	d, _ := h.rt.Inspect(o.RunID)
	a := callByPath(t, d, "/par.0/0/agent.0")
	if a.Attempts != 2 || a.Usage.InputTokens != 101_000 || o.Stats.Retried != 0 {
		t.Errorf("the restarted call: %d attempts, %d input tokens, %d retried; want 2, 101000 (the killed attempt's too), 0",
			a.Attempts, a.Usage.InputTokens, o.Stats.Retried)
	}

	for _, tc := range []struct {
		name, opts, want string
		status           engine.Status
	}{
		{"stopped gives null", "{}", `{"a":null,"b":"answer to plain b"}`, engine.StatusCompleted},
		{"stopped and required throws", "{required: true}", "", engine.StatusFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := h.write("stop.workflow.js", `export const meta = { name: 'stop', description: 'one call to stop' }
const b = await agent('plain b')
const a = await agent('hold a', `+tc.opts+`)
return { a, b }`)
			r := h.start(s, "", paidOptions())
			<-p.started
			if err := h.rt.StopCall(r.ID(), "/agent.1"); err != nil {
				t.Fatal(err)
			}
			o := h.wait(r)
			mustStatus(t, o, tc.status)
			if tc.status == engine.StatusCompleted {
				sameResult(t, o.Result, tc.want)
			} else if !strings.Contains(o.Error, "stopped by the user") {
				t.Errorf("error %q", o.Error)
			}
			d, _ := h.rt.Inspect(o.RunID)
			if len(d.Failures) != 1 || d.Failures[0].Class != "stopped" {
				t.Errorf("failures %+v: want the call, as stopped", d.Failures)
			}
		})
	}
}

func callByPath(t *testing.T, d *engine.Detail, path string) engine.CallDetail {
	t.Helper()
	for _, c := range d.Calls {
		if c.Path == path {
			return c
		}
	}
	t.Fatalf("no call %s", path)
	return engine.CallDetail{}
}

func sameResult(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	_ = json.Unmarshal(got, &g)
	_ = json.Unmarshal([]byte(want), &w)
	if fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("result %s, want %s", got, want)
	}
}

// forkScripts make three calls in a row, the second from the first's
// answer, then a fan-out, and ask at a checkpoint: the same in both
// languages.
var forkScripts = []struct{ file, text string }{
	{"f.workflow.js", `export const meta = { name: 'f', description: 'a fork' }
const a = await agent('first')
const b = await agent('second, after: ' + a)
const c = await agent('third, after: ' + b)
const ok = await checkpoint('Go on?', { default: true })
const fan = await parallel([1, 2].map(i => () => agent('fan ' + i + ' after ' + c)))
return { a, b, c, ok, fan }`},
	{"f.workflow.star", `meta = {"name": "f", "description": "a fork"}
def main(args):
    a = agent("first")
    b = agent("second, after: " + a)
    c = agent("third, after: " + b)
    ok = checkpoint("Go on?", default = True)
    fan = parallel([1, 2], lambda i: agent("fan %d after %s" % (i, c)))
    return {"a": a, "b": b, "c": c, "ok": ok, "fan": fan}
`},
}

// A fork replays every call before the one it is forked at (nothing paid),
// runs that one with the new prompt (or takes the given answer), and runs
// what follows live; a resume of the fork replays all of it.
func TestFork(t *testing.T) {
	for _, sc := range forkScripts {
		t.Run(sc.file, func(t *testing.T) {
			h, p := costHarness(t, func(*engine.Config) {})
			s := h.write(sc.file, sc.text)
			src := h.run(s, "", paidOptions())
			mustStatus(t, src, engine.StatusCompleted)
			before := p.count() // 5 agents

			prompt := "second, rewritten"
			r, err := h.rt.Fork(context.Background(), engine.ForkRequest{From: src.RunID, Path: "/agent.1", Prompt: &prompt})
			if err != nil {
				t.Fatal(err)
			}
			o := h.wait(r)
			mustStatus(t, o, engine.StatusCompleted)
			if o.RunID == src.RunID {
				t.Fatal("the fork is the same run")
			}
			if got := p.count() - before; got != 4 || o.Stats.Replayed != 1 || o.Stats.Live != 4 {
				t.Errorf("the fork ran %d calls, replayed %d, live %d; want the first replayed, the other 4 live", got, o.Stats.Replayed, o.Stats.Live)
			}
			var res map[string]any
			_ = json.Unmarshal(o.Result, &res)
			if res["b"] != "answer to second, rewritten" || !strings.Contains(fmt.Sprint(res["c"]), "rewritten") {
				t.Errorf("the fork's result %s", o.Result)
			}
			if o.Stats.CostUSD < 1.59 || o.Stats.CostUSD > 1.61 {
				t.Errorf("the fork cost $%v, want $1.60: the copied answer is not its cost", o.Stats.CostUSD)
			}
			d, _ := h.rt.Inspect(o.RunID)
			if d.Fork == nil || d.Fork.RunID != src.RunID || d.Fork.Path != "/agent.1" {
				t.Errorf("the fork's detail says %+v", d.Fork)
			}
			again := h.resume(o.RunID, engine.ResumeRequest{})
			mustStatus(t, again, engine.StatusCompleted)
			if p.count()-before != 4 || again.Stats.Live != 0 {
				t.Errorf("a resume of the fork ran %d more calls", again.Stats.Live)
			}
			sameResult(t, again.Result, string(o.Result))

			// A given answer at the checkpoint: every agent before it
			// replays, the fan-out after it runs live.
			n := p.count()
			g, err := h.rt.Fork(context.Background(), engine.ForkRequest{From: src.RunID, Path: "/checkpoint.0", Answer: json.RawMessage("false")})
			if err != nil {
				t.Fatal(err)
			}
			go2 := h.wait(g)
			mustStatus(t, go2, engine.StatusCompleted)
			if p.count()-n != 2 || go2.Stats.Replayed != 3 {
				t.Errorf("forked at the checkpoint: %d calls ran, %d replayed; want the fan-out's 2 and 3", p.count()-n, go2.Stats.Replayed)
			}
			var gres map[string]any
			_ = json.Unmarshal(go2.Result, &gres)
			if gres["ok"] != false {
				t.Errorf("the given answer did not reach the script: %s", go2.Result)
			}
			if _, err := h.rt.Fork(context.Background(), engine.ForkRequest{From: src.RunID, Path: "/checkpoint.0", Prompt: &prompt}); err == nil {
				t.Error("a checkpoint took a new prompt")
			}
			if _, err := h.rt.Fork(context.Background(), engine.ForkRequest{From: src.RunID, Path: "/agent.9"}); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("a fork at a call the run never made: %v", err)
			}
		})
	}
}

// A plan walks the script on the simulator standing in for the real
// executors, leaves nothing in the project's state, and says what each
// call would run on, routes included; its forecast learns from the
// workflow's earlier runs.
func TestPlan(t *testing.T) {
	h, p := costHarness(t, func(*engine.Config) {})
	s := h.write("plan.workflow.js", `export const meta = { name: 'plan', description: 'a plan', phases: ['Scan', 'Verify'] }
phase('Scan')
const found = await parallel(Array.from({ length: 6 }, (_, i) => () => agent('scan ' + i, { label: 'scan-' + (i + 1) })))
phase('Verify')
const pick = await checkpoint('Which?', { kind: 'select', choices: ['some', 'all'], default: 'all' })
await agent('verify ' + pick, { label: 'verify', model: 'gpt-5.5' })
return found.length`)
	opts := paidOptions()
	opts.Routes = []callpolicy.Route{{Match: "scan *", Model: "gpt-5.4-mini"}}
	before, _ := h.rt.List()
	plan, err := h.rt.Plan(context.Background(), engine.PlanRequest{Script: s, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := h.rt.List()
	if len(after) != len(before) || p.count() != 0 {
		t.Fatalf("the plan left %d runs and called the paid executor %d times", len(after)-len(before), p.count())
	}
	if plan.Status != engine.StatusCompleted || len(plan.Calls) != 7 {
		t.Fatalf("plan %s with %d calls: %s", plan.Status, len(plan.Calls), plan.Error)
	}
	for _, c := range plan.Calls {
		want := "gpt-5.4-mini"
		if c.Label == "verify" {
			want = "gpt-5.5"
		}
		if c.Executor != "codex" || c.Model != want {
			t.Errorf("%s (%s) would run on %s/%s, want codex/%s", c.Path, c.Label, c.Executor, c.Model, want)
		}
	}
	if len(plan.Checkpoints) != 1 || string(plan.Checkpoints[0].Assumed) != `"all"` {
		t.Errorf("checkpoints %+v", plan.Checkpoints)
	}
	f := plan.Forecast
	if len(f.Groups) != 2 || f.Groups[0].Pattern != "scan *" || f.Groups[0].Calls != 6 || f.Groups[0].Route != "scan *=gpt-5.4-mini" {
		t.Errorf("groups %+v", f.Groups)
	}
	if f.LearnedFrom != 0 || f.Basis[cost.BasisDefault] != 7 {
		t.Errorf("a first plan learned from %d runs, bases %v", f.LearnedFrom, f.Basis)
	}

	// After a real run, the plan knows what each call used: $0.40 at
	// gpt-5.4 is 100k in and 10k out.
	mustStatus(t, h.run(s, "", opts), engine.StatusCompleted)
	plan, err = h.rt.Plan(context.Background(), engine.PlanRequest{Script: s, Options: paidOptions()})
	if err != nil {
		t.Fatal(err)
	}
	f = plan.Forecast
	if f.LearnedFrom != 1 || f.Basis[cost.BasisPath] != 7 || f.Groups[0].PerCall.InputTokens != 100_000 {
		t.Errorf("learned from %d runs, bases %v, per call %+v", f.LearnedFrom, f.Basis, f.Groups[0].PerCall)
	}
	// Without the route the scans are on gpt-5.4 ($0.40 each), verify on
	// gpt-5.5 ($5 in, $30 out: $0.80).
	if f.USD < 6*0.4+0.8-1e-9 || f.USD > 6*0.4+0.8+1e-9 {
		t.Errorf("forecast $%v, want $3.20", f.USD)
	}
	if _, err := os.Stat(h.dir + "/.dynworkflow"); err == nil {
		t.Error("the plan wrote into the project")
	}
}

// answerer is a responder that answers every question with answer, and
// counts them.
type answerer struct {
	answer string
	mu     sync.Mutex
	asked  []string
}

func (a *answerer) Ask(_ context.Context, _, path string, req lang.CheckpointRequest) (json.RawMessage, error) {
	a.mu.Lock()
	a.asked = append(a.asked, path+": "+req.Prompt)
	a.mu.Unlock()
	return json.RawMessage(a.answer), nil
}

// A run whose forecast passes --confirm-above asks before its first agent:
// a no ends it before anything ran, a yes starts it (and is journaled, so
// a resume does not ask again), and nobody to ask refuses it.
func TestConfirmAbove(t *testing.T) {
	const text = `export const meta = { name: 'conf', description: 'three paid calls' }
await agent('a'); await agent('b'); await agent('c')
return 'done'`
	for _, tc := range []struct {
		name     string
		resp     engine.Responder
		limit    float64
		status   engine.Status
		calls    int
		contains string
	}{
		{"declined", &answerer{answer: "false"}, 1, engine.StatusFailed, 0, "was declined"},
		{"confirmed", &answerer{answer: "true"}, 1, engine.StatusCompleted, 3, ""},
		{"nobody to ask", nil, 1, engine.StatusFailed, 0, "pass --yes"},
		{"under the threshold", nil, 100, engine.StatusCompleted, 3, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, p := costHarness(t, func(c *engine.Config) { c.Responder = tc.resp })
			opts := paidOptions()
			opts.ConfirmAboveUSD = tc.limit
			o := h.run(h.write("c.workflow.js", text), "", opts)
			mustStatus(t, o, tc.status)
			if p.count() != tc.calls || !strings.Contains(o.Error, tc.contains) {
				t.Errorf("%d calls, error %q", p.count(), o.Error)
			}
			if a, ok := tc.resp.(*answerer); ok {
				if len(a.asked) != 1 || !strings.Contains(a.asked[0], engine.ConfirmPath+": This run is forecast to cost $") {
					t.Errorf("asked %q", a.asked)
				}
				if tc.status == engine.StatusCompleted {
					again := h.resume(o.RunID, engine.ResumeRequest{})
					mustStatus(t, again, engine.StatusCompleted)
					if len(a.asked) != 1 {
						t.Errorf("a resume asked again: %q", a.asked)
					}
				}
			}
		})
	}
}

// A routed call is journaled with its route and model; a resume under
// another route runs it again, since its fingerprint follows the model.
func TestRoutesJournaled(t *testing.T) {
	h, p := costHarness(t, func(*engine.Config) {})
	s := h.write("r.workflow.js", `export const meta = { name: 'r', description: 'routes' }
await agent('scan', { label: 'scan-1' })
await agent('report', { label: 'report' })
return 'ok'`)
	opts := paidOptions()
	opts.Routes = []callpolicy.Route{{Match: "scan *", Model: "gpt-5.4-nano", Source: "run"}}
	o := h.run(s, "", opts)
	mustStatus(t, o, engine.StatusCompleted)
	d, _ := h.rt.Inspect(o.RunID)
	scan, report := callByPath(t, d, "/agent.0"), callByPath(t, d, "/agent.1")
	if scan.Model != "gpt-5.4-nano" || scan.Route != "scan *=gpt-5.4-nano" || report.Route != "" || report.Model != "gpt-5.4" {
		t.Errorf("scan %s via %q, report %s via %q", scan.Model, scan.Route, report.Model, report.Route)
	}
	n := p.count()
	again := h.resume(o.RunID, engine.ResumeRequest{Options: func(o *engine.Options) { o.Routes = nil }})
	mustStatus(t, again, engine.StatusCompleted)
	if p.count()-n != 1 || again.Stats.Replayed != 1 {
		t.Errorf("without the route, %d calls ran again and %d replayed; want the scan again, the report replayed", p.count()-n, again.Stats.Replayed)
	}
}

// waitCallStatus waits until the detail of run id shows the call at path
// with status, and fails t after a minute.
func waitCallStatus(t *testing.T, h *harness, id, path, status string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		d, err := h.rt.Inspect(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Calls {
			if c.Path == path && c.Status == status {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the call %s of %s is not %s after a minute: %+v", path, id, status, d.Calls)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
