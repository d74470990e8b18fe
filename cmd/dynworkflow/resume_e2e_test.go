package main_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// pipelineScript is a 20-item × 3-stage pipeline whose prompts derive from
// the item and the previous stage's answer, so its result depends on every
// call. stage3 is the stage-3 prompt template (edit-and-resume changes it).
// With args.failAtEnd it throws after the pipeline.
func pipelineScript(stage3 string) string {
	return `export const meta = {
  name: 'e2e-pipeline',
  description: 'twenty items through three stages',
  phases: ['Plan', 'Build', 'Test'],
}

const n = (args && args.items) || 20
const items = Array.from({ length: n }, (_, i) => 'item-' + i)

const results = await pipeline(
  items,
  item => agent(` + "`Plan ${item}`" + `, { label: 'plan:' + item, phase: 'Plan' }),
  (plan, item) => agent(` + "`Build ${item} from this plan: ${plan}`" + `, { phase: 'Build' }),
  (built, item) => agent(` + "`" + stage3 + "`" + `, { phase: 'Test' }),
)

if (args && args.failAtEnd) throw new Error('failing on purpose after the pipeline')
return results
`
}

const (
	stage3Original = "Test ${item}; the build said: ${built}"
	stage3Edited   = "Verify ${item} twice; the build said: ${built}"
)

// nestedScript is a 12-item × 3-stage pipeline whose second stage fans out
// to 3 parallel calls per item: 12 × (1 + 3 + 1) = 60 calls.
const nestedScript = `export const meta = { name: 'e2e-nested', description: 'parallel inside pipeline stages' }

const items = Array.from({ length: 12 }, (_, i) => 'part-' + i)
return await pipeline(
  items,
  item => agent(` + "`Outline ${item}`" + `),
  (outline, item) => parallel([0, 1, 2].map(k => () => agent(` + "`Section ${k} of ${item}: ${outline}`" + `))),
  (sections, item) => agent(` + "`Merge ${item}: ${sections.join(' | ')}`" + `),
)
`

// parentScript calls childScript (a file next to it) between two calls of
// its own: 1 + 16 × 2 + 1 = 34 calls.
const parentScript = `export const meta = { name: 'e2e-parent', description: 'runs a child workflow' }

const topic = await agent('Pick a topic to write about')
const parts = await workflow('./child.workflow.js', { topic, n: 16 })
const summary = await agent(` + "`Summarize: ${parts.join(' / ')}`" + `)
return { topic, parts, summary }
`

const childScript = `export const meta = { name: 'fanout-child', description: 'drafts and polishes args.n sections' }

return await parallel(Array.from({ length: args.n }, (_, i) => async () => {
  const draft = await agent(` + "`Draft section ${i} about ${args.topic}`" + `)
  return agent(` + "`Polish section ${i}: ${draft}`" + `)
}))
`

// branchScript runs 5 parallel branches of 2 sequential calls; ask is the
// JavaScript function giving a branch's first prompt.
func branchScript(ask string) string {
	return `export const meta = { name: 'e2e-branches', description: 'five branches, two calls each' }

const ask = ` + ask + `
return await parallel([0, 1, 2, 3, 4].map(i => async () => {
  const found = await agent(ask(i))
  return agent(` + "`Fix area ${i} using: ${found}`" + `)
}))
`
}

const latency = "50ms..150ms"

// crashCase is one crash-resume scenario.
type crashCase struct {
	files  map[string]string // the project's files
	script string            // the file to run
	flags  []string          // run flags besides --json
	total  int               // agent calls of a complete run
	killAt int               // SIGKILL once this many calls finished
	// atKill, when set, checks that the kill landed where the scenario
	// needs it, from the calls finished by then.
	atKill func(t *testing.T, finished map[string]bool)
}

// testCrashResume runs the scenario uninterrupted, then again with a
// SIGKILL in the middle, and resumes the killed run: every call finished
// before the kill must replay, the rest run live, and the result must be
// the uninterrupted run's.
func testCrashResume(t *testing.T, c crashCase) {
	e := e2etest.NewEnv(t)
	for name, text := range c.files {
		e.Write(name, text)
	}
	want := e.RunCompleted(c.script, c.flags...)
	if want.Stats.Live != c.total {
		t.Fatalf("an uninterrupted run made %d live calls, want %d", want.Stats.Live, c.total)
	}

	k := e.StartAndKill(c.script, c.killAt, c.total, c.flags...)
	if c.atKill != nil {
		c.atKill(t, k.Finished)
	}
	if s := e.Listed(k.ID); s.Status != "paused" {
		t.Fatalf("list --json shows the killed run as %q (pause reason %q), want paused", s.Status, s.PauseReason)
	}

	r := e.DW("resume", k.ID, "--json")
	e2etest.ExpectCode(t, r, 0)
	got := e2etest.ParseOutcome(t, r)
	if got.Status != "completed" {
		t.Fatalf("the resumed run is %s, want completed:\n%s", got.Status, r)
	}
	if got.Stats.Replayed != len(k.Finished) {
		t.Errorf("stats.replayed = %d, want %d (the calls finished before the kill)", got.Stats.Replayed, len(k.Finished))
	}
	if got.Stats.Replayed+got.Stats.Live != c.total {
		t.Errorf("stats.replayed + stats.live = %d + %d, want %d", got.Stats.Replayed, got.Stats.Live, c.total)
	}
	e2etest.SameJSON(t, "the resumed run's result vs an uninterrupted run's", got.Result, want.Result)
	recs := e2etest.NoReRun(t, k.Journal, k.Finished)
	if rule := recs[e2etest.LastResume(recs)].Resume.Rule; rule != "crash" {
		t.Errorf("the resume record's rule is %q, want crash", rule)
	}
}

func TestCrashResumePipeline(t *testing.T) {
	t.Parallel()
	testCrashResume(t, crashCase{
		files:  map[string]string{"pipeline.workflow.js": pipelineScript(stage3Original)},
		script: "pipeline.workflow.js",
		flags:  []string{"--simulate-latency", latency, "--concurrency", "8"},
		total:  60,
		killAt: 30,
	})
}

func TestCrashResumeNestedParallel(t *testing.T) {
	t.Parallel()
	testCrashResume(t, crashCase{
		files:  map[string]string{"nested.workflow.js": nestedScript},
		script: "nested.workflow.js",
		flags:  []string{"--simulate-latency", latency, "--concurrency", "8"},
		total:  60,
		killAt: 30,
		atKill: func(t *testing.T, finished map[string]bool) {
			for p := range finished {
				if strings.Contains(p, "/s1/par.0/") {
					return
				}
			}
			t.Fatalf("no call of a nested parallel finished before the kill: %v", e2etest.SortedKeys(finished))
		},
	})
}

func TestCrashResumeChildWorkflow(t *testing.T) {
	t.Parallel()
	testCrashResume(t, crashCase{
		files:  map[string]string{"parent.workflow.js": parentScript, "child.workflow.js": childScript},
		script: "parent.workflow.js",
		flags:  []string{"--simulate-latency", latency, "--concurrency", "8"},
		total:  34,
		killAt: 12,
		atKill: func(t *testing.T, finished map[string]bool) {
			child := 0
			for p := range finished {
				if strings.HasPrefix(p, "/wf.0:fanout-child/") {
					child++
				}
			}
			if child == 0 || child == 32 || finished["/agent.1"] {
				t.Fatalf("the kill did not land in the middle of the child (%d of 32 child calls finished): %v", child, e2etest.SortedKeys(finished))
			}
		},
	})
}

// TestEditResume resumes with an edited script: the prefix rule keeps
// every unchanged call and re-runs only the changed ones and what follows
// them in their scope.
func TestEditResume(t *testing.T) {
	t.Parallel()
	stage3Paths := map[string]bool{}
	for i := range 20 {
		stage3Paths[fmt.Sprintf("/pipe.0/%d/s2/agent.0", i)] = true
	}
	setup := func(t *testing.T) (e *e2etest.Env, want e2etest.Outcome) {
		e = e2etest.NewEnv(t)
		e.Write("pipeline.workflow.js", pipelineScript(stage3Original))
		e.Write("edited.workflow.js", pipelineScript(stage3Edited))
		return e, e.RunCompleted("edited.workflow.js")
	}
	// resumeEdited resumes id with the edited script and checks the prefix
	// rule's counts.
	resumeEdited := func(t *testing.T, e *e2etest.Env, id string, wantCode int, wantStatus string, replayed, live int, flags ...string) e2etest.Outcome {
		t.Helper()
		r := e.DW(append([]string{"resume", id, "--script", "edited.workflow.js", "--json"}, flags...)...)
		e2etest.ExpectCode(t, r, wantCode)
		o := e2etest.ParseOutcome(t, r)
		if o.Status != wantStatus {
			t.Fatalf("the resumed run is %s, want %s:\n%s", o.Status, wantStatus, r)
		}
		if o.Stats.Replayed != replayed || o.Stats.Live != live {
			t.Errorf("stats.replayed = %d, stats.live = %d; want %d and %d", o.Stats.Replayed, o.Stats.Live, replayed, live)
		}
		recs, _ := e2etest.ReadJournal(t, e.JournalPath(id))
		if i := e2etest.LastResume(recs); i < 0 || recs[i].Resume.Rule != "edit" {
			t.Errorf("the journal has no resume record with rule edit")
		}
		return o
	}

	t.Run("completed", func(t *testing.T) {
		t.Parallel()
		e, want := setup(t)
		first := e.RunCompleted("pipeline.workflow.js")
		got := resumeEdited(t, e, first.RunID, 0, "completed", 40, 20)
		e2etest.SameJSON(t, "the edited resume's result vs a fresh run of the edited script", got.Result, want.Result)
		recs, _ := e2etest.ReadJournal(t, e.JournalPath(first.RunID))
		if again := e2etest.StartedAfter(recs, e2etest.LastResume(recs)); !equalSets(again, stage3Paths) {
			t.Errorf("calls run live after the resume: %v\nwant exactly the 20 stage-3 calls", e2etest.SortedKeys(again))
		}
	})

	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		e, want := setup(t)
		r := e.DW("run", "pipeline.workflow.js", "--json", "--args", `{"failAtEnd":true}`)
		e2etest.ExpectCode(t, r, 1)
		first := e2etest.ParseOutcome(t, r)
		if first.Status != "failed" || !strings.Contains(first.Error, "failing on purpose") {
			t.Fatalf("want a failed run:\n%s", r)
		}
		// Same args: the edited script still throws, but only stage 3 ran again.
		resumeEdited(t, e, first.RunID, 1, "failed", 40, 20)
		// New args only: every call replays, the new stage-3 answers included.
		r = e.DW("resume", first.RunID, "--json", "--args", `{"failAtEnd":false}`)
		e2etest.ExpectCode(t, r, 0)
		got := e2etest.ParseOutcome(t, r)
		if got.Status != "completed" || got.Stats.Replayed != 60 || got.Stats.Live != 0 {
			t.Fatalf("want completed with 60 replayed and 0 live after changing only the args:\n%s", r)
		}
		e2etest.SameJSON(t, "the fixed run's result vs a fresh run of the edited script", got.Result, want.Result)
	})

	t.Run("killed", func(t *testing.T) {
		t.Parallel()
		e, want := setup(t)
		k := e.StartAndKill("pipeline.workflow.js", 30, 60, "--simulate-latency", latency, "--concurrency", "8")
		early := map[string]bool{} // finished calls of stages 1 and 2
		for p := range k.Finished {
			if strings.Contains(p, "/s0/") || strings.Contains(p, "/s1/") {
				early[p] = true
			}
		}
		got := resumeEdited(t, e, k.ID, 0, "completed", len(early), 60-len(early))
		e2etest.SameJSON(t, "the edited resume's result vs a fresh run of the edited script", got.Result, want.Result)
		e2etest.NoReRun(t, k.Journal, early)
	})

	t.Run("one parallel branch", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("branches.workflow.js", branchScript("i => `Investigate area ${i}`"))
		e.Write("edited.workflow.js", branchScript("i => i === 2 ? `Investigate area ${i} again, more carefully` : `Investigate area ${i}`"))
		want := e.RunCompleted("edited.workflow.js")
		first := e.RunCompleted("branches.workflow.js")
		got := resumeEdited(t, e, first.RunID, 0, "completed", 8, 2)
		e2etest.SameJSON(t, "the edited resume's result vs a fresh run of the edited script", got.Result, want.Result)
		recs, _ := e2etest.ReadJournal(t, e.JournalPath(first.RunID))
		wantLive := map[string]bool{"/par.0/2/agent.0": true, "/par.0/2/agent.1": true}
		if again := e2etest.StartedAfter(recs, e2etest.LastResume(recs)); !equalSets(again, wantLive) {
			t.Errorf("calls run live after the resume: %v, want %v", e2etest.SortedKeys(again), e2etest.SortedKeys(wantLive))
		}
	})
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// TestCtrlC interrupts a running `run` like a terminal's Ctrl-C does.
func TestCtrlC(t *testing.T) {
	t.Parallel()
	const total = 60
	flags := []string{"--simulate-latency", "10ms..40ms", "--concurrency", "4"}

	t.Run("once pauses", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("pipeline.workflow.js", pipelineScript(stage3Original))
		want := e.RunCompleted("pipeline.workflow.js")

		before := e.JournalIDs()
		p := e.Start(append([]string{"run", "pipeline.workflow.js", "--json"}, flags...)...)
		id := p.WaitNewJournal(before)
		p.WaitFinished(e.JournalPath(id), 10)
		p.Signal(os.Interrupt)
		r := p.Wait()
		e2etest.ExpectCode(t, r, 2)
		if o := e2etest.ParseOutcome(t, r); o.Status != "paused" {
			t.Fatalf("--json reports %q, want paused:\n%s", o.Status, r)
		}
		if s := e.Listed(id); s.Status != "paused" {
			t.Fatalf("list --json shows %q, want paused", s.Status)
		}
		recs, _ := e2etest.ReadJournal(t, e.JournalPath(id))
		finished := e2etest.FinishedAgents(recs)
		if len(finished) >= total {
			t.Fatalf("all %d calls finished before the Ctrl-C landed; make the run slower", total)
		}

		r = e.DW("resume", id, "--json")
		e2etest.ExpectCode(t, r, 0)
		got := e2etest.ParseOutcome(t, r)
		if got.Status != "completed" || got.Stats.Replayed != len(finished) || got.Stats.Replayed+got.Stats.Live != total {
			t.Fatalf("want completed with %d replayed of %d:\n%s", len(finished), total, r)
		}
		e2etest.SameJSON(t, "the resumed run's result vs an uninterrupted run's", got.Result, want.Result)
		e2etest.NoReRun(t, e.JournalPath(id), finished)
	})

	t.Run("twice stops", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("pipeline.workflow.js", pipelineScript(stage3Original))
		// The second Ctrl-C must reach the process while the pause is
		// settling. The pause may settle before the signal arrives; then
		// the CLI never saw the second Ctrl-C, and we try again.
		const attempts = 5
		for attempt := 1; ; attempt++ {
			before := e.JournalIDs()
			p := e.Start(append([]string{"run", "pipeline.workflow.js", "--json"}, flags...)...)
			id := p.WaitNewJournal(before)
			p.WaitFinished(e.JournalPath(id), 4)
			p.Signal(os.Interrupt)
			if !p.WaitStderr("pausing") {
				t.Fatalf("no \"pausing\" note after the first Ctrl-C:\n%s", p.Wait())
			}
			_ = p.Cmd.Process.Signal(os.Interrupt) // the process may be gone already
			r := p.Wait()
			if !strings.Contains(r.Stderr, "stopping") {
				if attempt < attempts {
					t.Logf("attempt %d: the run settled before the second Ctrl-C arrived; trying again", attempt)
					continue
				}
				t.Fatalf("in %d attempts the CLI never acknowledged a second Ctrl-C (no \"stopping\" note); last attempt:\n%s", attempts, r)
			}
			// The CLI acknowledged the second Ctrl-C: the run must be stopped.
			if r.Code != 1 {
				t.Fatalf("after a second Ctrl-C (acknowledged with \"stopping\"), want exit code 1 and status stopped:\n%s", r)
			}
			if o := e2etest.ParseOutcome(t, r); o.Status != "stopped" {
				t.Fatalf("--json reports %q, want stopped:\n%s", o.Status, r)
			}
			if s := e.Listed(id); s.Status != "stopped" {
				t.Fatalf("list --json shows %q, want stopped", s.Status)
			}
			r = e.DW("resume", id, "--json")
			e2etest.ExpectCode(t, r, 1)
			if !strings.Contains(r.Stderr, "stopped") || !strings.Contains(r.Stderr, id) {
				t.Fatalf("resuming a stopped run should say it was stopped:\n%s", r)
			}
			return
		}
	})
}
