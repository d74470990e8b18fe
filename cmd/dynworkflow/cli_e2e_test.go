package main_test

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// TestExitCodesAndJSON checks the exit codes and the shape of --json.
func TestExitCodesAndJSON(t *testing.T) {
	t.Parallel()

	t.Run("completed", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("hello.workflow.js", `export const meta = { name: 'hello', description: 'one call' }
const answer = await agent('Say hello to the tests')
return { answer }
`)
		r := e.DW("run", "hello.workflow.js", "--json")
		e2etest.ExpectCode(t, r, 0)
		var top map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.Stdout), &top); err != nil {
			t.Fatalf("stdout is not one JSON object (%v):\n%s", err, r)
		}
		var missing []string
		for _, k := range []string{"runId", "status", "result", "error", "stats"} {
			if _, ok := top[k]; !ok {
				missing = append(missing, k)
			}
		}
		var st map[string]json.RawMessage
		_ = json.Unmarshal(top["stats"], &st)
		for _, k := range []string{"agents", "replayed", "live", "failed", "inputTokens", "outputTokens"} {
			if _, ok := st[k]; !ok {
				missing = append(missing, "stats."+k)
			}
		}
		o := e2etest.ParseOutcome(t, r)
		if o.Status != "completed" || o.Stats.Agents != 1 || o.Stats.Live != 1 || o.Stats.InputTokens == 0 || o.Stats.OutputTokens == 0 {
			t.Errorf("want a completed run with one live call and its tokens:\n%s", r)
		}
		var res struct{ Answer string }
		if err := json.Unmarshal(o.Result, &res); err != nil || !strings.Contains(res.Answer, "Say hello to the tests") {
			t.Errorf("result should hold the simulated answer to the prompt: %s", o.Result)
		}
		if len(missing) > 0 {
			t.Errorf("the --json object of a completed run lacks the keys %v (README: runId, status, result, error, stats{agents, replayed, live, failed, inputTokens, outputTokens}):\n%s", missing, r.Stdout)
		}
	})

	t.Run("script throws", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("throws.workflow.js", `export const meta = { name: 'throws', description: 'throws after a call' }
const answer = await agent('Do the first step')
if (answer) {
  throw new Error('the second step is broken')
}
`)
		r := e.DW("run", "throws.workflow.js", "--json")
		e2etest.ExpectCode(t, r, 1)
		o := e2etest.ParseOutcome(t, r)
		if o.Status != "failed" {
			t.Fatalf("want status failed:\n%s", r)
		}
		if !regexp.MustCompile(`throws\.workflow\.js:4\b`).MatchString(o.Error) || !strings.Contains(o.Error, "the second step is broken") {
			t.Errorf("the error should name the file, line 4 and the message: %q", o.Error)
		}
		if s := e.Listed(o.RunID); s.Status != "failed" {
			t.Errorf("list --json shows %q, want failed", s.Status)
		}
	})

	t.Run("args from a file", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("echo.workflow.js", `export const meta = { name: 'echo', description: 'returns its args' }
return args
`)
		const args = `{"items": [1, 2, 3], "note": "from a file"}`
		e.Write("args.json", args)
		o := e.RunCompleted("echo.workflow.js", "--args", "@args.json")
		e2etest.SameJSON(t, "the result of --args @args.json", o.Result, json.RawMessage(args))
		o = e.RunCompleted("echo.workflow.js", "--args", `{"inline":true}`)
		e2etest.SameJSON(t, "the result of inline --args", o.Result, json.RawMessage(`{"inline":true}`))
	})

	t.Run("usage errors", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("ok.workflow.js", `export const meta = { name: 'ok', description: 'd' }
return await agent('never runs')
`)
		for _, tc := range []struct {
			name string
			Args []string
			want []string // in stderr
		}{
			{"unknown flag", []string{"run", "ok.workflow.js", "--bogus"}, []string{"unknown flag: --bogus"}},
			{"run without a file", []string{"run"}, []string{"run needs a workflow file"}},
			{"resume without an id", []string{"resume"}, []string{"resume needs a run id", "dynworkflow list"}},
			{"show without an id", []string{"show"}, []string{"show needs a run id"}},
			{"bad args JSON", []string{"run", "ok.workflow.js", "--args", "{bad"}, []string{"--args is not valid JSON", "@FILE"}},
			{"missing args file", []string{"run", "ok.workflow.js", "--args", "@missing.json"}, []string{"--args", "missing.json"}},
			{"bad concurrency", []string{"run", "ok.workflow.js", "--concurrency", "0"}, []string{"--concurrency must be between"}},
			{"bad latency", []string{"run", "ok.workflow.js", "--simulate-latency", "soon"}, []string{"--simulate-latency"}},
		} {
			r := e.DW(tc.Args...)
			if r.Code != 64 {
				t.Errorf("%s: want exit code 64:\n%s", tc.name, r)
				continue
			}
			for _, w := range append(tc.want, "Run 'dynworkflow "+tc.Args[0]+" --help' for usage.") {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, r)
				}
			}
		}
		if ids := e.JournalIDs(); len(ids) > 0 {
			t.Errorf("usage errors journaled runs: %v", ids)
		}
	})
}

// TestBadInputNeverJournals checks that a script that cannot load is
// reported with its position and never becomes a run, and that run-time
// mistakes fail the run with an explanation.
func TestBadInputNeverJournals(t *testing.T) {
	t.Parallel()

	t.Run("load errors", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name, script, where, what string
		}{
			{"meta with a variable", `export const meta = {
  name: 'bad-meta',
  description: someVariable,
}
return 1
`, `:3:\d+`, "meta must be a pure literal"},
			{"meta not first", `const name = 'late'
export const meta = { name: 'late', description: 'd' }
return 1
`, `:2:\d+`, "meta must be the first statement"},
			{"import", `import fs from 'fs'
export const meta = { name: 'imports', description: 'd' }
return 1
`, `:1:\d+`, "import is not supported"},
			{"syntax error", `export const meta = { name: 'syntax', description: 'd' }
const a = (1 +
return a
`, `:3:\d+`, "SyntaxError"},
			{"TypeScript", `export const meta = { name: 'typed', description: 'd' }
const n: number = 1
return n
`, `:2:\d+`, "TypeScript"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				e := e2etest.NewEnv(t)
				e.Write("bad.workflow.js", tc.script)
				r := e.DW("run", "bad.workflow.js", "--json")
				e2etest.ExpectCode(t, r, 1)
				if !regexp.MustCompile(`bad\.workflow\.js` + tc.where).MatchString(r.Stderr) {
					t.Errorf("stderr should name bad.workflow.js%s (file:line:col):\n%s", tc.where, r)
				}
				if !strings.Contains(r.Stderr, tc.what) {
					t.Errorf("stderr should say %q:\n%s", tc.what, r)
				}
				if sums := e.List(); len(sums) != 0 {
					t.Errorf("a script that does not load became a run: %+v", sums)
				}
				if ids := e.JournalIDs(); len(ids) != 0 {
					t.Errorf("a script that does not load was journaled: %v", ids)
				}
			})
		}
	})

	t.Run("nondeterminism", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ name, expr string }{
			{"Date.now", "Date.now()"},
			{"Math.random", "Math.random()"},
			{"new Date", "new Date()"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				e := e2etest.NewEnv(t)
				e.Write("clock.workflow.js", "export const meta = { name: 'clock', description: 'd' }\nconst stamp = "+tc.expr+"\nreturn String(stamp)\n")
				r := e.DW("run", "clock.workflow.js", "--json")
				e2etest.ExpectCode(t, r, 1)
				o := e2etest.ParseOutcome(t, r)
				if o.Status != "failed" {
					t.Fatalf("want status failed:\n%s", r)
				}
				for _, w := range []string{tc.expr, "clock.workflow.js:2:", "resumed run re-executes"} {
					if !strings.Contains(o.Error, w) {
						t.Errorf("the error should contain %q (what, where and why: replay): %q", w, o.Error)
					}
				}
			})
		}
		// new Date(x) is deterministic and allowed.
		e := e2etest.NewEnv(t)
		e.Write("date.workflow.js", "export const meta = { name: 'date', description: 'd' }\nreturn new Date(0).toISOString()\n")
		o := e.RunCompleted("date.workflow.js")
		e2etest.SameJSON(t, "new Date(0)", o.Result, json.RawMessage(`"1970-01-01T00:00:00.000Z"`))
	})

	const schemaScript = `export const meta = { name: 'schema', description: 'an answer that never validates' }
const SHAPE = { type: 'object', required: ['count'], properties: { count: { type: 'number' } } }
%s
`
	t.Run("schema never validates", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("schema.workflow.js", strings.Replace(schemaScript, "%s",
			"return await agent('Count the files [simulate:invalid]', { schema: SHAPE })", 1))
		r := e.DW("run", "schema.workflow.js", "--json")
		e2etest.ExpectCode(t, r, 1)
		o := e2etest.ParseOutcome(t, r)
		if o.Status != "failed" || !strings.Contains(o.Error, "schema") || !strings.Contains(o.Error, "3 attempts") {
			t.Fatalf("want a failed run whose error explains the schema failure after 3 attempts:\n%s", r)
		}
		recs, _ := e2etest.ReadJournal(t, e.JournalPath(o.RunID))
		var failed *e2etest.Record
		for i := range recs {
			if recs[i].Type == "call.failed" && recs[i].Path == "/agent.0" {
				failed = &recs[i]
			}
		}
		if failed == nil {
			t.Fatalf("the journal has no call.failed for /agent.0")
		}
		if failed.Error == nil || failed.Error.Code != "SCHEMA_NONCOMPLIANCE" || failed.Answer == nil || failed.Answer.Attempts != 3 {
			t.Errorf("call.failed should carry code SCHEMA_NONCOMPLIANCE after 3 attempts: %+v", *failed)
		}
	})

	t.Run("schema failure caught", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("schema.workflow.js", strings.Replace(schemaScript, "%s", `try {
  return await agent('Count the files [simulate:invalid]', { schema: SHAPE })
} catch (err) {
  return 'caught: ' + err.message
}`, 1))
		o := e.RunCompleted("schema.workflow.js")
		var s string
		if json.Unmarshal(o.Result, &s) != nil || !strings.HasPrefix(s, "caught: ") || !strings.Contains(s, "schema") {
			t.Errorf("the script should catch the schema error: %s", o.Result)
		}
		if o.Stats.Failed != 1 {
			t.Errorf("stats.failed = %d, want 1", o.Stats.Failed)
		}
	})
}

// TestLimitsReported runs into each limit: the run fails with an error
// naming the flag that raises it, and exit code 1, and the limit is in the
// run's log. A limit met inside parallel() or pipeline() fails the run
// too, in both languages, as in the Node runtime: it used to make the
// branches null and complete the run, exit 0.
func TestLimitsReported(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		flags        []string
		Flag         string // named by the error
		log          string // in show --json logs
		file         string // the script's name, limit.workflow.js when empty
	}{
		{"max-agents", `export const meta = { name: 'five', description: 'five sequential calls' }
const out = []
for (let i = 0; i < 5; i++) out.push(await agent('step ' + i))
return out
`, []string{"--max-agents", "3"}, "--max-agents", "cap of 3 agents", ""},
		{"max-items", `export const meta = { name: 'wide', description: 'five items at once' }
return await parallel([0, 1, 2, 3, 4].map(i => () => agent('item ' + i)))
`, []string{"--max-items", "4"}, "--max-items", "cap of 4", ""},
		{"token-budget", `export const meta = { name: 'loop', description: 'calls until stopped' }
let n = 0
while (n < 100) { await agent('iteration ' + n + ' of a loop that would go on for a long while'); n++ }
return n
`, []string{"--token-budget", "60"}, "--token-budget", "of 60 tokens", ""},
		{"max-agents in parallel", `export const meta = { name: 'wide', description: 'five calls at once' }
return await parallel([0, 1, 2, 3, 4].map(i => () => agent('item ' + i)))
`, []string{"--max-agents", "3"}, "--max-agents", "cap of 3 agents", ""},
		{"max-agents in parallel, Starlark", `meta = {"name": "wide", "description": "five calls at once"}

def main(args):
    return parallel([0, 1, 2, 3, 4], lambda i: agent("item %d" % i))
`, []string{"--max-agents", "3"}, "--max-agents", "cap of 3 agents", "limit.workflow.star"},
		{"token-budget in pipeline", `export const meta = { name: 'long', description: 'twenty items, two stages' }
return await pipeline(Array.from({ length: 20 }, (_, i) => i), i => agent('item ' + i + ' of a list that would go on for a long while'), a => agent('check ' + a))
`, []string{"--token-budget", "60", "--concurrency", "1"}, "--token-budget", "of 60 tokens", ""},
		{"token-budget in pipeline, Starlark", `meta = {"name": "long", "description": "twenty items, two stages"}

def main(args):
    return pipeline(list(range(20)), lambda i: agent("item %d of a list that would go on for a long while" % i), lambda a: agent("check " + a))
`, []string{"--token-budget", "60", "--concurrency", "1"}, "--token-budget", "of 60 tokens", "limit.workflow.star"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := e2etest.NewEnv(t)
			file := cmp.Or(tc.file, "limit.workflow.js")
			e.Write(file, tc.script)
			r := e.DW(append([]string{"run", file, "--json"}, tc.flags...)...)
			e2etest.ExpectCode(t, r, 1)
			o := e2etest.ParseOutcome(t, r)
			if o.Status != "failed" || !strings.Contains(o.Error, tc.Flag) {
				t.Fatalf("want a failed run whose error names %s:\n%s", tc.Flag, r)
			}
			if !strings.Contains(r.Stderr, "limit reached") {
				t.Errorf("the limit was not reported on stderr:\n%s", r)
			}
			d := e.Show(o.RunID)
			found := false
			for _, l := range d.Logs {
				if strings.Contains(l.Message, "limit reached") && strings.Contains(l.Message, tc.log) {
					found = true
				}
			}
			if !found {
				t.Errorf("show --json logs lack a \"limit reached\" line mentioning %q: %+v", tc.log, d.Logs)
			}
		})
	}
}

// TestListShow checks what list and show report, and that they refuse
// unknown ids and ids that would leave the runs directory.
func TestListShow(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("three.workflow.js", `export const meta = { name: 'three-calls', description: 'three calls in a row' }
const a = await agent('First question')
const b = await agent('Second question, after: ' + a)
log('two answers in')
return [a, b, await agent('Third question')]
`)
	e.Write("other.workflow.js", `export const meta = { name: 'other', description: 'd' }
return 42
`)
	first := e.RunCompleted("three.workflow.js")
	second := e.RunCompleted("other.workflow.js")

	sums := e.List()
	if len(sums) != 2 || sums[0].RunID != second.RunID || sums[1].RunID != first.RunID {
		t.Fatalf("list --json should hold both runs, newest first: %+v", sums)
	}
	r := e.DWOK("list", "--json")
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.Stdout), &raw); err != nil {
		t.Fatal(err)
	}
	for _, entry := range raw {
		for _, k := range []string{"runId", "status", "name", "startedAt"} {
			if _, ok := entry[k]; !ok {
				t.Errorf("a list --json entry lacks %q: %s", k, r.Stdout)
			}
		}
	}
	if s := sums[1]; s.Name != "three-calls" || s.Status != "completed" || s.StartedAt.IsZero() || s.Stats.Agents != 3 {
		t.Errorf("list entry of the first run: %+v", s)
	}

	d := e.Show(first.RunID)
	if d.Summary.RunID != first.RunID || d.Summary.Status != "completed" {
		t.Errorf("show --json summary: %+v", d.Summary)
	}
	if len(d.Calls) != 3 {
		t.Fatalf("show --json has %d calls, want 3: %+v", len(d.Calls), d.Calls)
	}
	var results []string
	if err := json.Unmarshal(first.Result, &results); err != nil {
		t.Fatal(err)
	}
	for i, c := range d.Calls {
		var res string
		_ = json.Unmarshal(c.Result, &res)
		if c.Status != "done" || c.Prompt == "" || res != results[i] {
			t.Errorf("call %d: status %q, prompt %q, result %q; want done, a prompt and %q", i, c.Status, c.Prompt, res, results[i])
		}
	}
	if !strings.HasPrefix(d.Calls[1].Prompt, "Second question, after: ") {
		t.Errorf("the second call's prompt is %q", d.Calls[1].Prompt)
	}
	e2etest.SameJSON(t, "show's result vs run's", d.Result, first.Result)
	if !slices.ContainsFunc(d.Logs, func(l struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	}) bool {
		return l.Message == "two answers in"
	}) {
		t.Errorf("show --json logs lack the script's log line: %+v", d.Logs)
	}
	text := e.DWOK("show", first.RunID)
	if !strings.Contains(text.Stdout, first.RunID) || !strings.Contains(text.Stdout, "/agent.2") {
		t.Errorf("show (text) should list the run and its calls:\n%s", text)
	}

	r = e.DW("show", "no-such-run-123")
	e2etest.ExpectCode(t, r, 1)
	if !strings.Contains(r.Stderr, "no such run") {
		t.Errorf("show of an unknown id should say \"no such run\":\n%s", r)
	}

	// A run id that leaves the runs directory is refused, and touches
	// nothing there.
	bait := filepath.Join(filepath.Dir(e.RunsDir()), "x.jsonl")
	if err := os.WriteFile(bait, []byte(`{"seq":1,"type":"run"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"show", "resume", "stop", "delete"} {
		r := e.DW(cmd, "../x")
		if r.Code == 0 || !strings.Contains(r.Stderr, "invalid run id") {
			t.Errorf("%s ../x should be refused as an invalid run id:\n%s", cmd, r)
		}
	}
	if _, err := os.Stat(bait); err != nil {
		t.Errorf("a file outside the runs directory was touched: %v", err)
	}
}

// TestRecovery damages a run's files the way crashes and disks do.
func TestRecovery(t *testing.T) {
	t.Parallel()

	t.Run("torn journal tail", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("pipeline.workflow.js", pipelineScript(stage3Original))
		want := e.RunCompleted("pipeline.workflow.js")
		k := e.StartAndKill("pipeline.workflow.js", 30, 60, "--simulate-latency", latency, "--concurrency", "8")

		// Cut the last line in the middle, as a crash mid-write would.
		b, err := os.ReadFile(k.Journal)
		if err != nil {
			t.Fatal(err)
		}
		body := strings.TrimSuffix(string(b), "\n")
		start := strings.LastIndexByte(body, '\n') + 1
		cut := start + (len(body)-start)/2
		torn := b[start:cut]
		if err := os.Truncate(k.Journal, int64(cut)); err != nil {
			t.Fatal(err)
		}
		recs, tail := e2etest.ReadJournal(t, k.Journal)
		if string(tail) != string(torn) {
			t.Fatalf("the journal does not end with the torn line")
		}
		finished := e2etest.FinishedAgents(recs)

		if d := e.Show(k.ID); d.Summary.RunID != k.ID {
			t.Errorf("show of a run with a torn tail: %+v", d.Summary)
		}
		r := e.DW("resume", k.ID, "--json")
		e2etest.ExpectCode(t, r, 0)
		got := e2etest.ParseOutcome(t, r)
		if got.Status != "completed" || got.Stats.Replayed != len(finished) || got.Stats.Replayed+got.Stats.Live != 60 {
			t.Fatalf("want completed with %d replayed of 60:\n%s", len(finished), r)
		}
		e2etest.SameJSON(t, "the resumed run's result", got.Result, want.Result)
		sides, _ := filepath.Glob(k.Journal + ".torn-*")
		if len(sides) != 1 {
			t.Fatalf("want one %s.torn-* side file, found %v", filepath.Base(k.Journal), sides)
		}
		saved, err := os.ReadFile(sides[0])
		if err != nil {
			t.Fatal(err)
		}
		if string(saved) != string(torn) {
			t.Errorf("the side file holds %q, want the torn bytes %q", saved, torn)
		}
		_, tail = e2etest.ReadJournal(t, k.Journal)
		if len(tail) != 0 {
			t.Errorf("the journal still ends with a torn line: %q", tail)
		}
	})

	// corruptRun makes a completed run and writes garbage over the named
	// files of it.
	corruptRun := func(t *testing.T, suffixes ...string) (*e2etest.Env, e2etest.Outcome) {
		e := e2etest.NewEnv(t)
		e.Write("pipeline.workflow.js", pipelineScript(stage3Original))
		o := e.RunCompleted("pipeline.workflow.js", "--args", `{"items":4}`)
		for _, s := range suffixes {
			if err := os.WriteFile(filepath.Join(e.RunsDir(), o.RunID+s), []byte("\x00garbage{{{not json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return e, o
	}
	resumeAll := func(t *testing.T, e *e2etest.Env, o e2etest.Outcome) {
		t.Helper()
		r := e.DW("resume", o.RunID, "--json")
		e2etest.ExpectCode(t, r, 0)
		got := e2etest.ParseOutcome(t, r)
		if got.Status != "completed" || got.Stats.Replayed != 12 || got.Stats.Live != 0 {
			t.Fatalf("want completed with all 12 calls replayed:\n%s", r)
		}
		e2etest.SameJSON(t, "the resumed run's result", got.Result, o.Result)
		if s := e.Listed(o.RunID); s.Status != "completed" {
			t.Errorf("after the resume, list --json shows %q", s.Status)
		}
	}

	t.Run("both snapshots corrupt", func(t *testing.T) {
		t.Parallel()
		e, o := corruptRun(t, ".json", ".json.bak")
		s := e.Listed(o.RunID)
		if s.Status != "completed" || s.Name != "e2e-pipeline" || s.Stats.Agents != 12 || s.StartedAt.IsZero() {
			t.Errorf("list --json should rebuild the run from its journal: %+v", s)
		}
		d := e.Show(o.RunID)
		if d.Summary.Status != "completed" || len(d.Calls) != 12 {
			t.Errorf("show --json should rebuild the run from its journal: status %q, %d calls", d.Summary.Status, len(d.Calls))
		}
		e2etest.SameJSON(t, "show's result", d.Result, o.Result)
		resumeAll(t, e, o)
	})

	t.Run("snapshot corrupt", func(t *testing.T) {
		t.Parallel()
		e, o := corruptRun(t)
		bakPath := filepath.Join(e.RunsDir(), o.RunID+".json.bak")
		b, err := os.ReadFile(bakPath)
		if err != nil {
			t.Fatal(err)
		}
		var bak struct{ Summary e2etest.Summary }
		if err := json.Unmarshal(b, &bak); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.RunsDir(), o.RunID+".json"), []byte("\x00garbage{{{not json"), 0o600); err != nil {
			t.Fatal(err)
		}
		// The backup is the snapshot before the last one, older than the
		// journal: list must report what the journal says, not the backup.
		s := e.Listed(o.RunID)
		if s.Status != "completed" || s.Stats.Agents != 12 || s.JournalSeq <= bak.Summary.JournalSeq || s.Name != bak.Summary.Name {
			t.Errorf("list --json should rebuild the run from its journal rather than report the stale backup (seq %d, status %q): got %+v",
				bak.Summary.JournalSeq, bak.Summary.Status, s)
		}
		if d := e.Show(o.RunID); len(d.Calls) != 12 {
			t.Errorf("show --json has %d calls, want 12", len(d.Calls))
		}
		resumeAll(t, e, o)
	})

	// show folds the whole journal, which ends with the run's end record:
	// with the snapshot gone, its summary must not contradict it.
	t.Run("snapshot corrupt, show agrees with the journal", func(t *testing.T) {
		t.Parallel()
		e, o := corruptRun(t, ".json")
		d := e.Show(o.RunID)
		e2etest.SameJSON(t, "show's result", d.Result, o.Result)
		if s := d.Summary; s.Status != "completed" || s.Stats.Agents != 12 {
			t.Errorf("show --json of a completed run whose snapshot is corrupt reports status %q (pause reason %q) and %d agents; "+
				"its journal (and the same output's result) say completed with 12 agents", s.Status, s.PauseReason, s.Stats.Agents)
		}
	})
}

// TestSavedWorkflows runs workflows by name from the project given with
// --cwd, from another working directory.
func TestSavedWorkflows(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Workdir = t.TempDir()
	e.Write(".claude/workflows/alpha.js", `export const meta = { name: 'alpha', description: 'saved for Claude Code' }
return 'alpha: ' + await agent('Alpha task')
`)
	e.Write(".dynworkflow/workflows/beta.workflow.js", `export const meta = { name: 'beta', description: 'saved for dynworkflow' }
return 'beta: ' + await agent('Beta task')
`)
	for _, name := range []string{"alpha", "beta"} {
		o := e.RunCompleted(name)
		var s string
		if json.Unmarshal(o.Result, &s) != nil || !strings.HasPrefix(s, name+": ") {
			t.Errorf("run %s gave %s", name, o.Result)
		}
		if o.Name != name {
			t.Errorf("run %s ran the workflow named %q", name, o.Name)
		}
	}
	r := e.DW("run", "gamma")
	if r.Code == 0 {
		t.Fatalf("an unknown workflow name should fail:\n%s", r)
	}
	for _, w := range []string{"gamma", filepath.Join(e.Dir, ".claude", "workflows"), filepath.Join(e.Dir, ".dynworkflow", "workflows")} {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("the error should mention %q (where it looked):\n%s", w, r)
		}
	}
}

// TestDeleteStop checks that delete removes a run's files and that stop
// makes a paused run non-resumable.
func TestDeleteStop(t *testing.T) {
	t.Parallel()

	t.Run("delete", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("hello.workflow.js", `export const meta = { name: 'hello', description: 'd' }
return await agent('Hello')
`)
		keep := e.RunCompleted("hello.workflow.js")
		gone := e.RunCompleted("hello.workflow.js")
		files, _ := filepath.Glob(filepath.Join(e.RunsDir(), gone.RunID+".*"))
		if len(files) < 2 {
			t.Fatalf("a finished run should have a journal and a snapshot, found %v", files)
		}
		r := e.DWOK("delete", gone.RunID, "--json")
		if !strings.Contains(r.Stdout, `"action":"deleted"`) {
			t.Errorf("delete --json: %s", r.Stdout)
		}
		if files, _ := filepath.Glob(filepath.Join(e.RunsDir(), gone.RunID+".*")); len(files) != 0 {
			t.Errorf("delete left files behind: %v", files)
		}
		sums := e.List()
		if len(sums) != 1 || sums[0].RunID != keep.RunID {
			t.Errorf("after delete, list --json should hold only the other run: %+v", sums)
		}
		r = e.DW("show", gone.RunID)
		if r.Code != 1 || !strings.Contains(r.Stderr, "no such run") {
			t.Errorf("show of a deleted run should say \"no such run\":\n%s", r)
		}
		if r = e.DW("delete", gone.RunID); r.Code == 0 {
			t.Errorf("deleting a deleted run should fail:\n%s", r)
		}
	})

	t.Run("stop a paused run", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		// A rate limit pauses the run, deterministically.
		e.Write("limited.workflow.js", `export const meta = { name: 'limited', description: 'hits a rate limit' }
const a = await agent('First step')
return [a, await agent('Second step [simulate:ratelimit]')]
`)
		r := e.DW("run", "limited.workflow.js", "--json")
		e2etest.ExpectCode(t, r, 2)
		o := e2etest.ParseOutcome(t, r)
		if o.Status != "paused" || !strings.Contains(o.PauseReason, "rate limit") {
			t.Fatalf("want a run paused by the rate limit:\n%s", r)
		}
		e.DWOK("stop", o.RunID)
		if s := e.Listed(o.RunID); s.Status != "stopped" {
			t.Fatalf("after stop, list --json shows %q", s.Status)
		}
		recs, _ := e2etest.ReadJournal(t, e.JournalPath(o.RunID))
		r = e.DW("resume", o.RunID, "--json")
		e2etest.ExpectCode(t, r, 1)
		if !strings.Contains(r.Stderr, "stopped") || !strings.Contains(r.Stderr, "start a new run") {
			t.Errorf("resume of a stopped run should say it was stopped and what to do:\n%s", r)
		}
		after, _ := e2etest.ReadJournal(t, e.JournalPath(o.RunID))
		if len(after) != len(recs) {
			t.Errorf("a refused resume wrote %d journal records", len(after)-len(recs))
		}
	})
}
