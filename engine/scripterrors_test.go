package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

func bothLanguages(c *engine.Config) { c.Hosts = lang.NewRegistry(jsvm.New(), star.New()) }

// A branch the script's own error made null is a script error: counted,
// grouped by message and position, journaled, on the bus, and in the
// run's outcome, detail and listing, in both languages. A failed agent
// that gives null is a failed call, not a script error.
func TestScriptErrorsAreCountedEverywhere(t *testing.T) {
	cases := []struct {
		name, file, text string
		// want is each expected group: a regexp of its position, a part of
		// its message, and its count.
		want []wantGroup
	}{
		{"a ReferenceError in a pipeline stage", "ref.workflow.js", `export const meta = { name: 'ref', description: 'd' }
const out = await pipeline(['a', 'b', 'c'],
  x => agent('review ' + x, { schema: FINDINGS }))
return out`, []wantGroup{{`ref\.workflow\.js:3:39$`, "ReferenceError: FINDINGS is not defined", 3}}},
		{"thrown errors in parallel branches", "throw.workflow.js", `export const meta = { name: 'throw', description: 'd' }
return await parallel([
  () => agent('fine'),
  async () => { throw new Error('bad ' + 'one') },
  async () => { const a = await agent('[simulate:fail] gone'); return a.length },
])`, []wantGroup{{`throw\.workflow\.js:4:`, "Error: bad one", 1}, {`throw\.workflow\.js:5:`, "TypeError", 1}}},
		{"fail() and a frozen list in Starlark branches", "star.workflow.star", `meta = {"name": "star", "description": "d"}

seen = []

def main(args):
    def branch(x):
        if x == "f":
            fail("no " + x)
        seen.append(x)
        return agent("check " + x)
    return parallel(["f", "a", "b"], branch)
`, []wantGroup{{`star\.workflow\.star:8:`, "no f", 1}, {`star\.workflow\.star:9:`, "cannot append to frozen list", 2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessWith(t, simulate.Config{}, bothLanguages)
			sub := h.rt.Events().Subscribe(1024, nil)
			defer sub.Close()
			o := h.run(h.write(tc.file, tc.text), "", testOptions())
			mustStatus(t, o, engine.StatusCompleted)
			total := 0
			for _, w := range tc.want {
				total += w.count
			}
			if o.Stats.ScriptErrors != total {
				t.Errorf("outcome counts %d script errors, want %d: %+v", o.Stats.ScriptErrors, total, o.ScriptErrors)
			}
			checkGroups(t, "outcome", o.ScriptErrors, tc.want)

			// The bus: one branch.failed per error, and the end's status.
			var events, inEnd int
			for len(sub.C) > 0 {
				ev := <-sub.C
				switch p := ev.Payload.(type) {
				case engine.ScriptError:
					if ev.Type != engine.EventBranchFailed || p.Position == "" || p.Path == "" {
						t.Errorf("event %s %+v", ev.Type, p)
					}
					events++
				case engine.StatusPayload:
					if p.Status == engine.StatusCompleted {
						inEnd = engine.CountScriptErrors(p.ScriptErrors)
					}
				}
			}
			if events != total || inEnd != total {
				t.Errorf("%d branch.failed events and %d in the end's status, want %d", events, inEnd, total)
			}

			// The journal, read again by a runtime of another process.
			other := reopen(t, h)
			d, err := other.Inspect(o.RunID)
			if err != nil {
				t.Fatal(err)
			}
			checkGroups(t, "detail", d.ScriptErrors, tc.want)
			if d.Summary.Stats.ScriptErrors != total || d.Executions[0].End.ScriptErrors != total {
				t.Errorf("detail counts %d, its execution %d, want %d", d.Summary.Stats.ScriptErrors, d.Executions[0].End.ScriptErrors, total)
			}
			sums, err := other.List()
			if err != nil || len(sums) != 1 || sums[0].Stats.ScriptErrors != total {
				t.Errorf("list %+v (%v), want %d script errors", sums, err, total)
			}
			warnings := 0
			for _, l := range d.Logs {
				if l.Level == "warn" && strings.Contains(l.Message, "became null") {
					warnings++
				}
			}
			if warnings != total {
				t.Errorf("%d warnings in the log, want one per script error (%d)", warnings, total)
			}

			// A crash resume runs the script again: the same errors, counted
			// once, for the latest execution.
			o = h.resume(o.RunID, engine.ResumeRequest{})
			mustStatus(t, o, engine.StatusCompleted)
			if o.Stats.ScriptErrors != total {
				t.Errorf("after a resume the outcome counts %d, want %d", o.Stats.ScriptErrors, total)
			}
			if d, _ := h.rt.Inspect(o.RunID); d == nil || engine.CountScriptErrors(d.ScriptErrors) != total || d.Summary.Stats.ScriptErrors != total {
				t.Errorf("after a resume the detail has %+v", d)
			}
		})
	}
}

type wantGroup struct {
	position string
	message  string
	count    int
}

func checkGroups(t *testing.T, where string, got []engine.ScriptErrorGroup, want []wantGroup) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d groups %+v, want %d", where, len(got), got, len(want))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			if regexp.MustCompile(w.position).MatchString(g.Position) && strings.Contains(g.Message, w.message) && g.Count == w.count {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no group at %s saying %q %d times in %+v", where, w.position, w.message, w.count, got)
		}
	}
}

// reopen is a runtime over h's state, as another process opens it.
func reopen(t *testing.T, h *harness) *engine.Runtime {
	t.Helper()
	st, err := store.Open(h.rt.Store().Root(), h.dir)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{Store: st, Hosts: lang.NewRegistry(jsvm.New()), Executors: executors.NewSet(simulate.New(simulate.Config{})), Cwd: h.dir})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// A script error after an edit that fixed it is gone: the outcome is the
// latest execution's.
func TestAFixedScriptHasNoScriptErrors(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	bad := `export const meta = { name: 'fix', description: 'd' }
return await parallel([() => agent('a'), () => agent('b', { schema: FINDINGS })])`
	o := h.run(h.write("fix.workflow.js", bad), "", testOptions())
	if o.Stats.ScriptErrors != 1 {
		t.Fatalf("stats %+v, want one script error", o.Stats)
	}
	fixed := h.write("fix2.workflow.js", strings.Replace(bad, "{ schema: FINDINGS }", "{ label: 'b' }", 1))
	o = h.resume(o.RunID, engine.ResumeRequest{Script: fixed})
	mustStatus(t, o, engine.StatusCompleted)
	if o.Stats.ScriptErrors != 0 || o.ScriptErrors != nil {
		t.Errorf("after the fix: %+v %+v", o.Stats, o.ScriptErrors)
	}
	d, err := h.rt.Inspect(o.RunID)
	if err != nil || d.Summary.Stats.ScriptErrors != 0 || d.ScriptErrors != nil || d.Executions[0].End.ScriptErrors != 1 {
		t.Errorf("detail after the fix: %+v (%v)", d, err)
	}
}

// Strict mode, by option or by meta, fails the run at the first script
// error: no call after it runs, and the run's error has its code and
// position.
func TestStrictFailsAtTheFirstScriptError(t *testing.T) {
	cases := []struct {
		name, file, text string
		option           bool
	}{
		{"--strict, JavaScript", "s.workflow.js", `export const meta = { name: 's', description: 'd' }
await parallel([async () => { throw new Error('boom') }])
return await agent('after the fan-out')`, true},
		{"meta.strict, JavaScript", "m.workflow.js", `export const meta = { name: 'm', description: 'd', strict: true }
await parallel([async () => { throw new Error('boom') }])
return await agent('after the fan-out')`, false},
		{"meta.strict, Starlark", "m.workflow.star", `meta = {"name": "m", "description": "d", "strict": True}

def main(args):
    parallel([lambda: fail("boom")])
    return agent("after the fan-out")
`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessWith(t, simulate.Config{}, bothLanguages)
			opts := testOptions()
			opts.Strict = tc.option
			o := h.run(h.write(tc.file, tc.text), "", opts)
			mustStatus(t, o, engine.StatusFailed)
			if o.ErrorCode != engine.CodeScriptError || !strings.Contains(o.Error, "boom") || !strings.Contains(o.Error, tc.file+":") {
				t.Errorf("error %q (%s), want the script error with its position and code %s", o.Error, o.ErrorCode, engine.CodeScriptError)
			}
			if o.Stats.Agents != 0 || len(h.liveCalls(o.RunID, 0)) != 0 {
				t.Errorf("calls ran after the script error: %+v", o.Stats)
			}
			d, err := h.rt.Inspect(o.RunID)
			if err != nil || d.Summary.ErrorCode != engine.CodeScriptError {
				t.Errorf("detail %+v (%v)", d, err)
			}
		})
	}
	// Without it, the same script completes, the branch null.
	h := newHarness(t, simulate.Config{})
	o := h.run(h.write("s.workflow.js", cases[0].text), "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	if o.Stats.ScriptErrors != 1 {
		t.Errorf("stats %+v", o.Stats)
	}
}

// What a script writes out in its agent() options is checked when it
// loads, with the position of the mistake; what only running it can tell
// is left to the call.
func TestLiteralOptionsAreCheckedAtLoad(t *testing.T) {
	h := newHarnessWith(t, simulate.Config{}, bothLanguages)
	js := func(body string) string {
		return "export const meta = { name: 'x', description: 'd' }\n" + body
	}
	starlark := func(body string) string {
		return "meta = {\"name\": \"x\", \"description\": \"d\"}\n" + body
	}
	bad := []struct {
		name, file, text, at, says string
	}{
		{"a misspelt option", "a.workflow.js", js(`return await parallel([() => agent('p', { shema: { type: 'object' } })])`),
			":2:43", `unknown option "shema"; did you mean "schema"?`},
		{"a bad literal schema", "b.workflow.js", js(`return await agent('p', { schema: { type: 'object', properties: { n: { type: 'integer', maximum: 'ten' } } } })`),
			":2:35", "not a valid JSON Schema: at /properties/n/maximum"},
		{"a bad schema in a const", "c.workflow.js", js(`const S = { type: 'objct' }
return await pipeline([1], x => agent('p' + x, { schema: S }))`), ":2:11", "not a valid JSON Schema"},
		{"an option of the wrong type", "d.workflow.js", js(`return await agent('p', { label: 7 })`), ":2:34", "option label must be a string"},
		{"an effort out of range", "e.workflow.js", js(`return await agent('p', { effort: 'huge' })`), ":2:35", "option effort must be one of"},
		{"a misspelt keyword in Starlark", "f.workflow.star", starlark(`def main(args):
    return parallel([1], lambda x: agent("p", Schema = {"type": "object"}))
`), ":3:47", `did you mean "schema"?`},
		{"a bad schema in a Starlark global", "g.workflow.star", starlark(`S = {"type": "object", "properties": {"n": {"type": "integer", "maximum": "ten"}}}
def main(args):
    return agent("p", schema = S)
`), ":2:5", "not a valid JSON Schema"},
		{"a bad schema in a loaded Starlark file", "h.workflow.star", starlark(`load("lib.star", "ask")
def main(args):
    return ask()
`), "lib.star:2:", "not a valid JSON Schema"},
	}
	must(t, writeFile(filepath.Join(h.dir, "lib.star"), `def ask():
    return agent("p", schema = {"type": "strin"})
`))
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(h.dir, tc.file)
			must(t, writeFile(path, tc.text))
			_, err := h.rt.Hosts().LoadFile(path)
			var le *lang.Error
			if !errors.As(err, &le) || !errors.Is(err, lang.ErrBadScript) {
				t.Fatalf("load gave %v, want a load error", err)
			}
			if !strings.Contains(le.Position(), tc.at) || !strings.Contains(le.Message, tc.says) || !strings.Contains(le.Hint, "when it loads") {
				t.Errorf("error %q at %s, want %q at …%s", le.Message, le.Position(), tc.says, tc.at)
			}
		})
	}

	// These load: the values are not written out, or not ours to judge.
	good := []struct{ name, file, text string }{
		{"a schema the script builds", "g1.workflow.js", js(`const s = JSON.parse('{"type":"objct"}')
return await agent('p', { schema: s })`)},
		{"a const the script changes", "g2.workflow.js", js(`const S = { type: 'objct' }
S.type = 'object'
return await agent('p', { schema: S })`)},
		{"a name declared twice", "g3.workflow.js", js(`const S = { type: 'objct' }
const f = (S) => agent('p', { schema: S })
return await f({ type: 'object' })`)},
		{"an agent of the script's own", "g4.workflow.js", js(`const agent = async (p, o) => p
return await agent('p', { shema: 1 })`)},
		{"keys that are not options", "g5.workflow.js", js(`return await agent('p', { _tag: 'x', tier: 'fast' })`)},
		{"a Starlark global changed before it is frozen", "g6.workflow.star", starlark(`S = {"type": "objct"}
S["type"] = "object"
def main(args):
    return agent("p", schema = S)
`)},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(h.dir, tc.file)
			must(t, writeFile(path, tc.text))
			if _, err := h.rt.Hosts().LoadFile(path); err != nil {
				t.Errorf("load: %v", err)
			}
		})
	}
}

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
