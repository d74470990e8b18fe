package callpolicy_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// limitsHost records the limits the policy reports.
type limitsHost struct {
	host
	hits *[]string
}

func (h limitsHost) LimitHit(limit, msg string) { *h.hits = append(*h.hits, limit+": "+msg) }

// priced is a Launcher whose every attempt uses usage and answers.
type priced struct{ usage executors.Usage }

func (p priced) Launch(context.Context, callpolicy.Attempt) callpolicy.AttemptResult {
	return callpolicy.AttemptResult{Value: json.RawMessage(`"ok"`), Result: executors.Result{Usage: p.usage, Model: "claude-sonnet-5-5"}}
}
func (priced) Wait(context.Context, time.Duration) error { return nil }
func (priced) Retrying(callpolicy.Retry)                 {}

// TestDollarCap checks the cap looks ahead: a call starts only while what
// was spent, what the calls running are expected to cost and its own
// expected cost stay within the cap; the first refusal is reported once,
// with what was spent, and every call after it is refused too.
func TestDollarCap(t *testing.T) {
	// Every call is expected to use a million input tokens on sonnet
	// 5.5: $2.
	est := cost.NewEstimates(executors.Usage{InputTokens: 1_000_000})
	var hits []string
	limits := callpolicy.Limits{Executor: "claude-code", Model: "sonnet", MaxAgents: 100, MaxItems: 10, SchemaAttempts: 1,
		MaxCostUSD: 5, Cost: &cost.Model{Prices: cost.Builtin(), Estimates: est}}
	x := callpolicy.NewExecution("run", 0, limits, nil, limitsHost{hits: &hits})
	root := callpolicy.NewFrame("", callpolicy.Identity{}, lang.Meta{}, nil).Root()
	call := func() *callpolicy.Call {
		c, err := x.Agent(context.Background(), root, "p", lang.AgentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b, c := call(), call(), call()
	if err := a.Begin(context.Background()); err != nil {
		t.Fatalf("the first $2 call under a $5 cap: %v", err)
	}
	if err := b.Begin(context.Background()); err != nil {
		t.Fatalf("the second, $4 expected in all: %v", err)
	}
	err := c.Begin(context.Background())
	if !errors.Is(err, callpolicy.ErrCostCap) {
		t.Fatalf("a third call, $6 expected in all, started under a $5 cap: %v", err)
	}
	var ce *callpolicy.Error
	if !errors.As(err, &ce) || ce.Code != callpolicy.CodeCostCap || !strings.Contains(err.Error(), "$4.00 expected of the 2 calls running") {
		t.Errorf("the cap's error: %v", err)
	}
	if len(hits) != 1 || !strings.HasPrefix(hits[0], "cost: ") {
		t.Errorf("limits reported %q, want the cost cap once", hits)
	}
	// The first call answers having used $1 (500k tokens, CLI reported no
	// cost: the table prices it); it is spent now, no longer expected.
	o := a.RunLive(context.Background(), priced{executors.Usage{InputTokens: 500_000}})
	if o.Usage.CostUSD != 1 {
		t.Errorf("the table priced 500k sonnet input tokens at $%v, want $1", o.Usage.CostUSD)
	}
	spent, held, limit := x.Spend()
	if spent != 1 || held != 2 || limit != 5 {
		t.Errorf("spend %v, held %v, cap %v; want 1, 2 (the call still running), 5", spent, held, limit)
	}
	// Once refused, always refused: the run pauses when the running calls
	// end, and a resume with a higher cap goes on.
	if err := call().Begin(context.Background()); !errors.Is(err, callpolicy.ErrCostCap) || len(hits) != 1 {
		t.Errorf("after the cap, a call started (%v) or the cap was reported again (%d)", err, len(hits))
	}
	b.RunLive(context.Background(), priced{executors.Usage{InputTokens: 1_000_000, CostUSD: 3.25}})
	if spent, held, _ := x.Spend(); math.Abs(spent-4.25) > 1e-9 || held != 0 {
		t.Errorf("after both calls: spent %v, held %v; want 4.25 (the CLI's own figure counts), 0", spent, held)
	}
	// A resume's execution starts from what the run spent before.
	limits.MaxCostUSD = 7
	y := callpolicy.NewExecution("run", 1, limits, nil, limitsHost{hits: &hits})
	y.SetSpentUSD(4.25)
	c2, _ := y.Agent(context.Background(), callpolicy.NewFrame("", callpolicy.Identity{}, lang.Meta{}, nil).Root(), "p", lang.AgentOptions{})
	if err := c2.Begin(context.Background()); err != nil {
		t.Errorf("$4.25 spent and $2 expected under a raised $7 cap: %v", err)
	}
}

func TestRoutes(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want callpolicy.Route
		err  string
	}{
		{"scan *=haiku", callpolicy.Route{Match: "scan *", Model: "haiku"}, ""},
		{"phase:Verify=sonnet,effort=low", callpolicy.Route{Phase: "Verify", Model: "sonnet", Effort: "low"}, ""},
		{"phase:Verify | check-*=executor=pi", callpolicy.Route{Phase: "Verify", Match: "check-*", Executor: "pi"}, ""},
		{"/par.0/*=model=gpt-5.4-mini", callpolicy.Route{Match: "/par.0/*", Model: "gpt-5.4-mini"}, ""},
		{"scan *", callpolicy.Route{}, "write SELECTOR=MODEL"},
		{"scan *=haiku,effort=huge", callpolicy.Route{}, "effort must be one of"},
		{"scan *=haiku,temperature=1", callpolicy.Route{}, "is not model=, effort= or executor="},
	} {
		r, err := callpolicy.ParseRoute(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRoute(%q): %v, want an error with %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || r != tc.want {
			t.Errorf("ParseRoute(%q) = %+v, %v; want %+v", tc.spec, r, err, tc.want)
		}
		if back, err := callpolicy.ParseRoute(r.String()); err != nil || back != r {
			t.Errorf("%q does not read back: %+v, %v", r.String(), back, err)
		}
	}

	routes := []callpolicy.Route{{Match: "scan *", Model: "haiku"}, {Phase: "Verify", Model: "opus", Effort: "high"}}
	limits := callpolicy.Limits{Executor: "claude-code", Model: "sonnet", Routes: routes}
	defaults := func(string) executors.Defaults { return executors.Defaults{Model: "configured"} }
	for _, tc := range []struct {
		label, phase, model string
		opts                lang.AgentOptions
		want, effort, route string
	}{
		{label: "scan-12", want: "haiku", route: "scan *=haiku"},
		{label: "scan-12", opts: lang.AgentOptions{Model: "opus"}, want: "haiku", route: "scan *=haiku"}, // the route wins over the script
		{label: "verify", phase: "Verify", want: "opus", effort: "high", route: "phase:Verify=opus,effort=high"},
		{label: "report", want: "sonnet"},
	} {
		tc.opts.Label = tc.label
		s := callpolicy.Resolve("/agent.0", tc.phase, tc.opts, "", limits, defaults)
		if s.Model != tc.want || s.Effort != tc.effort || s.Route != tc.route {
			t.Errorf("%s in %q: model %q effort %q route %q; want %q %q %q", tc.label, tc.phase, s.Model, s.Effort, s.Route, tc.want, tc.effort, tc.route)
		}
	}
	// The fingerprint follows the routed model: a resume under another
	// route runs the call again.
	x := callpolicy.NewExecution("run", 0, callpolicy.Limits{Executor: "claude-code", MaxAgents: 10, MaxItems: 10}, nil, host{})
	y := callpolicy.NewExecution("run", 0, callpolicy.Limits{Executor: "claude-code", MaxAgents: 10, MaxItems: 10, Routes: routes[:1]}, nil, host{})
	root := func() *callpolicy.Scope {
		return callpolicy.NewFrame("", callpolicy.Identity{}, lang.Meta{}, nil).Root()
	}
	plain, _ := x.Agent(context.Background(), root(), "p", lang.AgentOptions{Label: "scan-1"})
	routed, _ := y.Agent(context.Background(), root(), "p", lang.AgentOptions{Label: "scan-1"})
	if plain.FP == routed.FP || routed.Model != "haiku" {
		t.Errorf("a routed call kept its fingerprint (%s) or its model (%q)", routed.FP, routed.Model)
	}
}

// control is a Launcher whose attempts the test stops or restarts.
type control struct {
	actions  []error // what the user does to each attempt, nil for nothing
	attempts int
	retries  []string
}

func (c *control) Launch(_ context.Context, a callpolicy.Attempt) callpolicy.AttemptResult {
	c.attempts++
	res := callpolicy.AttemptResult{Result: executors.Result{Usage: executors.Usage{InputTokens: 100}}}
	if a.N <= len(c.actions) && c.actions[a.N-1] != nil {
		res.Err = c.actions[a.N-1]
		return res
	}
	res.Value = json.RawMessage(`"answer"`)
	return res
}
func (*control) Wait(context.Context, time.Duration) error { return nil }
func (c *control) Retrying(r callpolicy.Retry)             { c.retries = append(c.retries, r.Class) }

func TestStopAndRestart(t *testing.T) {
	limits := callpolicy.Limits{Executor: "sim", MaxAgents: 10, MaxItems: 10, AgentRetries: 0, SchemaAttempts: 1}
	for _, tc := range []struct {
		name     string
		actions  []error
		required bool
		kind     callpolicy.OutcomeKind
		attempts int
		value    string
		throws   bool
	}{
		{"restarted twice, then answers", []error{callpolicy.ErrCallRestarted, callpolicy.ErrCallRestarted}, false, callpolicy.Answered, 3, `"answer"`, false},
		{"stopped gives null", []error{callpolicy.ErrCallStopped}, false, callpolicy.GaveUp, 1, "null", false},
		{"stopped and required throws", []error{callpolicy.ErrCallStopped}, true, callpolicy.GaveUp, 1, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := callpolicy.NewExecution("run", 0, limits, nil, host{})
			c, _ := x.Agent(context.Background(), callpolicy.NewFrame("", callpolicy.Identity{}, lang.Meta{}, nil).Root(), "p",
				lang.AgentOptions{Required: tc.required})
			l := &control{actions: tc.actions}
			o := c.RunLive(context.Background(), l)
			if o.Kind != tc.kind || o.Attempts != tc.attempts {
				t.Fatalf("kind %d after %d attempts (%v); want %d after %d", o.Kind, o.Attempts, o.Err, tc.kind, tc.attempts)
			}
			if x.Counts.Retried.Load() != 0 {
				t.Error("a restart counted as a retry")
			}
			if o.Usage.InputTokens != int64(100*tc.attempts) {
				t.Errorf("the call cost %d tokens, want every attempt's (%d): what a killed attempt used stays counted", o.Usage.InputTokens, 100*tc.attempts)
			}
			if o.Kind == callpolicy.Answered {
				if string(o.Value) != tc.value || strings.Count(strings.Join(l.retries, " "), "restarted") != 2 {
					t.Errorf("value %s, retries %q", o.Value, l.retries)
				}
				return
			}
			if callpolicy.FailureClass(o.Err) != "stopped" {
				t.Errorf("a stopped call's class is %q", callpolicy.FailureClass(o.Err))
			}
			v, err := c.ForScript(o)
			if tc.throws != (err != nil) || !tc.throws && string(v) != tc.value {
				t.Errorf("the script gets %s, %v", v, err)
			}
		})
	}
}

func TestOverride(t *testing.T) {
	prompt := "the new prompt"
	id := callpolicy.Identity{Script: "s"}
	limits := func(ov callpolicy.Override) callpolicy.Limits {
		return callpolicy.Limits{Executor: "sim", MaxAgents: 10, MaxItems: 10, Overrides: []callpolicy.Override{ov}}
	}
	// calls makes the script's two calls in execution epoch.
	calls := func(epoch int, l callpolicy.Limits, ledger *callpolicy.Ledger) (a, b *callpolicy.Call) {
		x := callpolicy.NewExecution("run", epoch, l, ledger, host{})
		f := callpolicy.NewFrame("", id, lang.Meta{}, nil)
		a, _ = x.Agent(context.Background(), f.Root(), "first", lang.AgentOptions{})
		b, err := x.Agent(context.Background(), f.Root(), "second", lang.AgentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
	// answered is a ledger in which execution 0 answered both calls.
	answered := func() *callpolicy.Ledger {
		ledger := callpolicy.NewLedger()
		ledger.Ran(callpolicy.Run{Epoch: 0, Identity: id})
		a, b := calls(0, callpolicy.Limits{Executor: "sim", MaxAgents: 10, MaxItems: 10}, nil)
		for _, c := range []*callpolicy.Call{a, b} {
			ledger.Note(callpolicy.Record{Epoch: 0, Path: c.Path, FP: c.FP, Kind: callpolicy.Finished, Result: json.RawMessage(`"old"`)})
		}
		ledger.Ran(callpolicy.Run{Epoch: 1, Identity: id})
		return ledger
	}
	for _, tc := range []struct {
		name  string
		ov    callpolicy.Override
		given string
	}{
		{"run again as it was", callpolicy.Override{Path: "/agent.1", Since: 1}, ""},
		{"another prompt", callpolicy.Override{Path: "/agent.1", Since: 1, Prompt: &prompt}, ""},
		{"a given answer", callpolicy.Override{Path: "/agent.1", Since: 1, Answer: json.RawMessage(`"given"`)}, `"given"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := calls(1, limits(tc.ov), answered())
			if a.Prior == nil {
				t.Error("the call before the fork did not replay")
			}
			if b.Prior != nil || string(b.Given) != tc.given {
				t.Errorf("the forked call: prior %v, given %s", b.Prior, b.Given)
			}
			if tc.ov.Prompt != nil && b.Prompt != prompt {
				t.Errorf("the forked call's prompt is %q", b.Prompt)
			}
		})
	}
	t.Run("a resume of the fork replays what it answered", func(t *testing.T) {
		ov := callpolicy.Override{Path: "/agent.1", Since: 1, Prompt: &prompt}
		_, b := calls(1, limits(ov), answered())
		// Execution 2 reads the journal again: a fresh ledger.
		ledger := answered()
		ledger.Note(callpolicy.Record{Epoch: 1, Path: b.Path, FP: b.FP, Kind: callpolicy.Finished, Result: json.RawMessage(`"new"`)})
		ledger.Ran(callpolicy.Run{Epoch: 2, Identity: id})
		a2, b2 := calls(2, limits(ov), ledger)
		if a2.Prior == nil || b2.Prior == nil || string(b2.Prior.Result) != `"new"` {
			t.Errorf("execution 2 replays %v and %v; want both, the fork's answer for the second", a2.Prior, b2.Prior)
		}
	})
}
