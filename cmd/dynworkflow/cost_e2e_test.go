package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/internal/clitest"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/web"
)

// paidScript is a command executor that answers from its prompt and
// reports 100k input and 10k output tokens and no dollars, as codex does:
// on gpt-5.4 ($2.50 in, $15 out per million) the price table makes that
// $0.40 a call. A prompt with "hold" in it leaves a file started.PID in
// its directory and waits for a line on its fifo (or to be killed).
const paidScript = `#!/bin/sh
dir=$1
prompt=$(cat)
case "$prompt" in
*hold*) : > "$dir/started.$$"; read line < "$dir/release" ;;
esac
clean=$(printf %s "$prompt" | tr -cd 'a-zA-Z0-9 ,:')
printf '{"text":"answer to %s","usage":{"input_tokens":100000,"output_tokens":10000}}' "$clean"
`

// paidEnv is a project whose executor "paid" is paidScript, on gpt-5.4.
func paidEnv(t *testing.T) (*e2etest.Env, string) {
	e := e2etest.NewEnv(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "paid.sh")
	if err := os.WriteFile(script, []byte(paidScript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "release"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeConfig(e, map[string]any{
		"commands":  map[string]string{"paid": script + " " + dir},
		"executors": map[string]any{"paid": map[string]any{"model": "gpt-5.4"}},
	})
	return e, dir
}

// started counts the held attempts that have begun.
func started(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, "started.*"))
	return len(m)
}

// release lets one held attempt answer.
func release(t *testing.T, dir string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "release"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}
}

// TestDollarCap runs paid calls under --max-cost: the run pauses (exit 2)
// with the reason once the next call would pass the cap, list shows what it
// spent of its cap, and a resume with a raised cap goes on; a script's
// meta.maxCost caps a run the same.
func TestDollarCap(t *testing.T) {
	t.Parallel()
	e, _ := paidEnv(t)
	e.Write("cap.workflow.js", `export const meta = { name: 'cap', description: 'six paid calls' }
const out = []
for (let i = 0; i < 6; i++) out.push(await agent('task ' + i))
return out.length`)
	r := e.DW("run", "cap.workflow.js", "--executor", "paid", "--max-cost", "1", "--json")
	e2etest.ExpectCode(t, r, 2)
	o := e2etest.ParseOutcome(t, r)
	var full engine.Outcome
	_ = json.Unmarshal([]byte(r.Stdout), &full)
	if full.Status != engine.StatusPaused || !strings.Contains(full.PauseReason, "dollar cap") || full.Stats.Live != 2 {
		t.Fatalf("under a $1 cap at $0.40 a call: %s after %d calls (%q); want paused after 2\n%s", full.Status, full.Stats.Live, full.PauseReason, r)
	}
	list := e.DWOK("list")
	if !regexp.MustCompile(regexp.QuoteMeta(o.RunID) + `\s+paused .*\s2\s+\S+\s+\$0\.80/\$1\.00\s`).MatchString(list.Stdout) {
		t.Errorf("list should show $0.80 spent of the $1.00 cap:\n%s", list.Stdout)
	}
	show := e.DWOK("show", o.RunID)
	if !strings.Contains(show.Stdout, "$0.80 of $1.00 cap") || !strings.Contains(show.Stdout, "dollar cap") {
		t.Errorf("show should say what the run spent of its cap, and why it paused:\n%s", show.Stdout)
	}
	done := e.DW("resume", o.RunID, "--max-cost", "5")
	e2etest.ExpectCode(t, done, 0)
	if !strings.Contains(done.Stderr, "$2.40 of $5.00 cap") || strings.TrimSpace(done.Stdout) != "6" {
		t.Errorf("the resumed run should finish with $2.40 spent of $5.00:\n%s", done)
	}

	e.Write("meta.workflow.js", `export const meta = { name: 'meta', description: 'capped by its meta', maxCost: 0.5 }
await agent('one')
await agent('two')
return 'both'`)
	m := e.DW("run", "meta.workflow.js", "--executor", "paid")
	e2etest.ExpectCode(t, m, 2)
	if !strings.Contains(m.Stderr, "--max-cost $0.50") {
		t.Errorf("a script's maxCost should cap its run:\n%s", m)
	}
}

// TestPlan checks plan: what a run would do and cost, without running
// anything or leaving anything behind, then learned from a real run.
func TestPlan(t *testing.T) {
	t.Parallel()
	e, _ := paidEnv(t)
	e.Write("scan.workflow.js", `export const meta = { name: 'scan', description: 'scan, then verify', phases: ['Scan', 'Verify'] }
phase('Scan')
const found = await parallel(Array.from({ length: 12 }, (_, i) => () => agent('scan part ' + i, { label: 'scan-' + (i + 1) })))
phase('Verify')
const ok = await checkpoint('Verify them?', { default: true })
return ok ? await agent('verify ' + found.length, { label: 'verify' }) : 'skipped'`)
	var p engine.Plan
	r := e.DWOK("plan", "scan.workflow.js", "--executor", "paid", "--route", "scan *=gpt-5.4-nano", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &p); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, r)
	}
	f := p.Forecast
	if len(p.Calls) != 13 || len(f.Groups) != 2 || f.Groups[0].Pattern != "scan *" || f.Groups[0].Calls != 12 ||
		f.Groups[0].Model != "gpt-5.4-nano" || f.Groups[1].Model != "gpt-5.4" || f.LearnedFrom != 0 {
		t.Fatalf("plan: %d calls, groups %+v, learned from %d", len(p.Calls), f.Groups, f.LearnedFrom)
	}
	if len(p.Checkpoints) != 1 || string(p.Checkpoints[0].Assumed) != "true" {
		t.Errorf("the plan should say it assumed the checkpoint's default: %+v", p.Checkpoints)
	}
	if runs := e.List(); len(runs) != 0 {
		t.Fatalf("plan left %d runs behind", len(runs))
	}
	text := e.DWOK("plan", "scan.workflow.js", "--executor", "paid")
	for _, w := range []string{"13 agent calls, forecast $", "no earlier run of this workflow", "scan *", "gpt-5.4", "the built-in table of 2026-"} {
		if !strings.Contains(text.Stdout, w) {
			t.Errorf("plan's table lacks %q:\n%s", w, text.Stdout)
		}
	}

	// After one real run every call's tokens are known: 13 calls at
	// $0.40 each on gpt-5.4.
	e.DWOK("run", "scan.workflow.js", "--executor", "paid")
	r = e.DWOK("plan", "scan.workflow.js", "--executor", "paid", "--json")
	p = engine.Plan{}
	_ = json.Unmarshal([]byte(r.Stdout), &p)
	if p.Forecast.LearnedFrom != 1 || p.Forecast.Basis["path"] != 13 || fmt.Sprintf("%.2f", p.Forecast.USD) != "5.20" {
		t.Errorf("after one run: learned from %d runs, bases %v, forecast $%.2f; want 1, 13 by path, $5.20",
			p.Forecast.LearnedFrom, p.Forecast.Basis, p.Forecast.USD)
	}
	text = e.DWOK("plan", "scan.workflow.js", "--executor", "paid")
	if !strings.Contains(text.Stdout, "learned from 1 earlier run of this workflow in this project, for 13 of 13 calls") {
		t.Errorf("plan should say what it learned from:\n%s", text.Stdout)
	}
}

// TestConfirmAboveWithoutATerminal: a run whose forecast passes
// --confirm-above, with nobody to ask, is refused before it exists;
// --yes starts it.
func TestConfirmAboveWithoutATerminal(t *testing.T) {
	t.Parallel()
	e, _ := paidEnv(t)
	e.Write("c.workflow.js", `export const meta = { name: 'c', description: 'two paid calls' }
await agent('one'); await agent('two')
return 'ran'`)
	r := e.DW("run", "c.workflow.js", "--executor", "paid", "--confirm-above", "0.5")
	e2etest.ExpectCode(t, r, 1)
	if !strings.Contains(r.Stderr, "forecast to cost $") || !strings.Contains(r.Stderr, "--yes") || len(e.List()) != 0 {
		t.Fatalf("a headless run over --confirm-above should be refused before it exists:\n%s", r)
	}
	ok := e.DW("run", "c.workflow.js", "--executor", "paid", "--confirm-above", "0.5", "--yes")
	e2etest.ExpectCode(t, ok, 0)
	under := e.DW("run", "c.workflow.js", "--executor", "paid", "--confirm-above", "5")
	e2etest.ExpectCode(t, under, 0)
}

// TestSteerOneAgent stops one running call and restarts another in a run
// of the live runtime, from the CLI: the stopped call gives the script
// null and is shown as stopped; the restarted one runs a second attempt
// and answers; the run goes on; run.spend events carry what it cost.
func TestSteerOneAgent(t *testing.T) {
	t.Parallel()
	e, dir := paidEnv(t)
	e.Write("steer.workflow.js", `export const meta = { name: 'steer', description: 'two held calls and a plain one' }
const [a, b, c] = await parallel([
  () => agent('hold a', { label: 'first' }),
  () => agent('hold b', { label: 'second' }),
  () => agent('plain c', { label: 'third' }),
])
return { a, b, c }`)
	s := e2etest.Serve(e, "--executor", "paid")
	r := e.DWOK("run", "steer.workflow.js", "--json")
	var st struct{ RunID string }
	_ = json.Unmarshal([]byte(r.Stdout), &st)
	e2etest.WaitUntil(t, "both held calls to start", func() bool { return started(dir) == 2 })

	restarted := e.DWOK("restart", st.RunID, "first")
	if !strings.Contains(restarted.Stdout, "restarted /par.0/0/agent.0 of "+st.RunID) {
		t.Errorf("restart: %s", restarted)
	}
	e2etest.WaitUntil(t, "the restarted call's second attempt", func() bool { return started(dir) == 3 })
	e.DWOK("stop", st.RunID, "/par.0/1/agent.0")
	release(t, dir)
	s.WaitRun(st.RunID, "completed")

	d := e.Show(st.RunID)
	e2etest.SameJSON(t, "the result", d.Result, json.RawMessage(`{"a": "answer to hold a", "b": null, "c": "answer to plain c"}`))
	var det engine.Detail
	_ = json.Unmarshal([]byte(e.DWOK("show", st.RunID, "--json").Stdout), &det)
	for _, c := range det.Calls {
		switch c.Label {
		case "first":
			if c.Attempts != 2 || c.Status != "done" {
				t.Errorf("the restarted call: %s after %d attempts", c.Status, c.Attempts)
			}
		case "second":
			if c.Status != "failed" || !strings.Contains(c.Error, "stopped by the user") {
				t.Errorf("the stopped call: %s, %q", c.Status, c.Error)
			}
		}
	}
	if len(det.Failures) != 1 || det.Failures[0].Class != "stopped" {
		t.Errorf("failures %+v", det.Failures)
	}
	again := e.DW("stop", st.RunID, "first")
	e2etest.ExpectCode(t, again, 1)

	// The event stream carried the run's spend as it went.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var spend []engine.SpendPayload
	_ = s.Client.Stream(ctx, 0, st.RunID, func(ev web.StreamEvent) error {
		if ev.Type == engine.EventRunSpend {
			var p engine.SpendPayload
			_ = json.Unmarshal(ev.Payload, &p)
			spend = append(spend, p)
		}
		if ev.Type == engine.EventRunStatus {
			return web.ErrStopStream
		}
		return nil
	})
	if len(spend) != 3 || spend[len(spend)-1].CostUSD < 0.80 {
		t.Errorf("run.spend events: %+v; want one per call, the last with at least $0.80 (two answers and what the killed attempts used)", spend)
	}
}

// TestForkAndDiff forks a finished run at its second call with a new
// prompt, in both languages: the first call replays (nothing paid), the
// second and third run live, and diff says which calls and results differ.
func TestForkAndDiff(t *testing.T) {
	t.Parallel()
	for _, sc := range []struct{ file, text string }{
		{"chain.workflow.js", `export const meta = { name: 'chain', description: 'three calls in a row' }
const a = await agent('first')
const b = await agent('second after ' + a)
const c = await agent('third after ' + b)
return [a, b, c]`},
		{"chain.workflow.star", `meta = {"name": "chain", "description": "three calls in a row"}
def main(args):
    a = agent("first")
    b = agent("second after " + a)
    c = agent("third after " + b)
    return [a, b, c]
`},
	} {
		t.Run(sc.file, func(t *testing.T) {
			t.Parallel()
			e, _ := paidEnv(t)
			e.Write(sc.file, sc.text)
			src := e2etest.ParseOutcome(t, e.DWOK("run", sc.file, "--executor", "paid", "--json"))
			r := e.DW("fork", src.RunID, "#2", "--prompt", "second rewritten", "--json")
			e2etest.ExpectCode(t, r, 0)
			var fork engine.Outcome
			if err := json.Unmarshal([]byte(r.Stdout), &fork); err != nil || fork.RunID == src.RunID {
				t.Fatalf("fork --json: %v\n%s", err, r)
			}
			if fork.Stats.Replayed != 1 || fork.Stats.Live != 2 || fmt.Sprintf("%.2f", fork.Stats.CostUSD) != "0.80" {
				t.Errorf("the fork replayed %d, ran %d, cost $%.2f; want 1, 2, $0.80", fork.Stats.Replayed, fork.Stats.Live, fork.Stats.CostUSD)
			}
			show := e.DWOK("show", fork.RunID)
			if !strings.Contains(show.Stdout, "from "+src.RunID+" at /agent.1 (with a new prompt)") {
				t.Errorf("show should say where the fork came from:\n%s", show.Stdout)
			}
			diff := e.DWOK("diff", src.RunID, fork.RunID)
			for _, w := range []string{"~ /agent.1 : prompt, result differ", "~ /agent.2 : prompt, result differ", "1 calls the same, 2 differ", "the results differ"} {
				if !strings.Contains(diff.Stdout, w) {
					t.Errorf("diff lacks %q:\n%s", w, diff.Stdout)
				}
			}
			var dj engine.RunDiff
			if err := json.Unmarshal([]byte(e.DWOK("diff", src.RunID, fork.RunID, "--json").Stdout), &dj); err != nil || dj.Changed != 2 || dj.Same != 1 {
				t.Errorf("diff --json: %+v (%v)", dj, err)
			}
			given := e2etest.ParseOutcome(t, e.DWOK("fork", src.RunID, "/agent.2", "--answer", "taken as given", "--json"))
			d := e.Show(given.RunID)
			e2etest.SameJSON(t, "the fork with a given answer", d.Result, json.RawMessage(`["answer to first", "answer to second after answer to first", "taken as given"]`))
		})
	}
}

// TestCapOnTheFakeModel runs the real CLIs against the fake model server
// under a dollar cap: the price table prices what they report (the fake
// model's gpt-5.5, made dear in the user's prices.json), the run pauses
// before the model gets the call that would pass the cap, and resumes.
func TestCapOnTheFakeModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ cli, executor string }{{clitest.Codex, "codex"}, {clitest.Pi, "pi"}} {
		t.Run(c.executor, func(t *testing.T) {
			t.Parallel()
			e := e2etest.NewEnv(t)
			srv := fakeAgents(t, e, c.cli)
			// 11 tokens in, 7 out per answer: $0.72 at $40,000 a million.
			if err := os.MkdirAll(filepath.Join(e.Config, "dynworkflow"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.Config, "dynworkflow", "prices.json"), []byte(`{
  "models": {"gpt-5.5": {"input": 40000, "cachedInput": 40000, "output": 40000}},
  "defaultTokens": {"inputTokens": 11, "cachedInputTokens": 3, "outputTokens": 7}
}`), 0o644); err != nil {
				t.Fatal(err)
			}
			e.Write("four.workflow.js", `export const meta = { name: 'four', description: 'four calls' }
const out = []
for (let i = 0; i < 4; i++) out.push(await agent('say hi ' + i))
return out.length`)
			r := e.DW("run", "four.workflow.js", "--executor", c.executor, "--max-cost", "2")
			e2etest.ExpectCode(t, r, 2)
			if n := len(srv.Requests()); n != 2 || !strings.Contains(r.Stderr, "$1.44 of $2.00 cap") {
				t.Fatalf("under a $2 cap at $0.72 an answer, the model got %d requests; want 2 and $1.44 spent\n%s", n, r)
			}
			runs := e.List()
			done := e.DW("resume", runs[0].RunID, "--max-cost", "10")
			e2etest.ExpectCode(t, done, 0)
			if n := len(srv.Requests()); n != 4 {
				t.Errorf("after the resume the model got %d requests in all, want 4 (two replayed)", n)
			}
		})
	}
}
