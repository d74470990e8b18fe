package main_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// The crash-resume, edit-and-resume and bad-input tests of the CLI, for
// Starlark workflows, and nesting across the two languages.

// starPipelineScript is pipelineScript in Starlark: 20 items × 3 stages,
// prompts derived from the item and the previous stage's answer; stage3 is
// the stage-3 prompt, a Starlark expression over item and built.
func starPipelineScript(stage3 string) string {
	return `meta = {
    "name": "e2e-pipeline",
    "description": "twenty items through three stages",
    "phases": ["Plan", "Build", "Test"],
}

def main(args):
    args = args or {}
    n = args.get("items") or 20
    items = ["item-%d" % i for i in range(n)]

    results = pipeline(
        items,
        lambda item: agent("Plan " + item, label = "plan:" + item, phase = "Plan"),
        lambda plan, item: agent("Build %s from this plan: %s" % (item, plan), phase = "Build"),
        lambda built, item: agent(` + stage3 + `, phase = "Test"),
    )

    if args.get("failAtEnd"):
        fail("failing on purpose after the pipeline")
    return results
`
}

const (
	starStage3Original = `"Test %s; the build said: %s" % (item, built)`
	starStage3Edited   = `"Verify %s twice; the build said: %s" % (item, built)`
)

// starNestedScript is nestedScript in Starlark: 12 items × 3 stages, the
// second stage a parallel of 3 calls: 60 calls.
const starNestedScript = `meta = {"name": "e2e-nested", "description": "parallel inside pipeline stages"}

def sections(outline, item):
    return parallel([0, 1, 2], lambda k: agent("Section %d of %s: %s" % (k, item, outline)))

def main(args):
    return pipeline(
        ["part-%d" % i for i in range(12)],
        lambda item: agent("Outline " + item),
        sections,
        lambda secs, item: agent("Merge %s: %s" % (item, " | ".join(secs))),
    )
`

// starParentScript is parentScript in Starlark; child names the child's file.
func starParentScript(child string) string {
	return `meta = {"name": "e2e-parent", "description": "runs a child workflow"}

def main(args):
    topic = agent("Pick a topic to write about")
    parts = workflow("./` + child + `", {"topic": topic, "n": 16})
    summary = agent("Summarize: " + " / ".join(parts))
    return {"topic": topic, "parts": parts, "summary": summary}
`
}

// starChildScript is childScript in Starlark: two calls in each of n branches.
const starChildScript = `meta = {"name": "fanout-child", "description": "drafts and polishes args.n sections"}

def section(i, topic):
    draft = agent("Draft section %d about %s" % (i, topic))
    return agent("Polish section %d: %s" % (i, draft))

def main(args):
    topic = args["topic"]
    return parallel(range(args["n"]), lambda i: section(i, topic))
`

func TestStarCrashResume(t *testing.T) {
	t.Parallel()
	flags := []string{"--simulate-latency", latency, "--concurrency", "8"}
	childKilled := func(t *testing.T, finished map[string]bool) {
		child := 0
		for p := range finished {
			if strings.HasPrefix(p, "/wf.0:fanout-child/") {
				child++
			}
		}
		if child == 0 || child == 32 || finished["/agent.1"] {
			t.Fatalf("the kill did not land in the middle of the child (%d of 32 child calls finished): %v", child, e2etest.SortedKeys(finished))
		}
	}
	for _, tc := range []struct {
		name string
		c    crashCase
	}{
		{"pipeline", crashCase{
			files:  map[string]string{"pipeline.workflow.star": starPipelineScript(starStage3Original)},
			script: "pipeline.workflow.star", flags: flags, total: 60, killAt: 30,
		}},
		{"nested parallel", crashCase{
			files:  map[string]string{"nested.workflow.star": starNestedScript},
			script: "nested.workflow.star", flags: flags, total: 60, killAt: 30,
			atKill: func(t *testing.T, finished map[string]bool) {
				for p := range finished {
					if strings.Contains(p, "/s1/par.0/") {
						return
					}
				}
				t.Fatalf("no call of a nested parallel finished before the kill: %v", e2etest.SortedKeys(finished))
			},
		}},
		{"Starlark parent, Starlark child", crashCase{
			files:  map[string]string{"parent.workflow.star": starParentScript("child.workflow.star"), "child.workflow.star": starChildScript},
			script: "parent.workflow.star", flags: flags, total: 34, killAt: 12, atKill: childKilled,
		}},
		{"Starlark parent, JavaScript child", crashCase{
			files:  map[string]string{"parent.workflow.star": starParentScript("child.workflow.js"), "child.workflow.js": childScript},
			script: "parent.workflow.star", flags: flags, total: 34, killAt: 12, atKill: childKilled,
		}},
		{"JavaScript parent, Starlark child", crashCase{
			files: map[string]string{
				"parent.workflow.js":  strings.Replace(parentScript, "./child.workflow.js", "./child.workflow.star", 1),
				"child.workflow.star": starChildScript,
			},
			script: "parent.workflow.js", flags: flags, total: 34, killAt: 12, atKill: childKilled,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testCrashResume(t, tc.c)
		})
	}
}

// TestStarCrossLanguageResults checks that a Starlark workflow and its
// JavaScript twin give the same result, nested either way.
func TestStarCrossLanguageResults(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("js-parent.workflow.js", strings.Replace(parentScript, "./child.workflow.js", "./child.workflow.star", 1))
	e.Write("star-parent.workflow.star", starParentScript("child.workflow.js"))
	e.Write("child.workflow.js", childScript)
	e.Write("child.workflow.star", starChildScript)
	e.Write("pure.workflow.js", parentScript)
	want := e.RunCompleted("pure.workflow.js")
	for _, script := range []string{"js-parent.workflow.js", "star-parent.workflow.star"} {
		got := e.RunCompleted(script)
		e2etest.SameJSON(t, script+" vs the all-JavaScript run", got.Result, want.Result)
		if got.Stats.Live != 34 {
			t.Errorf("%s made %d calls, want 34", script, got.Stats.Live)
		}
	}
}

// TestStarEditResume: edit the stage-3 prompt of the Starlark pipeline, or
// a helper file it loads, and resume: only what changed runs live.
func TestStarEditResume(t *testing.T) {
	t.Parallel()
	stage3Paths := map[string]bool{}
	for i := range 20 {
		stage3Paths[fmt.Sprintf("/pipe.0/%d/s2/agent.0", i)] = true
	}
	resumeEdited := func(t *testing.T, e *e2etest.Env, id, script string, replayed, live int) e2etest.Outcome {
		t.Helper()
		r := e.DW("resume", id, "--script", script, "--json")
		e2etest.ExpectCode(t, r, 0)
		o := e2etest.ParseOutcome(t, r)
		if o.Status != "completed" || o.Stats.Replayed != replayed || o.Stats.Live != live {
			t.Fatalf("want completed with %d replayed and %d live:\n%s", replayed, live, r)
		}
		recs, _ := e2etest.ReadJournal(t, e.JournalPath(id))
		if i := e2etest.LastResume(recs); i < 0 || recs[i].Resume.Rule != "edit" || recs[i].Resume.OldHash == recs[i].Resume.NewHash {
			t.Errorf("the journal has no resume record with rule edit and two hashes")
		}
		return o
	}

	t.Run("completed", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("pipeline.workflow.star", starPipelineScript(starStage3Original))
		e.Write("edited.workflow.star", starPipelineScript(starStage3Edited))
		want := e.RunCompleted("edited.workflow.star")
		first := e.RunCompleted("pipeline.workflow.star")
		got := resumeEdited(t, e, first.RunID, "edited.workflow.star", 40, 20)
		e2etest.SameJSON(t, "the edited resume's result vs a fresh run of the edited script", got.Result, want.Result)
		recs, _ := e2etest.ReadJournal(t, e.JournalPath(first.RunID))
		if again := e2etest.StartedAfter(recs, e2etest.LastResume(recs)); !equalSets(again, stage3Paths) {
			t.Errorf("calls run live after the resume: %v\nwant exactly the 20 stage-3 calls", e2etest.SortedKeys(again))
		}
	})

	t.Run("killed", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("pipeline.workflow.star", starPipelineScript(starStage3Original))
		e.Write("edited.workflow.star", starPipelineScript(starStage3Edited))
		want := e.RunCompleted("edited.workflow.star")
		k := e.StartAndKill("pipeline.workflow.star", 30, 60, "--simulate-latency", latency, "--concurrency", "8")
		early := map[string]bool{}
		for p := range k.Finished {
			if strings.Contains(p, "/s0/") || strings.Contains(p, "/s1/") {
				early[p] = true
			}
		}
		got := resumeEdited(t, e, k.ID, "edited.workflow.star", len(early), 60-len(early))
		e2etest.SameJSON(t, "the edited resume's result vs a fresh run of the edited script", got.Result, want.Result)
		e2etest.NoReRun(t, k.Journal, early)
	})

	t.Run("edited helper", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("lib/prompts.star", "def test_prompt(item, built):\n    return "+starStage3Original+"\n")
		e.Write("pipeline.workflow.star", `load("lib/prompts.star", "test_prompt")
`+starPipelineScript("test_prompt(item, built)"))
		first := e.RunCompleted("pipeline.workflow.star")
		e.Write("lib/prompts.star", "def test_prompt(item, built):\n    return "+starStage3Edited+"\n")
		resumeEdited(t, e, first.RunID, "pipeline.workflow.star", 40, 20)
		recs, _ := e2etest.ReadJournal(t, e.JournalPath(first.RunID))
		if again := e2etest.StartedAfter(recs, e2etest.LastResume(recs)); !equalSets(again, stage3Paths) {
			t.Errorf("calls run live after the resume: %v\nwant exactly the 20 stage-3 calls", e2etest.SortedKeys(again))
		}
	})
}

// TestStarBadInputNeverJournals: each way a Starlark script can be wrong
// is a clear error naming the file and line. Scripts that do not load are
// never journaled; scripts that fail as they run fail with the position.
func TestStarBadInputNeverJournals(t *testing.T) {
	t.Parallel()
	const meta = "meta = {\"name\": \"bad\", \"description\": \"d\"}\n\n"
	for _, tc := range []struct {
		name, script, where, what string
		runs                      bool // the script loads, and fails as it runs
	}{
		{name: "syntax error", script: meta + "def main(args):\n    return (1 +\n", where: `:5:\d+`, what: "want primary expression"},
		{name: "non-literal meta", script: "meta = {\"name\": \"bad\", \"description\": describe()}\n\ndef main(args):\n    return 1\n", where: `:1:\d+`, what: "meta must be a pure literal: found a function call"},
		{name: "missing load target", script: "load(\"lib/gone.star\", \"x\")\n\n" + meta + "def main(args):\n    return x\n", where: `:1:\d+`, what: `load("lib/gone.star"): no such file`},
		{name: "undefined name", script: meta + "def main(args):\n    return agnet(\"x\")\n", where: `:4:\d+`, what: "undefined: agnet"},
		{name: "unknown option", script: meta + "def main(args):\n    return agent(\"x\", timeout = 5)\n", where: `:4:\d+`, what: `unknown option "timeout"`}, // checked at load
		{name: "wrong argument type", script: meta + "def main(args):\n    return agent([\"x\"])\n", where: `:4:\d+`, what: "the prompt must be a string, not list", runs: true},
		{name: "recursion", script: meta + "def f(n):\n    return f(n)\n\ndef main(args):\n    return f(1)\n", where: `:4:\d+`, what: "called recursively", runs: true},
		{name: "runaway loop", script: meta + "def main(args):\n    while True:\n        pass\n", where: `:\d+:\d+`, what: "steps in one thread", runs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := e2etest.NewEnv(t)
			e.Write("bad.workflow.star", tc.script)
			r := e.DW("run", "bad.workflow.star", "--json")
			e2etest.ExpectCode(t, r, 1)
			where := regexp.MustCompile(`bad\.workflow\.star` + tc.where)
			if !tc.runs {
				if !where.MatchString(r.Stderr) || !strings.Contains(r.Stderr, tc.what) {
					t.Errorf("stderr should name bad.workflow.star%s and say %q:\n%s", tc.where, tc.what, r)
				}
				if ids := e.JournalIDs(); len(ids) != 0 {
					t.Errorf("a script that does not load was journaled: %v", ids)
				}
				return
			}
			o := e2etest.ParseOutcome(t, r)
			if o.Status != "failed" || !where.MatchString(o.Error) || !strings.Contains(o.Error, tc.what) {
				t.Errorf("want a failed run whose error names bad.workflow.star%s and says %q:\n%s", tc.where, tc.what, r)
			}
			recs, _ := e2etest.ReadJournal(t, e.JournalPath(o.RunID))
			for _, rec := range recs {
				if strings.HasPrefix(rec.Type, "call.") {
					t.Errorf("a script that failed before any call journaled %s %s", rec.Type, rec.Path)
				}
			}
		})
	}
}

// TestStarSavedWorkflow runs a Starlark workflow saved in the project by
// name, and calls it by name from a JavaScript one.
func TestStarSavedWorkflow(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Workdir = t.TempDir()
	e.Write(".claude/workflows/gamma.workflow.star", `meta = {"name": "gamma", "description": "saved in Starlark"}

def main(args):
    return "gamma: " + agent("Gamma task " + ((args or {}).get("who") or "anyone"))
`)
	o := e.RunCompleted("gamma")
	var s string
	if json.Unmarshal(o.Result, &s) != nil || !strings.HasPrefix(s, "gamma: ") || o.Name != "gamma" {
		t.Errorf("run gamma gave %s (workflow %q)", o.Result, o.Name)
	}
	e.Write("caller.workflow.js", `export const meta = { name: 'caller', description: 'calls a saved Starlark workflow' }
return await workflow('gamma', { who: 'the caller' })
`)
	o = e.RunCompleted("caller.workflow.js")
	if json.Unmarshal(o.Result, &s) != nil || !strings.Contains(s, "Gamma task the caller") {
		t.Errorf("caller gave %s", o.Result)
	}
}
