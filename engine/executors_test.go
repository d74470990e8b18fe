package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/lang"
)

func langSource(dir, name, text string) lang.Source {
	return lang.Source{Path: dir + "/" + name, Text: []byte(text)}
}

// probe is an executor that answers with what it was asked to run with, so
// a test sees what reached the executor, and that can be made unavailable
// from a given call on.
type probe struct {
	name     string
	defaults executors.Defaults
	// failFrom, when positive, is the number (in launch order) of the
	// first call that fails as unavailable; every later one fails too.
	failFrom int
	// delay holds each call back, so that calls overlap.
	delay time.Duration

	mu       sync.Mutex
	launched int
	// launchedAtFailure is launched when the first failure was returned.
	launchedAtFailure int
	failed            bool
}

func (p *probe) Name() string                 { return p.name }
func (p *probe) Defaults() executors.Defaults { return p.defaults }
func (p *probe) Describe() executors.Definition {
	return executors.Definition{Name: p.name, Kind: "command", Model: p.defaults.Model}
}

// launchedAfterFailure is how many calls were launched once the first
// unavailable failure had been returned.
func (p *probe) launchedAfterFailure() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.failed {
		return 0
	}
	return p.launched - p.launchedAtFailure
}

func (p *probe) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	p.mu.Lock()
	p.launched++
	fail := p.failFrom > 0 && p.launched >= p.failFrom
	p.mu.Unlock()
	select {
	case <-time.After(p.delay):
	case <-ctx.Done():
		return executors.Result{}, ctx.Err()
	}
	if fail {
		p.mu.Lock()
		if !p.failed {
			p.failed, p.launchedAtFailure = true, p.launched
		}
		p.mu.Unlock()
		return executors.Result{}, &executors.Error{Class: executors.Unavailable, Message: "probe: 401 not logged in", Fix: "log the probe in"}
	}
	return executors.Result{Text: fmt.Sprintf("model=%s effort=%s permissions=%s", req.Model, req.Effort, req.Permissions),
		Usage: executors.Usage{InputTokens: 1, OutputTokens: 1}}, nil
}

// TestCallSettingsPrecedence: a call's model, effort and permissions come
// from its own options, else the run's, else the executor's configuration,
// else the built-in default; the run's model applies only to its own
// executor; Claude Code's read-only agent types run read-only. What the
// executor received is what the journal records.
func TestCallSettingsPrecedence(t *testing.T) {
	configured := executors.Defaults{Model: "conf-model", Effort: "low", Permissions: executors.FullAccess}
	tests := []struct {
		name     string
		call     string // agent() options
		run      func(*engine.Options)
		defaults executors.Defaults
		want     string
	}{
		{"built-in defaults", `{}`, nil, executors.Defaults{}, "model= effort= permissions=workspace-write"},
		{"executor configuration", `{}`, nil, configured, "model=conf-model effort=low permissions=full-access"},
		{"run over configuration", `{}`, func(o *engine.Options) { o.Model, o.Permissions = "run-model", executors.ReadOnly }, configured,
			"model=run-model effort=low permissions=read-only"},
		{"call over run", `{model: 'call-model', effort: 'high', permissions: 'workspace-write'}`,
			func(o *engine.Options) { o.Model, o.Permissions = "run-model", executors.ReadOnly }, configured,
			"model=call-model effort=high permissions=workspace-write"},
		{"read-only agent type", `{agentType: 'Explore'}`, func(o *engine.Options) { o.Permissions = executors.FullAccess }, configured,
			"model=conf-model effort=low permissions=read-only"},
		{"permissions over agent type", `{agentType: 'Plan', permissions: 'full-access'}`, nil, executors.Defaults{},
			"model= effort= permissions=full-access"},
		{"run model is for the run's executor only", `{executor: 'other'}`, func(o *engine.Options) { o.Model = "run-model" }, configured,
			"model=conf-model effort=low permissions=full-access"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			main := &probe{name: "main", defaults: tc.defaults}
			other := &probe{name: "other", defaults: tc.defaults}
			h := newHarnessWith(t, simulate.Config{}, func(c *engine.Config) { c.Executors = executors.NewSet(main, other) })
			opts := testOptions()
			opts.Executor = "main"
			if tc.run != nil {
				tc.run(&opts)
			}
			o := h.run(h.write("p.workflow.js", `export const meta = { name: 'p', description: 'precedence' }
return await agent('go', `+tc.call+`)`), "", opts)
			mustStatus(t, o, engine.StatusCompleted)
			var got string
			if err := json.Unmarshal(o.Result, &got); err != nil || got != tc.want {
				t.Fatalf("the executor got %s, want %q", o.Result, tc.want)
			}
			d, err := h.rt.Inspect(o.RunID)
			if err != nil {
				t.Fatal(err)
			}
			c := d.Calls[0]
			if recorded := fmt.Sprintf("model=%s effort=%s permissions=%s", c.Model, c.Effort, c.Permissions); recorded != tc.want {
				t.Errorf("the journal records %q, want %q", recorded, tc.want)
			}
		})
	}
}

// TestPermissionsChangeTheFingerprint: a call that ran read-only is not
// replayed for the same call asked to write, and the default policy keeps
// the fingerprints of journals written before policies existed.
func TestPermissionsChangeTheFingerprint(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	script := h.write("f.workflow.js", `export const meta = { name: 'f', description: 'fingerprint' }
return await agent('look around')`)
	opts := testOptions()
	opts.Permissions = executors.ReadOnly
	o := h.run(script, "", opts)
	mustStatus(t, o, engine.StatusCompleted)
	same := h.resume(o.RunID, engine.ResumeRequest{})
	if same.Stats.Replayed != 1 {
		t.Fatalf("an unchanged resume replayed %d calls, want 1", same.Stats.Replayed)
	}
	writes := h.resume(o.RunID, engine.ResumeRequest{Options: func(o *engine.Options) { o.Permissions = executors.WorkspaceWrite }})
	if writes.Stats.Replayed != 0 || writes.Stats.Live != 1 {
		t.Fatalf("after the policy changed: %+v, want the call to run again", writes.Stats)
	}
}

// TestUnavailableExecutorPausesTheRun is the engine's half of Must-show 2:
// once the executor says it cannot serve any call, the run stops launching
// calls and pauses with the executor's name, the cause and the fix; after
// the fix a resume completes it, replaying every call that had finished.
func TestUnavailableExecutorPausesTheRun(t *testing.T) {
	p := &probe{name: "main", delay: time.Millisecond, failFrom: 40}
	h := newHarnessWith(t, simulate.Config{}, func(c *engine.Config) { c.Executors = executors.NewSet(p) })
	opts := testOptions()
	opts.Executor, opts.Concurrency = "main", 8
	script := h.write("u.workflow.js", `export const meta = { name: 'u', description: 'unavailable' }
const out = await parallel(Array.from({ length: 200 }, (_, i) => () => agent('task ' + i)))
return out.filter(x => x !== null).length`)
	o := h.run(script, "", opts)
	mustStatus(t, o, engine.StatusPaused)
	for _, want := range []string{"executor main is unavailable", "401 not logged in", "Fix: log the probe in"} {
		if !strings.Contains(o.PauseReason, want) {
			t.Errorf("pause reason %q lacks %q", o.PauseReason, want)
		}
	}
	if after := p.launchedAfterFailure(); after > opts.Concurrency {
		t.Errorf("%d calls were launched once the executor had failed, want at most the concurrency, %d", after, opts.Concurrency)
	}
	if o.Stats.Failed != 0 {
		t.Errorf("%d calls were journaled as failed; an unavailable executor fails none", o.Stats.Failed)
	}
	finished := o.Stats.Live
	if finished == 0 || finished >= 40 {
		t.Fatalf("%d calls finished before the failures began at call 40", finished)
	}
	p.failFrom = 0 // fixed
	resumed := h.resume(o.RunID, engine.ResumeRequest{})
	mustStatus(t, resumed, engine.StatusCompleted)
	if string(resumed.Result) != "200" || resumed.Stats.Replayed != finished || resumed.Stats.Live != 200-finished {
		t.Fatalf("resume: result %s, stats %+v; want 200 answers with the %d finished calls replayed", resumed.Result, resumed.Stats, finished)
	}
}

// TestUnknownExecutorPauses: a call naming an executor nobody defined
// pauses the run with a fix, instead of giving null.
func TestUnknownExecutorPauses(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	o := h.run(h.write("x.workflow.js", `export const meta = { name: 'x', description: 'unknown executor' }
return await agent('hi', { executor: 'nosuch' })`), "", testOptions())
	mustStatus(t, o, engine.StatusPaused)
	if !strings.Contains(o.PauseReason, `executor nosuch is unavailable`) || !strings.Contains(o.PauseReason, "--command-executor") {
		t.Fatalf("pause reason %q", o.PauseReason)
	}
}

// TestFailureSummary: the outcome and the run's detail group failed calls
// by cause, with the count, the first call path and the message.
func TestFailureSummary(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	o := h.run(h.write("s.workflow.js", `export const meta = { name: 's', description: 'summary' }
const out = await parallel(Array.from({ length: 12 }, (_, i) => () =>
  agent(i % 3 === 0 ? '[simulate:fail] broken' : i % 3 === 1 ? 'fine ' + i : '[simulate:transient] flaky', { retries: 0 })))
return out.filter(x => x !== null).length`), "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	if len(o.Failures) != 2 {
		t.Fatalf("failures %+v, want two causes", o.Failures)
	}
	for _, g := range o.Failures {
		if g.Count != 4 {
			t.Errorf("group %+v, want 4 calls", g)
		}
	}
	byClass := map[string]engine.FailureGroup{}
	for _, g := range o.Failures {
		byClass[g.Class] = g
	}
	if g := byClass["terminal"]; g.FirstPath != "/par.0/0/agent.0" || g.Message == "" {
		t.Errorf("terminal group %+v, want first path /par.0/0/agent.0", g)
	}
	if g := byClass["transient"]; g.FirstPath != "/par.0/2/agent.0" {
		t.Errorf("transient group %+v, want first path /par.0/2/agent.0", g)
	}
	d, err := h.rt.Inspect(o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(d.Failures) != fmt.Sprint(o.Failures) {
		t.Errorf("show's failures %+v differ from the outcome's %+v", d.Failures, o.Failures)
	}
}

// TestResumeRebuildsJournaledExecutors: an executor the first execution
// had (a --command-executor) and the resuming runtime lacks is rebuilt
// from the journal, and the run completes.
func TestResumeRebuildsJournaledExecutors(t *testing.T) {
	p := &probe{name: "extra"}
	h := newHarnessWith(t, simulate.Config{}, func(c *engine.Config) {
		c.Executors = executors.NewSet(simulate.New(simulate.Config{}), p)
	})
	opts := testOptions()
	opts.Executor = "extra"
	script := `export const meta = { name: 'j', description: 'journaled executors' }
const a = await agent('one')
const b = await agent('PROMPT', { executor: 'simulate' })
return [a, b]`
	o := h.run(h.write("j.workflow.js", strings.Replace(script, "PROMPT", "[simulate:ratelimit=1ms] two", 1)), "", opts)
	mustStatus(t, o, engine.StatusPaused)

	// A new runtime over the same state, without the extra executor.
	var restored []executors.Definition
	rt, err := engine.New(engine.Config{Store: h.rt.Store(), Hosts: h.rt.Hosts(), Cwd: h.dir,
		Executors: executors.NewSet(simulate.New(simulate.Config{})),
		Restore: func(def executors.Definition) (executors.Executor, error) {
			restored = append(restored, def)
			return &probe{name: def.Name}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	edited, err := rt.Hosts().Load(langSource(h.dir, "j2.workflow.js", strings.Replace(script, "PROMPT", "two", 1)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := rt.Resume(context.Background(), o.RunID, engine.ResumeRequest{Script: edited})
	if err != nil {
		t.Fatalf("resume without the executor: %v", err)
	}
	resumed := h.wait(r)
	mustStatus(t, resumed, engine.StatusCompleted)
	if len(restored) != 1 || restored[0].Name != "extra" || restored[0].Kind != "command" {
		t.Fatalf("restored %+v, want the journaled definition of extra", restored)
	}
	if resumed.Stats.Replayed != 1 || resumed.Stats.Live != 1 {
		t.Errorf("stats %+v, want the call on extra replayed", resumed.Stats)
	}
}
