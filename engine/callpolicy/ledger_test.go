package callpolicy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// host is a Host with no executor configuration and no schemas.
type host struct{}

func (host) Defaults(string) executors.Defaults                { return executors.Defaults{} }
func (host) Schema(json.RawMessage) (callpolicy.Schema, error) { return nil, nil }
func (host) LimitHit(string, string) {
	{
	}
}
func (host) Warn(*callpolicy.Scope, string) {
	{
	}
}

// history is a run whose executions the tests play one after another, as
// a backend would: what each execution did goes into the ledger of the
// next.
type history struct {
	t       *testing.T
	runs    []callpolicy.Run
	records []callpolicy.Record
	epoch   int
	// failing names the prompts whose live calls fail.
	failing map[string]bool
}

// step is one call of a script: its scope (a path of branch numbers under
// the root's first parallel(), "" for the root) and its prompt.
type step struct{ branch, prompt string }

// play runs one execution of the script named script: calls steps in
// order, live or replayed as the policy says, stopping after stopAfter
// calls (-1 for all), and journals what it did. It returns, per call,
// "prompt=answer" with "(live)" or "(replayed)".
func (h *history) play(script string, steps []step, stopAfter int, drop func(callpolicy.Record) bool) []string {
	h.t.Helper()
	ledger := callpolicy.NewLedger()
	for _, r := range h.runs {
		ledger.Ran(r)
	}
	for _, r := range h.records {
		ledger.Note(r)
	}
	epoch := h.epoch
	h.epoch++
	id := callpolicy.IdentityOf(script, nil)
	h.runs = append(h.runs, callpolicy.Run{Epoch: epoch, Identity: id})
	x := callpolicy.NewExecution("run", epoch, callpolicy.Limits{Executor: "e", MaxAgents: 100, MaxItems: 100}, ledger, host{})
	frame := callpolicy.NewFrame("", id, lang.Meta{}, nil)
	branches := map[string]*callpolicy.Scope{"": frame.Root()}
	var out []string
	for i, s := range steps {
		if stopAfter >= 0 && i >= stopAfter {
			break
		}
		sc := branches[s.branch]
		if sc == nil {
			opened, err := x.Open(frame.Root(), "par", "parallel()", 4)
			if err != nil {
				h.t.Fatal(err)
			}
			for j, b := range opened {
				branches[fmt.Sprint(j)] = b
			}
			sc = branches[s.branch]
		}
		c, err := x.Agent(context.Background(), sc, s.prompt, lang.AgentOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		if c.Prior != nil {
			out = append(out, fmt.Sprintf("%s=%s (replayed)", s.prompt, c.Prior.Result))
			continue
		}
		answer := json.RawMessage(fmt.Sprintf("%q", fmt.Sprintf("%s@%d", s.prompt, epoch)))
		end := callpolicy.Record{Epoch: epoch, Path: c.Path, FP: c.FP, Kind: callpolicy.Finished, Result: answer}
		if h.failing[s.prompt] {
			end, answer = callpolicy.Record{Epoch: epoch, Path: c.Path, FP: c.FP, Kind: callpolicy.Failed}, json.RawMessage("null")
		}
		for _, r := range []callpolicy.Record{{Epoch: epoch, Path: c.Path, FP: c.FP, Kind: callpolicy.Started}, end} {
			if drop == nil || !drop(r) {
				h.records = append(h.records, r)
			}
		}
		out = append(out, fmt.Sprintf("%s=%s (live)", s.prompt, answer))
	}
	return out
}

func root(prompts ...string) []step {
	var out []step
	for _, p := range prompts {
		out = append(out, step{"", p})
	}
	return out
}

func check(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestCrashResumeReplaysEverything(t *testing.T) {
	h := &history{t: t}
	h.play("v1", root("a", "b", "c"), 2, nil)
	check(t, "crash resume", h.play("v1", root("a", "b", "c"), -1, nil),
		`a="a@0" (replayed)`, `b="b@0" (replayed)`, `c="c@1" (live)`)
}

func TestEditRunsTheRestOfTheScopeLive(t *testing.T) {
	h := &history{t: t}
	h.play("v1", root("a", "b", "c"), -1, nil)
	check(t, "edit", h.play("v2", root("a", "B", "c"), -1, nil),
		`a="a@0" (replayed)`, `B="B@1" (live)`, `c="c@1" (live)`)
}

// Issue 21, item 3: v1 A,C, then v2 B,C, then v3 A,C again. The C of the
// second execution came after B; the first execution's answers at the
// same paths are superseded. The third runs everything live.
func TestEditEditRevertRunsLive(t *testing.T) {
	h := &history{t: t}
	h.play("v1", root("a", "c"), -1, nil)
	h.play("v2", root("b", "c"), -1, nil)
	check(t, "revert", h.play("v1", root("a", "c"), -1, nil), `a="a@2" (live)`, `c="c@2" (live)`)

	h = &history{t: t}
	h.play("v1", root("a", "b", "c"), -1, nil)
	h.play("v2", root("a", "B", "c"), -1, nil)
	check(t, "revert after the first call", h.play("v1", root("a", "b", "c"), -1, nil),
		`a="a@0" (replayed)`, `b="b@2" (live)`, `c="c@2" (live)`)
}

// An edit paused before it reached a call leaves that call's old answer,
// made after the call the edit changed: the crash resume of the edited
// script must not take it.
func TestCrashResumeOfAnInterruptedEdit(t *testing.T) {
	h := &history{t: t}
	h.play("v1", root("a", "b", "c"), -1, nil)
	h.play("v2", root("a", "B", "c"), 2, nil)
	check(t, "crash resume", h.play("v2", root("a", "B", "c"), -1, nil),
		`a="a@0" (replayed)`, `B="B@1" (replayed)`, `c="c@2" (live)`)
}

// Issue 21, item 2: a lost line of a newer answer never brings back an
// older one, whichever of the newer call's lines is lost.
func TestALostNewerAnswerNeverBringsBackAnOlderOne(t *testing.T) {
	for _, kind := range []callpolicy.RecordKind{callpolicy.Finished, callpolicy.Started} {
		t.Run(string(kind), func(t *testing.T) {
			h := &history{t: t}
			h.play("v1", root("a", "b", "c"), -1, nil)
			h.play("v2", root("a", "B", "c"), -1, func(r callpolicy.Record) bool { return r.Path == "/agent.2" && r.Kind == kind })
			got := h.play("v2", root("a", "B", "c"), -1, nil)
			want := `c="c@1" (replayed)`
			if kind == callpolicy.Finished {
				want = `c="c@2" (live)`
			}
			check(t, "resume", got, `a="a@0" (replayed)`, `B="B@1" (replayed)`, want)
		})
	}
	// A failure at the later execution (the script got null): whichever
	// of its lines is lost, the older answer stays superseded.
	for _, kind := range []callpolicy.RecordKind{callpolicy.Failed, callpolicy.Started} {
		h := &history{t: t}
		h.play("v1", root("a", "b", "c"), -1, nil)
		h.failing = map[string]bool{"c": true}
		check(t, "the edit", h.play("v2", root("a", "B", "c"), -1, func(r callpolicy.Record) bool { return r.Path == "/agent.2" && r.Kind == kind }),
			`a="a@0" (replayed)`, `B="B@1" (live)`, `c=null (live)`)
		h.failing = nil
		check(t, "after a lost "+string(kind)+" line", h.play("v2", root("a", "B", "c"), -1, nil),
			`a="a@0" (replayed)`, `B="B@1" (replayed)`, `c="c@2" (live)`)
	}
}

// Calls that a Promise.all the runtime cannot see put at each other's
// paths still replay, across more than one resume.
func TestReorderedCallsReplay(t *testing.T) {
	h := &history{t: t}
	h.play("v1", root("x", "y"), -1, func(r callpolicy.Record) bool { return r.Path == "/agent.0" && r.Kind == callpolicy.Finished })
	check(t, "first resume", h.play("v1", root("y", "x"), 1, nil), `y="y@0" (replayed)`)
	check(t, "second resume", h.play("v1", root("y", "x"), -1, nil), `y="y@0" (replayed)`, `x="x@2" (live)`)
	check(t, "third", h.play("v1", root("x", "y"), -1, nil), `x="x@2" (replayed)`, `y="y@0" (replayed)`)
}

// A change in one branch leaves its siblings' answers; a change before a
// fan-out makes every branch run live.
func TestPrefixRulePerScope(t *testing.T) {
	v1 := []step{{"", "a"}, {"0", "p0"}, {"0", "q0"}, {"1", "p1"}, {"1", "q1"}}
	h := &history{t: t}
	h.play("v1", v1, -1, nil)
	v2 := []step{{"", "a"}, {"0", "P0"}, {"0", "q0"}, {"1", "p1"}, {"1", "q1"}}
	check(t, "a branch edited", h.play("v2", v2, -1, nil),
		`a="a@0" (replayed)`, `P0="P0@1" (live)`, `q0="q0@1" (live)`, `p1="p1@0" (replayed)`, `q1="q1@0" (replayed)`)

	h = &history{t: t}
	h.play("v1", v1, -1, nil)
	v3 := []step{{"", "A"}, {"0", "p0"}, {"0", "q0"}, {"1", "p1"}, {"1", "q1"}}
	check(t, "before the fan-out", h.play("v3", v3, -1, nil),
		`A="A@1" (live)`, `p0="p0@1" (live)`, `q0="q0@1" (live)`, `p1="p1@1" (live)`, `q1="q1@1" (live)`)
}

// A call that began and never finished, or failed, is not a change.
func TestUnfinishedCallsDoNotBreakThePrefix(t *testing.T) {
	h := &history{t: t}
	h.play("v1", root("a", "b", "c"), -1, func(r callpolicy.Record) bool { return r.Path == "/agent.0" && r.Kind == callpolicy.Finished })
	check(t, "edit after an unfinished call", h.play("v2", root("a", "b", "c", "d"), -1, nil),
		`a="a@1" (live)`, `b="b@0" (replayed)`, `c="c@0" (replayed)`, `d="d@1" (live)`)
}
