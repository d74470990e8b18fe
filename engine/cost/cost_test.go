package cost_test

import (
	"math"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/executors"
)

func TestLookup(t *testing.T) {
	tab := cost.Builtin()
	for _, tc := range []struct{ model, id string }{
		{"claude-sonnet-5-5", "claude-sonnet-5-5"},
		{"sonnet", "claude-sonnet-5-5"},
		{"Haiku", "claude-haiku-5-5"},
		{"claude-opus-4-7[1m]", "claude-opus-4-7"},
		{"claude-sonnet-5-5-20261001", "claude-sonnet-5-5"},
		{"anthropic/claude-opus-4-7", "claude-opus-4-7"},
		{"gpt-5.4-mini", "gpt-5.4-mini"},
		{"gpt-5.4-mini-2026-03-01", "gpt-5.4-mini"},
		{"openai/gpt-5.5", "gpt-5.5"},
		{"gpt-5.7", ""},         // a version the table lacks is not gpt-5's price
		{"claude-sonnet-9", ""}, // nor is a family's next model
		{"qwen3-coder", ""},
		{"", ""},
	} {
		_, id, ok := tab.Lookup(tc.model)
		if id != tc.id || ok != (tc.id != "") {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tc.model, id, ok, tc.id)
		}
	}
	if tab.Taken == "" || len(tab.Sources) == 0 {
		t.Error("the built-in table says neither when nor where its prices were taken")
	}
	if err := tab.Check(); err != nil {
		t.Error(err)
	}
}

func TestCost(t *testing.T) {
	tab := cost.Builtin()
	u := executors.Usage{InputTokens: 1_000_000, CachedInputTokens: 400_000, OutputTokens: 100_000}
	// claude-sonnet-5-5: $2 in, $0.10 cached, $10 out per million.
	want := 0.6*2 + 0.4*0.1 + 0.1*10
	if got, ok := tab.Cost("sonnet", u); !ok || math.Abs(got-want) > 1e-9 {
		t.Errorf("Cost = %v, %v; want %v", got, ok, want)
	}
	u.CostUSD = 0.5
	if got, _ := tab.Cost("sonnet", u); got != 0.5 {
		t.Errorf("the CLI's own figure (0.5) gave %v", got)
	}
	if _, ok := tab.Cost("unknown-model", executors.Usage{InputTokens: 5}); ok {
		t.Error("a model without a price was priced")
	}
	if got, ok := tab.Cost("unknown-model", executors.Usage{}); !ok || got != 0 {
		t.Error("no usage should cost nothing, whatever the model")
	}
	var user cost.Table
	user.Models = map[string]cost.Price{"qwen3-coder": {Input: 1, Output: 2}}
	user.Aliases = map[string]string{"sonnet": "claude-sonnet-4-6"}
	tab.Merge(&user, "/u/prices.json")
	if _, id, _ := tab.Lookup("sonnet"); id != "claude-sonnet-4-6" {
		t.Errorf("the user's alias was not taken: %q", id)
	}
	if p, _, ok := tab.Lookup("qwen3-coder"); !ok || p.Output != 2 {
		t.Error("the user's model was not added")
	}
}

func TestPatterns(t *testing.T) {
	for label, want := range map[string]string{
		"scan-1":           "scan *",
		"scan-200":         "scan *",
		"review 3 of 9":    "review * of *",
		"lens-correctness": "lens-correctness",
		"v2":               "*",
		"check:file-ea3d1": "check:file *",
		"hunt:auth:3":      "hunt:auth:*",
		"":                 "",
	} {
		if got := cost.LabelPattern(label); got != want {
			t.Errorf("LabelPattern(%q) = %q, want %q", label, got, want)
		}
	}
	if got := cost.PathPattern("/pipe.0/17/s2/agent.0"); got != "/pipe.0/*/s2/agent.0" {
		t.Errorf("PathPattern = %q", got)
	}
	for _, tc := range []struct {
		pattern, s string
		ok         bool
	}{
		{"scan-*", "scan-12", true}, {"*", "", true}, {"a*c", "abbbc", true}, {"a*c", "abd", false},
		{"scan *", "scan-12", false}, {"/par.0/*", "/par.0/3/agent.0", true},
	} {
		if cost.Glob(tc.pattern, tc.s) != tc.ok {
			t.Errorf("Glob(%q, %q) = %v", tc.pattern, tc.s, !tc.ok)
		}
	}
	if !cost.LabelMatches("scan *", "scan-12") || cost.LabelMatches("scan *", "verify-1") {
		t.Error("a label pattern names the labels of its pattern, and only those")
	}
}

func TestForecast(t *testing.T) {
	est := cost.NewEstimates(executors.Usage{InputTokens: 1000, OutputTokens: 100})
	// An earlier run: scan calls used 10,000 in and 1,000 out each; the
	// verify call at its path used 500 in and 50 out.
	for i, path := range []string{"/par.0/0/agent.0", "/par.0/1/agent.0"} {
		est.Learn("run-a", path, "scan-"+string(rune('1'+i)), "Scan", "", executors.Usage{InputTokens: 10_000, OutputTokens: 1_000})
	}
	est.Learn("run-a", "/agent.1", "verify", "Verify", "", executors.Usage{InputTokens: 500, OutputTokens: 50})
	est.Learn("run-b", "/agent.1", "verify", "Verify", "claude-sonnet-4-6", executors.Usage{InputTokens: 1500, OutputTokens: 150})
	m := &cost.Model{Prices: cost.Builtin(), Estimates: est}
	calls := []cost.PlannedCall{
		{Path: "/par.0/0/agent.0", Label: "scan-1", Phase: "Scan", Executor: "claude-code", Model: "haiku"},
		{Path: "/par.0/7/agent.0", Label: "scan-8", Phase: "Scan", Executor: "claude-code", Model: "haiku"},
		{Path: "/agent.1", Label: "verify", Phase: "Verify", Executor: "claude-code"},
		{Path: "/agent.2", Label: "report", Phase: "Report", Executor: "codex", Model: "no-such-model"},
	}
	f := m.Build(calls)
	if f.Calls != 4 || len(f.Groups) != 3 || f.LearnedFrom != 2 {
		t.Fatalf("forecast %+v: want 4 calls in 3 groups, learned from 2 runs", f)
	}
	if f.Basis["path"] != 2 || f.Basis["group"] != 1 || f.Basis["default"] != 1 {
		t.Errorf("bases %v: want the scan call at a known path, the other by its group, verify by path, report by default", f.Basis)
	}
	scan := f.Groups[0]
	if scan.Pattern != "scan *" || scan.Calls != 2 || scan.PerCall.InputTokens != 10_000 {
		t.Errorf("scan group %+v", scan)
	}
	// haiku (claude-haiku-5-5): $0.10 in, $0.50 out per million.
	if want := 2 * (10_000*0.1 + 1_000*0.5) / 1e6; math.Abs(scan.USD-want) > 1e-12 {
		t.Errorf("scan group costs %v, want %v", scan.USD, want)
	}
	verify := f.Groups[1]
	if !verify.ModelAssumed || verify.PricedAs != "claude-sonnet-4-6" || verify.PerCall.InputTokens != 1000 {
		t.Errorf("verify group %+v: want the model that answered it before, and the mean of its two runs", verify)
	}
	if len(f.Unpriced) != 1 || f.Unpriced[0] != "no-such-model" {
		t.Errorf("unpriced %v", f.Unpriced)
	}
	sum := 0.0
	for _, g := range f.Groups {
		sum += g.USD
	}
	if math.Abs(sum-f.USD) > 1e-12 {
		t.Errorf("the groups add up to %v, the forecast says %v", sum, f.USD)
	}
}
