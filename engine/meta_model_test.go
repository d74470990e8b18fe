package engine_test

import (
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// meta.model and meta.phases[].model route a script's agent calls as the
// Node runtime routes them: the call's model option, else its phase's
// model, else meta.model, else the run's --model; a call before any
// phase() is in the first declared phase. In both languages.
func TestMetaModelsRouteCalls(t *testing.T) {
	js := `export const meta = { name: 'routed', description: 'models by phase', model: 'sonnet',
  phases: [{ title: 'Design', model: 'opus' }, { title: 'Build' }, { title: 'Check', model: 'haiku' }] }
await agent('before any phase', { label: 'first' })
phase('Build')
await agent('build it', { label: 'build' })
await agent('build it small', { label: 'own', model: 'gpt-5' })
phase('Check')
await agent('check it', { label: 'check' })
await agent('design again', { label: 'design', phase: 'Design' })
await agent('elsewhere', { label: 'other', phase: 'Undeclared' })
return 'ok'
`
	starScript := `meta = {"name": "routed", "description": "models by phase", "model": "sonnet",
    "phases": [{"title": "Design", "model": "opus"}, {"title": "Build"}, {"title": "Check", "model": "haiku"}]}

def main(args):
    agent("before any phase", label = "first")
    phase("Build")
    agent("build it", label = "build")
    agent("build it small", label = "own", model = "gpt-5")
    phase("Check")
    agent("check it", label = "check")
    agent("design again", label = "design", phase = "Design")
    agent("elsewhere", label = "other", phase = "Undeclared")
    return "ok"
`
	want := map[string]string{
		"first": "opus", "build": "sonnet", "own": "gpt-5", "check": "haiku", "design": "opus", "other": "sonnet",
	}
	for _, tc := range []struct{ file, text string }{{"routed.workflow.js", js}, {"routed.workflow.star", starScript}} {
		t.Run(tc.file, func(t *testing.T) {
			h := newHarnessWith(t, simulate.Config{}, func(c *engine.Config) { c.Hosts = lang.NewRegistry(jsvm.New(), star.New()) })
			opts := testOptions()
			opts.Model = "run-default" // the run's --model loses to meta
			o := h.run(h.write(tc.file, tc.text), "", opts)
			mustStatus(t, o, engine.StatusCompleted)
			d, err := h.rt.Inspect(o.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Calls) != len(want) {
				t.Fatalf("%d calls, want %d", len(d.Calls), len(want))
			}
			for _, c := range d.Calls {
				if c.Model != want[c.Label] {
					t.Errorf("call %s ran on model %q, want %q", c.Label, c.Model, want[c.Label])
				}
			}
		})
	}
}

// Without meta models the run's --model applies, and changing meta.model
// changes the calls it routes: a resume after the edit runs them again.
func TestMetaModelIsInTheFingerprint(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	script := func(model string) lang.Script {
		return h.write("fp.workflow.js", `export const meta = { name: 'fp', description: 'd'`+model+` }
await agent('one', { label: 'one', model: 'fixed' })
await agent('two', { label: 'two' })
return 'ok'`)
	}
	opts := testOptions()
	opts.Model = "run-default"
	o := h.run(script(""), "", opts)
	mustStatus(t, o, engine.StatusCompleted)
	d, _ := h.rt.Inspect(o.RunID)
	if d.Calls[0].Model != "fixed" || d.Calls[1].Model != "run-default" {
		t.Fatalf("models %q %q, want fixed and run-default", d.Calls[0].Model, d.Calls[1].Model)
	}
	r := h.resume(o.RunID, engine.ResumeRequest{Script: script(", model: 'opus'")})
	mustStatus(t, r, engine.StatusCompleted)
	live := h.liveCalls(o.RunID, 1)
	if len(live) != 1 || live[0] != "/agent.1" {
		t.Fatalf("after meta.model changed, live calls %v; want only /agent.1 (its model changed)", live)
	}
	d, _ = h.rt.Inspect(o.RunID)
	if d.Calls[1].Model != "opus" {
		t.Fatalf("model after the edit %q, want opus", d.Calls[1].Model)
	}
}
