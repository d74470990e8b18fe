package engine_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

const pipelineScript = `export const meta = { name: 'p', description: 'pipeline' }
const items = Array.from({ length: 20 }, (_, i) => 'item-' + i)
return await pipeline(items,
  item => agent('plan ' + item),
  (plan, item) => agent('build ' + item + ' from ' + plan),
  (built, item) => agent('STAGE3 test ' + item + ' after ' + built))
`

func TestEditAndResume(t *testing.T) {
	parallelScript := func(changed string) string {
		return `export const meta = { name: 'fan', description: 'five branches' }
const out = await parallel([0, 1, 2, 3, 4].map(i => async () => {
  const a = await agent((i === 2 ? '` + changed + `' : 'first') + ' ' + i)
  return agent('second ' + i + ' ' + a)
}))
const summary = await agent('summarize the branches')
return { out, summary }
`
	}
	tests := []struct {
		name           string
		before, after  string
		argsBefore     string
		argsAfter      string
		replayed, live int
		liveUnder      string // every live call's path starts with this
	}{
		{
			name:   "only the stage-3 prompt changed",
			before: pipelineScript, after: strings.Replace(pipelineScript, "STAGE3 test", "STAGE3 verify", 1),
			replayed: 40, live: 20,
		},
		{
			name:   "one parallel branch changed",
			before: parallelScript("first"), after: parallelScript("FIRST"),
			replayed: 9, live: 2, liveUnder: "/par.0/2/",
		},
		{
			name:   "a label changed",
			before: pipelineScript, after: strings.Replace(pipelineScript, "agent('plan ' + item)", "agent('plan ' + item, { label: 'p:' + item })", 1),
			replayed: 60, live: 0,
		},
		{
			name: "a call inserted first runs everything after it in that scope",
			before: `export const meta = { name: 's', description: 'sequential' }
for (let i = 0; i < 4; i++) await agent('step ' + i)
return 'ok'`,
			after: `export const meta = { name: 's', description: 'sequential' }
await agent('new first step')
for (let i = 0; i < 4; i++) await agent('step ' + i)
return 'ok'`,
			replayed: 0, live: 5,
		},
		{
			name: "changed args re-run only the calls that use them",
			before: `export const meta = { name: 'a', description: 'args' }
const x = await parallel([() => agent('fixed'), () => agent('uses ' + args.topic)])
return x`,
			argsBefore: `{"topic":"cats"}`, argsAfter: `{"topic":"dogs"}`,
			replayed: 1, live: 1, liveUnder: "/par.0/1/",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, simulate.Config{Seed: 1})
			first := h.run(h.write("before.workflow.js", tc.before), tc.argsBefore, testOptions())
			mustStatus(t, first, engine.StatusCompleted)
			req := engine.ResumeRequest{}
			if tc.after != "" {
				req.Script = h.write("after.workflow.js", tc.after)
			}
			if tc.argsAfter != "" {
				req.Args = json.RawMessage(tc.argsAfter)
			}
			second := h.resume(first.RunID, req)
			mustStatus(t, second, engine.StatusCompleted)
			if second.Stats.Replayed != tc.replayed || second.Stats.Live != tc.live {
				t.Fatalf("replayed %d, live %d; want %d, %d", second.Stats.Replayed, second.Stats.Live, tc.replayed, tc.live)
			}
			for _, p := range h.liveCalls(first.RunID, 1) {
				if !strings.HasPrefix(p, tc.liveUnder) {
					t.Errorf("call %s ran live, want only calls under %q", p, tc.liveUnder)
				}
			}
			rule := "crash"
			if tc.after != "" && tc.after != tc.before || tc.argsAfter != "" {
				rule = "edit"
			}
			if got := resumeRule(h, first.RunID); got != rule {
				t.Errorf("journaled rule %q, want %q", got, rule)
			}
		})
	}
}

func resumeRule(h *harness, id string) string {
	for _, rec := range h.journal(id) {
		if rec["type"] == "resume" {
			return rec["resume"].(map[string]any)["rule"].(string)
		}
	}
	return ""
}

// A resume of an unchanged script replays everything and returns the same
// result as the first execution.
func TestResumeUnchangedReplaysAll(t *testing.T) {
	h := newHarness(t, simulate.Config{Seed: 2})
	first := h.run(h.write("p.workflow.js", pipelineScript), "", testOptions())
	mustStatus(t, first, engine.StatusCompleted)
	second := h.resume(first.RunID, engine.ResumeRequest{})
	mustStatus(t, second, engine.StatusCompleted)
	if second.Stats.Replayed != 60 || second.Stats.Live != 0 {
		t.Fatalf("replayed %d live %d, want 60 and 0", second.Stats.Replayed, second.Stats.Live)
	}
	if string(first.Result) != string(second.Result) {
		t.Fatalf("results differ:\n%s\n%s", first.Result, second.Result)
	}
	if second.Stats.InputTokens != first.Stats.InputTokens {
		t.Errorf("a replay cost tokens: %d then %d", first.Stats.InputTokens, second.Stats.InputTokens)
	}
}

// Pausing mid-run leaves exactly the finished calls to replay, wherever they
// are in the tree, however the latencies fell.
func TestPauseThenResumeReplaysEveryFinishedCall(t *testing.T) {
	const script = `export const meta = { name: 'nested', description: 'parallel inside pipeline stages' }
return await pipeline(Array.from({ length: 10 }, (_, i) => i),
  i => agent('a ' + i),
  (a, i) => parallel([0, 1, 2].map(k => () => agent('b ' + i + ' ' + k + ' ' + a))),
  (bs, i) => agent('c ' + i + ' ' + bs.join(',')))
`
	h := newHarness(t, simulate.Config{MinLatency: 1e6, MaxLatency: 8e6, Seed: 3})
	r := h.start(h.write("n.workflow.js", script), "", testOptions())
	sub := h.rt.Events().Subscribe(1024, func(e engine.Event) bool { return e.Type == engine.EventCallFinished })
	for n := 0; n < 20; n++ {
		<-sub.C
	}
	sub.Close()
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	paused := h.wait(r)
	mustStatus(t, paused, engine.StatusPaused)
	finished := 0
	for _, rec := range h.journal(r.ID()) {
		if rec["type"] == "call.finished" {
			finished++
		}
	}
	resumed := h.resume(r.ID(), engine.ResumeRequest{})
	mustStatus(t, resumed, engine.StatusCompleted)
	if resumed.Stats.Replayed != finished || resumed.Stats.Replayed+resumed.Stats.Live != 50 {
		t.Fatalf("replayed %d live %d; want replayed = %d finished and 50 in all", resumed.Stats.Replayed, resumed.Stats.Live, finished)
	}
	clean := h.run(h.write("n2.workflow.js", script), "", testOptions())
	if string(clean.Result) != string(resumed.Result) {
		t.Fatalf("resumed result differs from an uninterrupted run")
	}
}

// Calls issued from a Promise.all (which the runtime cannot scope) come
// back in a different order on replay; they are matched by fingerprint
// within their scope, so none runs again.
func TestUnscopedPromiseAllReplays(t *testing.T) {
	const script = `export const meta = { name: 'pa', description: 'Promise.all fan-out' }
const out = await Promise.all([0, 1, 2, 3, 4, 5].map(async i => {
  const a = await agent('[simulate:sleep=' + ((6 - i) * 3) + 'ms] first ' + i)
  return agent('second ' + i + ' ' + a)
}))
return out`
	h := newHarness(t, simulate.Config{Seed: 4})
	first := h.run(h.write("pa.workflow.js", script), "", testOptions())
	mustStatus(t, first, engine.StatusCompleted)
	second := h.resume(first.RunID, engine.ResumeRequest{})
	if second.Stats.Live != 0 || second.Stats.Replayed != 12 {
		t.Fatalf("replayed %d live %d, want 12 and 0", second.Stats.Replayed, second.Stats.Live)
	}
	if string(first.Result) != string(second.Result) {
		t.Fatalf("results differ")
	}
}

// Failed calls are journaled as failed and run again on resume.
func TestFailedCallsRunAgain(t *testing.T) {
	h := newHarness(t, simulate.Config{Seed: 5})
	s := h.write("f.workflow.js", `export const meta = { name: 'f', description: 'one fails' }
const out = await parallel([() => agent('fine'), () => agent('[simulate:fail] broken')])
return out`)
	first := h.run(s, "", testOptions())
	mustStatus(t, first, engine.StatusCompleted)
	var out []*string
	if err := json.Unmarshal(first.Result, &out); err != nil || len(out) != 2 || out[0] == nil || out[1] != nil || first.Stats.Failed != 1 {
		t.Fatalf("stats %+v result %s: want the failed call as null", first.Stats, first.Result)
	}
	second := h.resume(first.RunID, engine.ResumeRequest{})
	if second.Stats.Replayed != 1 || second.Stats.Failed != 1 || second.Stats.Live != 0 {
		t.Fatalf("stats %+v, want 1 replayed and the failed call attempted again", second.Stats)
	}
	if got := h.liveCalls(first.RunID, 1); !slices.Equal(got, []string{"/par.0/1/agent.0"}) {
		t.Fatalf("live calls on resume %v", got)
	}
}

func TestStoppedRunIsNotResumable(t *testing.T) {
	h := newHarness(t, simulate.Config{MinLatency: 50e6, MaxLatency: 50e6})
	r := h.start(h.write("s.workflow.js", pipelineScript), "", testOptions())
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, h.wait(r), engine.StatusStopped)
	_, err := h.rt.Resume(context.Background(), r.ID(), engine.ResumeRequest{})
	if err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("resume of a stopped run: %v", err)
	}
}

// Edit-and-resume under the prefix rule, for calls removed, inserted,
// reordered and changed in one scope: every call from the first change on
// runs live, even one whose prompt matches a call further down the old
// script, and calls of other scopes keep their answers.
func TestEditRemoveInsertReorder(t *testing.T) {
	script := func(steps ...string) string {
		var b strings.Builder
		b.WriteString("export const meta = { name: 'steps', description: 'calls in one scope' }\n")
		b.WriteString("const side = await parallel([() => agent('side one'), () => agent('side two')])\n")
		for _, s := range steps {
			b.WriteString("await agent('" + s + "')\n")
		}
		b.WriteString("return side\n")
		return b.String()
	}
	before := script("A", "B", "C", "D")
	tests := []struct {
		name     string
		after    string
		replayed int      // the two side calls included
		live     []string // paths that run live, in order
	}{
		{"remove one", script("A", "C", "D"), 3, []string{"/agent.1", "/agent.2"}},
		{"insert one", script("A", "X", "B", "C", "D"), 3, []string{"/agent.1", "/agent.2", "/agent.3", "/agent.4"}},
		{"swap two", script("A", "C", "B", "D"), 3, []string{"/agent.1", "/agent.2", "/agent.3"}},
		{"change one", script("A", "B2", "C", "D"), 3, []string{"/agent.1", "/agent.2", "/agent.3"}},
		{"remove the first", script("B", "C", "D"), 2, []string{"/agent.0", "/agent.1", "/agent.2"}},
		{"remove the last", script("A", "B", "C"), 5, nil},
		{"append one", script("A", "B", "C", "D", "E"), 6, []string{"/agent.4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, simulate.Config{Seed: 1})
			first := h.run(h.write("before.workflow.js", before), "", testOptions())
			mustStatus(t, first, engine.StatusCompleted)
			second := h.resume(first.RunID, engine.ResumeRequest{Script: h.write("after.workflow.js", tc.after)})
			mustStatus(t, second, engine.StatusCompleted)
			live := h.liveCalls(first.RunID, 1)
			if second.Stats.Replayed != tc.replayed || !slices.Equal(live, tc.live) {
				t.Fatalf("replayed %d, live %v; want %d replayed, live %v", second.Stats.Replayed, live, tc.replayed, tc.live)
			}
			if got := resumeRule(h, first.RunID); got != "edit" {
				t.Errorf("journaled rule %q, want edit", got)
			}
		})
	}
}
