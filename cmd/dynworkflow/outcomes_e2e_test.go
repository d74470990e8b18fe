package main_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// scriptErrorOutcome is the part of a --json outcome or show --json that
// tells of the errors a script threw in branches that became null.
type scriptErrorOutcome struct {
	RunID  string `json:"runId"`
	Status string `json:"status"`
	Stats  struct {
		ScriptErrors int `json:"scriptErrors"`
	} `json:"stats"`
	ScriptErrors []struct {
		Message   string `json:"message"`
		Position  string `json:"position"`
		Count     int    `json:"count"`
		FirstPath string `json:"firstPath"`
	} `json:"scriptErrors"`
}

// TestScriptErrorsAreNotASuccess runs the README's lens review with its
// bug (FINDINGS undefined in every branch), in JavaScript, and a Starlark
// fan-out that appends to a frozen list: each branch becomes null, as in
// the Node runtime, but the run says so everywhere and exits 3, and
// --strict (or meta.strict) fails it.
func TestScriptErrorsAreNotASuccess(t *testing.T) {
	t.Parallel()
	scripts := []struct {
		name, file, text, says, at string
		branches                   int
	}{
		{"javascript", "lens.workflow.js", `export const meta = { name: 'lens', description: 'lens review' }
const lenses = ['correctness', 'security', 'speed']
return await parallel(lenses.map(l => () => agent('review for ' + l + FINDINGS)))
`, "ReferenceError: FINDINGS is not defined", "lens.workflow.js:3:", 3},
		{"starlark", "lens.workflow.star", `meta = {"name": "lens", "description": "lens review"}
SEEN = []
def review(lens):
    def branch():
        SEEN.append(lens)
        return agent("review for " + lens)
    return branch
def main(args):
    return parallel([review(l) for l in ["correctness", "security"]])
`, "cannot append to frozen list", "lens.workflow.star:5:", 2},
	}
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			e := e2etest.NewEnv(t)
			e.Write(sc.file, sc.text)

			// The terminal outcome: the status line says it, the errors
			// are listed with where they were thrown, exit code 3.
			r := e.DW("run", sc.file)
			e2etest.ExpectCode(t, r, 3)
			line := regexp.MustCompile(`completed with ` + regexp.QuoteMeta(plural(sc.branches, "script error")) + ` in `)
			if !line.MatchString(r.Stderr) {
				t.Errorf("the outcome line should say the run completed with %d script errors:\n%s", sc.branches, r)
			}
			if !strings.Contains(r.Stderr, sc.says) || !strings.Contains(r.Stderr, sc.at) || !strings.Contains(r.Stderr, "--strict") {
				t.Errorf("the outcome should list %q at %s and name --strict:\n%s", sc.says, sc.at, r)
			}

			// --json: the count and each cause with its position.
			r = e.DW("run", sc.file, "--json")
			e2etest.ExpectCode(t, r, 3)
			var o scriptErrorOutcome
			if err := json.Unmarshal([]byte(r.Stdout), &o); err != nil {
				t.Fatalf("stdout is not a --json outcome (%v):\n%s", err, r)
			}
			checkScriptErrors(t, "run --json", o, "completed", sc.branches, sc.says, sc.at)

			// show --json and show.
			var d struct {
				Summary      scriptErrorOutcome `json:"summary"`
				ScriptErrors json.RawMessage    `json:"scriptErrors"`
			}
			show := e.DWOK("show", o.RunID, "--json")
			if err := json.Unmarshal([]byte(show.Stdout), &d); err != nil {
				t.Fatal(err)
			}
			d.Summary.ScriptErrors = nil
			if err := json.Unmarshal(d.ScriptErrors, &d.Summary.ScriptErrors); err != nil {
				t.Fatalf("show --json has no scriptErrors (%v):\n%s", err, show.Stdout)
			}
			checkScriptErrors(t, "show --json", d.Summary, "completed", sc.branches, sc.says, sc.at)
			text := e.DWOK("show", o.RunID).Stdout
			if !strings.Contains(text, "completed with "+plural(sc.branches, "script error")) || !strings.Contains(text, sc.at) {
				t.Errorf("show should head the run with its script errors and list them:\n%s", text)
			}

			// list and list --json.
			if s := e.Listed(o.RunID); s.Status != "completed" {
				t.Errorf("list --json: status %q", s.Status)
			}
			var sums []scriptErrorOutcome
			if err := json.Unmarshal([]byte(e.DWOK("list", "--json").Stdout), &sums); err != nil || len(sums) == 0 || sums[0].Stats.ScriptErrors != sc.branches {
				t.Errorf("list --json should count %d script errors: %+v (%v)", sc.branches, sums, err)
			}
			if out := e.DWOK("list").Stdout; !strings.Contains(out, plural(sc.branches, "script error")) {
				t.Errorf("list should note the script errors:\n%s", out)
			}

			// --strict fails the run at the first, with its code.
			r = e.DW("run", sc.file, "--strict", "--json")
			e2etest.ExpectCode(t, r, 1)
			var failed struct {
				Status, Error, ErrorCode string
			}
			if err := json.Unmarshal([]byte(r.Stdout), &failed); err != nil || failed.Status != "failed" ||
				!strings.Contains(failed.Error, sc.says) || !strings.Contains(failed.Error, sc.at) {
				t.Errorf("--strict: want a failed run naming %q at %s:\n%s", sc.says, sc.at, r)
			}
		})
	}

	t.Run("meta.strict", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("strict.workflow.js", `export const meta = { name: 'strict', description: 'strict in meta', strict: true }
return await parallel([() => agent('fine'), () => { throw new TypeError('a branch bug') }])
`)
		e.Write("strict.workflow.star", `meta = {"name": "strict", "description": "strict in meta", "strict": True}
def bug():
    fail("a branch bug")
def main(args):
    return parallel([lambda: agent("fine"), bug])
`)
		for _, f := range []string{"strict.workflow.js", "strict.workflow.star"} {
			r := e.DW("run", f)
			e2etest.ExpectCode(t, r, 1)
			if !strings.Contains(r.Stderr, "SCRIPT_ERROR") || !strings.Contains(r.Stderr, "a branch bug") {
				t.Errorf("%s: meta.strict should fail the run with SCRIPT_ERROR and the branch's error:\n%s", f, r)
			}
		}
	})

	t.Run("a fixed script completes cleanly", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("lens.workflow.js", `export const meta = { name: 'lens', description: 'd' }
return await parallel(['a', 'b'].map(l => () => agent('review ' + l + FINDINGS)))
`)
		r := e.DW("run", "lens.workflow.js", "--json")
		e2etest.ExpectCode(t, r, 3)
		id := e2etest.ParseOutcome(t, r).RunID
		fixed := e.Write("fixed.workflow.js", `export const meta = { name: 'lens', description: 'd' }
const FINDINGS = ''
return await parallel(['a', 'b'].map(l => () => agent('review ' + l + FINDINGS)))
`)
		r = e.DW("resume", id, "--script", fixed, "--json")
		e2etest.ExpectCode(t, r, 0)
		var o scriptErrorOutcome
		_ = json.Unmarshal([]byte(r.Stdout), &o)
		if o.Stats.ScriptErrors != 0 || len(o.ScriptErrors) != 0 {
			t.Errorf("the resumed execution threw nothing; its outcome should say no script errors:\n%s", r)
		}
	})
}

// TestScriptErrorsOfAServedRun: a run the live runtime owns says the
// same over the API, to run --attach (exit 3), in serve's own log, and
// --strict goes with a forwarded run.
func TestScriptErrorsOfAServedRun(t *testing.T) {
	e := e2etest.NewEnv(t)
	e.Write("lens.workflow.js", `export const meta = { name: 'lens', description: 'd' }
return await parallel(['a', 'b'].map(l => () => agent('review ' + l + FINDINGS)))
`)
	s := e2etest.Serve(e)
	r := e.DW("run", "lens.workflow.js", "--attach", "--json")
	e2etest.ExpectCode(t, r, 3)
	var o scriptErrorOutcome
	if err := json.Unmarshal([]byte(r.Stdout), &o); err != nil {
		t.Fatalf("stdout is not a --json outcome (%v):\n%s", err, r)
	}
	checkScriptErrors(t, "run --attach --json", o, "completed", 2, "FINDINGS is not defined", "lens.workflow.js:2:")
	d, err := s.Client.Run(context.Background(), o.RunID)
	if err != nil || d.Summary.Stats.ScriptErrors != 2 || len(d.ScriptErrors) != 1 || d.ScriptErrors[0].Position == "" {
		t.Errorf("the API's detail should carry the script errors: %+v %v", d, err)
	}
	e2etest.WaitUntil(t, "serve to log the run's end with its script errors", func() bool {
		return strings.Contains(s.Proc.Stderr.String(), o.RunID+" completed with 2 script errors")
	})
	r = e.DW("run", "lens.workflow.js", "--attach", "--strict", "--json")
	e2etest.ExpectCode(t, r, 1)
	if !strings.Contains(r.Stdout, "SCRIPT_ERROR") {
		t.Errorf("--strict should reach the served run and fail it with SCRIPT_ERROR:\n%s", r)
	}
}

func checkScriptErrors(t *testing.T, where string, o scriptErrorOutcome, status string, n int, says, at string) {
	t.Helper()
	if o.Status != status || o.Stats.ScriptErrors != n || len(o.ScriptErrors) != 1 {
		t.Fatalf("%s: want %s with %d script errors in one group, got %+v", where, status, n, o)
	}
	g := o.ScriptErrors[0]
	if g.Count != n || !strings.Contains(g.Message, says) || !strings.Contains(g.Position, at) || g.FirstPath == "" {
		t.Errorf("%s: want %d× %q at %s…, got %+v", where, n, says, at, g)
	}
}

// TestOptionsAndSchemasAreCheckedAtLoad runs scripts whose agent()
// options are wrong where the script writes them out: each fails before
// any agent runs (no journal call), naming file, line and column.
func TestOptionsAndSchemasAreCheckedAtLoad(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	cases := []struct{ file, text, at, says string }{
		{"shema.workflow.js", `export const meta = { name: 'x', description: 'd' }
const first = await agent('paid for before the bug')
return await parallel([() => agent('p', { shema: { type: 'object' } })])
`, "shema.workflow.js:3:43", `did you mean "schema"`},
		{"ten.workflow.js", `export const meta = { name: 'x', description: 'd' }
const S = { type: 'object', properties: { n: { type: 'number', maximum: 'ten' } } }
await agent('paid for before the bug')
return await pipeline([1, 2], x => agent('p' + x, { schema: S }))
`, "ten.workflow.js:2:11", "not a valid JSON Schema"},
		{"shema.workflow.star", `meta = {"name": "x", "description": "d"}
def main(args):
    agent("paid for before the bug")
    return agent("p", shema = {"type": "object"})
`, "shema.workflow.star:4:23", `did you mean "schema"`},
	}
	for _, c := range cases {
		e.Write(c.file, c.text)
		r := e.DW("run", c.file, "--json")
		e2etest.ExpectCode(t, r, 1)
		var body struct {
			Error struct{ Code, Message, Position string }
		}
		if err := json.Unmarshal([]byte(r.Stdout), &body); err != nil || body.Error.Code != "bad_script" ||
			!strings.Contains(body.Error.Message, c.says) || !strings.Contains(body.Error.Message+body.Error.Position, c.at) {
			t.Errorf("%s: want bad_script at %s saying %q:\n%s", c.file, c.at, c.says, r)
		}
	}
	if ids := e.JournalIDs(); len(ids) != 0 {
		t.Errorf("no run should have started, so no agent been paid for; journals: %v", e2etest.SortedKeys(ids))
	}
}

// TestSmallOutcomes checks the smaller outcomes a new user met: a missing
// script is not_found under --json; show counts every execution's time;
// a resume keeps the simulated latency it was started with; delete asks
// before deleting "last"; one pause for unavailable isolation says it
// once, without a raw log line; list cuts a long pause reason.
func TestSmallOutcomes(t *testing.T) {
	t.Parallel()

	t.Run("missing script is not_found", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		for _, ref := range []string{"nope.workflow.js", "no-such-saved-workflow"} {
			r := e.DW("run", ref, "--json")
			e2etest.ExpectCode(t, r, 1)
			var body struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal([]byte(r.Stdout), &body); err != nil || body.Error.Code != "not_found" {
				t.Errorf("run %s --json: want error code not_found:\n%s", ref, r)
			}
		}
	})

	t.Run("resume keeps the simulated latency and show counts every execution", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("two.workflow.js", `export const meta = { name: 'two', description: 'd' }
const first = await agent('first')
await checkpoint('go on?', { kind: 'confirm' })
return [first, await agent('second')]
`)
		fixed := e.Write("fixed.workflow.js", `export const meta = { name: 'two', description: 'd' }
const first = await agent('first')
return [first, await agent('second')]
`)
		r := e.DW("run", "two.workflow.js", "--simulate-latency", "400ms", "--json")
		e2etest.ExpectCode(t, r, 1)
		id := e2etest.ParseOutcome(t, r).RunID
		r = e.DW("resume", id, "--script", fixed, "--json")
		e2etest.ExpectCode(t, r, 0)
		var o struct {
			DurationMs int64         `json:"durationMs"`
			Stats      e2etest.Stats `json:"stats"`
		}
		_ = json.Unmarshal([]byte(r.Stdout), &o)
		// The live second call sleeps the latency the run was started
		// with; a resume that forgot it answers at once.
		if o.Stats.Live != 1 || o.Stats.Replayed != 1 || o.DurationMs < 400 {
			t.Errorf("the resume should replay the first call and run the second with the run's 400ms latency (took %dms):\n%s", o.DurationMs, r)
		}
		var d struct {
			Executors []struct {
				Name     string            `json:"name"`
				Settings map[string]string `json:"settings"`
			} `json:"executors"`
		}
		_ = json.Unmarshal([]byte(e.DWOK("show", id, "--json").Stdout), &d)
		kept := false
		for _, x := range d.Executors {
			kept = kept || (x.Name == "simulate" && x.Settings["latency"] == "400ms")
		}
		if !kept {
			t.Errorf("show --json should record the simulated executor's latency: %+v", d.Executors)
		}
		show := e.DWOK("show", id).Stdout
		took := regexp.MustCompile(`took (\S+) in 2 executions \(the last (\S+)\)`).FindStringSubmatch(show)
		if took == nil || took[1] == took[2] {
			t.Errorf("show should count both executions' time, and say the last apart:\n%s", show)
		}
	})

	t.Run("delete asks before deleting last", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		e.Write("one.workflow.js", `export const meta = { name: 'one', description: 'd' }
return await agent('x')
`)
		id := e2etest.ParseOutcome(t, e.DWOK("run", "one.workflow.js", "--json")).RunID
		r := e.DW("delete", "last")
		e2etest.ExpectCode(t, r, 64)
		if !strings.Contains(r.Stderr, "--yes") || !strings.Contains(r.Stderr, id) {
			t.Errorf("without a terminal, delete last should name the run and --yes:\n%s", r)
		}
		if _, err := os.Stat(e.JournalPath(id)); err != nil {
			t.Fatalf("delete last without --yes deleted the run: %v", err)
		}

		p := startPTY(e, 100, 20, true, "delete", "last")
		p.waitOutput(t, regexp.MustCompile(`delete `+regexp.QuoteMeta(id)+`[^\n]*\n.*\[y/N\]`))
		p.typeLine(t, "n")
		<-p.Exited
		if _, err := os.Stat(e.JournalPath(id)); err != nil {
			t.Fatalf("answering n deleted the run: %v", err)
		}
		p = startPTY(e, 100, 20, true, "delete", "last")
		p.waitOutput(t, regexp.MustCompile(`\[y/N\]`))
		p.typeLine(t, "y")
		<-p.Exited
		if _, err := os.Stat(e.JournalPath(id)); err == nil {
			t.Fatalf("answering y kept the run:\n%s", p.out.String())
		}

		id = e2etest.ParseOutcome(t, e.DWOK("run", "one.workflow.js", "--json")).RunID
		e.DWOK("delete", "last", "--yes")
		if _, err := os.Stat(e.JournalPath(id)); err == nil {
			t.Errorf("delete last --yes kept the run")
		}
		id = e2etest.ParseOutcome(t, e.DWOK("run", "one.workflow.js", "--json")).RunID
		e.DWOK("delete", id) // a full id needs no confirmation
	})

	t.Run("unavailable isolation is said once and list cuts it", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t) // not a git project
		e.Write("iso.workflow.js", `export const meta = { name: 'iso', description: 'd' }
return await parallel([1, 2, 3, 4].map(i => () => agent('x' + i, { isolation: 'worktree' })))
`)
		r := e.DW("run", "iso.workflow.js")
		e2etest.ExpectCode(t, r, 2)
		if strings.Contains(r.Stderr, "level=") || strings.Count(r.Stderr, "needs a git project") != 1 {
			t.Errorf("the pause should be said once, with no raw log line:\n%s", r)
		}
		for _, width := range []int{80, 120} {
			p := startPTY(e, width, 20, true, "list")
			<-p.Exited
			out := strings.TrimSpace(sgrCode.ReplaceAllString(p.out.String(), ""))
			for _, l := range strings.Split(out, "\n") {
				if w := len([]rune(strings.TrimRight(l, "\r"))); w >= width {
					t.Errorf("a list line is %d columns wide on a %d-column terminal:\n%s", w, width, out)
				}
			}
			if !strings.Contains(out, "agent(): isolation") || !strings.Contains(out, "…") {
				t.Errorf("list should show the start of the pause reason, cut to %d columns:\n%s", width, out)
			}
		}
		if show := e.DWOK("show", "last").Stdout; !strings.Contains(show, "run git init and commit") {
			t.Errorf("show should print the pause reason whole:\n%s", show)
		}
	})
}

// typeLine types line and Enter on the run's terminal.
func (p *ptyRun) typeLine(t *testing.T, line string) {
	t.Helper()
	if _, err := p.terminal.Write([]byte(line + "\r")); err != nil {
		t.Fatal(err)
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
