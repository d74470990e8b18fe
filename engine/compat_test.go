package engine_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// Scripts written for the Node runtime branch on error.code: each engine
// error a script can catch carries the Node runtime's code for it.
func TestScriptsCatchTheNodeRuntimesErrorCodes(t *testing.T) {
	cases := []struct {
		name string
		body string
		opts func(*engine.Options)
		want string
	}{
		{"agent cap", `await agent('one'); await agent('two')`, func(o *engine.Options) { o.MaxAgents = 1 }, "AGENT_LIMIT_EXCEEDED"},
		{"token budget", `await agent('one'); await agent('two')`, func(o *engine.Options) { o.TokenBudget = 1 }, "TOKEN_BUDGET_EXHAUSTED"},
		{"schema never satisfied", `await agent('[simulate:invalid] rate', { schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } })`,
			nil, "SCHEMA_NONCOMPLIANCE"},
		// Made at run time: a literal one fails when the script loads.
		{"a bad schema", `await agent('x', { schema: JSON.parse('{"type": "objct"}') })`, nil, "SCRIPT_VALIDATION_ERROR"},
		{"a required call that fails", `await agent('[simulate:fail] must answer', { required: true })`, nil, "AGENT_EXECUTION_ERROR"},
		{"a headless checkpoint that aborts", `await checkpoint('Ship?', { default: true, headless: 'abort' })`, nil, "WORKFLOW_ABORTED"},
		{"workflow() nested twice", `await workflow('inner.workflow.js')`, nil, "SCRIPT_VALIDATION_ERROR"},
		{"too many items", `await parallel([1, 2, 3].map(i => () => i))`, func(o *engine.Options) { o.MaxItems = 2 }, "ITEM_LIMIT_EXCEEDED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, simulate.Config{})
			h.write("inner.workflow.js", `export const meta = { name: 'inner', description: 'nests again' }
return await workflow('inner.workflow.js')`)
			opts := testOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			o := h.run(h.write("codes.workflow.js", `export const meta = { name: 'codes', description: 'catches' }
try { `+tc.body+` } catch (e) { return { code: e.code ?? null, message: e.message } }
return 'no throw'`), "", opts)
			mustStatus(t, o, engine.StatusCompleted)
			var got struct{ Code, Message string }
			if err := json.Unmarshal(o.Result, &got); err != nil || got.Code != tc.want {
				t.Fatalf("caught %s, want code %s", o.Result, tc.want)
			}
		})
	}
}

// An uncaught engine error ends the run with its code recorded, in either
// language: Starlark has no try, but the run's error says which limit hit.
func TestFailedRunsRecordTheErrorCode(t *testing.T) {
	h := newHarnessWith(t, simulate.Config{}, func(c *engine.Config) { c.Hosts = lang.NewRegistry(jsvm.New(), star.New()) })
	opts := testOptions()
	opts.TokenBudget = 1
	for name, text := range map[string]string{
		"b.workflow.js": `export const meta = { name: 'b', description: 'spends' }
await agent('one'); await agent('two')`,
		"b.workflow.star": `meta = {"name": "b", "description": "spends"}
def main(args):
    agent("one")
    agent("two")
`,
	} {
		o := h.run(h.write(name, text), "", opts)
		mustStatus(t, o, engine.StatusFailed)
		d, err := h.rt.Inspect(o.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Summary.ErrorCode != "TOKEN_BUDGET_EXHAUSTED" {
			t.Errorf("%s: summary %+v, want error code TOKEN_BUDGET_EXHAUSTED", name, d.Summary)
		}
	}
}

// Keys that are not agent() options are ignored with one warning per key
// per run, in the run's log; near misses and wrong types still throw (in
// options made at run time: written out, they fail at load).
func TestUnknownAgentOptionsWarnOncePerRun(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	o := h.run(h.write("opts.workflow.js", `export const meta = { name: 'opts', description: 'passes keys through' }
const xs = await parallel([1, 2, 3].map(i => () => agent('item ' + i, { label: 'i' + i, _tag: 'batch', _predispatch: { at: i }, tier: 'fast' })))
let typo = 'no throw', wrong = 'no throw'
const made = (k, v) => ({ [k]: v, _tag: 'y' })
try { await agent('x', made('shema', { type: 'object' })) } catch (e) { typo = e.message }
try { await agent('x', made('label', 7)) } catch (e) { wrong = e.message }
return { n: xs.filter(Boolean).length, typo, wrong, cwd, pcwd: process.cwd() }`), "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	var res struct {
		N                      int
		Typo, Wrong, Cwd, Pcwd string
	}
	if err := json.Unmarshal(o.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.N != 3 || !strings.Contains(res.Typo, `did you mean "schema"?`) || !strings.Contains(res.Wrong, "label must be a string") {
		t.Errorf("result %s", o.Result)
	}
	if res.Cwd != h.dir || res.Pcwd != h.dir {
		t.Errorf("cwd %q, process.cwd() %q; want the run's working directory %q", res.Cwd, res.Pcwd, h.dir)
	}
	d, err := h.rt.Inspect(o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	warned := map[string]int{}
	for _, l := range d.Logs {
		if l.Level == "warn" && strings.Contains(l.Message, "ignoring option") {
			for _, key := range []string{"_tag", "_predispatch", "tier"} {
				if strings.Contains(l.Message, `"`+key+`"`) {
					warned[key]++
				}
			}
		}
	}
	for _, key := range []string{"_tag", "_predispatch", "tier"} {
		if warned[key] != 1 {
			t.Errorf("%d warnings for %q, want 1; logs %+v", warned[key], key, d.Logs)
		}
	}
}

// A checkpoint with a default and headless: 'abort' aborts when nobody can
// answer, as in the Node runtime, and says that is why.
func TestHeadlessAbortWinsOverADefault(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	o := h.run(h.write("gate.workflow.js", `export const meta = { name: 'gate', description: 'asks' }
return await checkpoint('Deploy to production?', { default: true, headless: 'abort' })`), "", testOptions())
	mustStatus(t, o, engine.StatusFailed)
	if !strings.Contains(o.Error, "headless: 'abort'") || strings.Contains(o.Error, "no default") {
		t.Errorf("error %q", o.Error)
	}
	d, _ := h.rt.Inspect(o.RunID)
	if d.Summary.ErrorCode != "WORKFLOW_ABORTED" {
		t.Errorf("error code %q", d.Summary.ErrorCode)
	}
}

// A settled run's snapshot lists its calls in the Node runtime's terms,
// with long prompts cut; a running one's lists none, to stay small.
func TestSettledSnapshotListsAgentsForTheNodeRuntime(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	long := strings.Repeat("x", 3000)
	o := h.run(h.write("n.workflow.js", `export const meta = { name: 'n', description: 'for the Node runtime', phases: [{ title: 'One' }] }
const a = await agent('short prompt', { label: 'first', phase: 'One' })
const b = await agent('`+long+`', { label: 'long', phase: 'Two' })
const c = await agent('[simulate:fail] broken', { label: 'broken' })
return [a, c]`), "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	data, err := os.ReadFile(h.rt.Store().RunPaths(o.RunID).Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		WorkflowName string   `json:"workflowName"`
		Status       string   `json:"status"`
		Phases       []string `json:"phases"`
		Agents       []struct {
			ID     int             `json:"id"`
			Label  string          `json:"label"`
			Prompt string          `json:"prompt"`
			Status string          `json:"status"`
			Result json.RawMessage `json:"result"`
			Error  string          `json:"error"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(data, &snap); err != nil {
		t.Fatal(err)
	}
	if snap.WorkflowName != "n" || snap.Status != "completed" || strings.Join(snap.Phases, ",") != "One,Two" || len(snap.Agents) != 3 {
		t.Fatalf("snapshot: %s", data)
	}
	first, cut, broken := snap.Agents[0], snap.Agents[1], snap.Agents[2]
	if first.ID != 1 || first.Label != "first" || first.Prompt != "short prompt" || first.Status != "done" || len(first.Result) == 0 {
		t.Errorf("first agent %+v", first)
	}
	if len(cut.Prompt) > 1200 || !strings.HasPrefix(cut.Prompt, "xxxx") || !strings.Contains(cut.Prompt, "dynworkflow show") {
		t.Errorf("long prompt kept as %d bytes: %.80s", len(cut.Prompt), cut.Prompt)
	}
	if broken.Status != "error" || broken.Error == "" {
		t.Errorf("failed agent %+v", broken)
	}
}
