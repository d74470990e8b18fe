package temporal

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
)

// TestFailuresAndLimits runs scripts that hit the run's limits and the
// agents' failure classes on both backends: the outcome, the result and
// the error the script saw are the same.
func TestFailuresAndLimits(t *testing.T) {
	c := newClient(t)
	startWorker(t, c, "w1", simulated())
	startWorker(t, c, "w2", simulated())
	tests := []struct {
		name, body string
		opts       func(*engine.Options)
	}{
		{"agent cap", `const r = await parallel([1,2,3,4].map(i => () => agent('x' + i)))
try { await agent('over') } catch (e) { return [r, e.code, e.message] }`, func(o *engine.Options) { o.MaxAgents = 4 }},
		{"item cap", `try { await parallel([1,2,3].map(i => () => agent('x' + i))) } catch (e) { return [e.code, e.message] }`,
			func(o *engine.Options) { o.MaxItems = 2 }},
		{"token budget", `const a = await agent('first')
const spent = budget.spent()
try { await agent('second') } catch (e) { return [a, spent > 0, budget.remaining(), e.code] }`,
			func(o *engine.Options) { o.TokenBudget = 1 }},
		{"terminal failure is null", `return [await agent('x [simulate:fail]'), await agent('y')]`, nil},
		{"transient failure retried", `return await agent('x [simulate:transient]')`, func(o *engine.Options) { o.AgentRetries = 2 }},
		{"transient failure exhausted", `return await agent('x [simulate:transient]')`, func(o *engine.Options) { o.AgentRetries = 0 }},
		{"schema repaired", `return await agent('x [simulate:invalid-once]', { schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } })`, nil},
		{"schema never valid", `try { await agent('x [simulate:invalid]', { schema: { type: 'object', required: ['n'] } }) } catch (e) { return [e.code, e.message] }`, nil},
		// Made at run time: a literal one fails when the script loads, on both.
		{"bad schema", `try { await agent('x', { schema: JSON.parse('{"type": "objekt"}') }) } catch (e) { return [e.code, e.message] }`, nil},
		{"rate limit pauses", `return await agent('x [simulate:ratelimit]')`, nil},
		{"script error", `const x = await agent('a')
null.boom`, nil},
		{"nested workflow() refused", `return await workflow('child.workflow.js')`, nil},
		{"required call failed", `try { await agent('x [simulate:fail]', { required: true }) } catch (e) { return [e.code, e.message] }`, nil},
		{"required call timed out", `try { await agent('x [simulate:sleep=2s]', { required: true, timeoutMs: 50 }) } catch (e) { return [e.code, e.message] }`, nil},
		{"ignored option keys warn once", `return [await agent('a', { color: 'red' }), await agent('b', { color: 'blue' })]`, nil},
		{"headless abort", `return await checkpoint('Go?', { kind: 'confirm' })`, nil},
		{"branch failure", `return await parallel([() => agent('a'), () => { throw new Error('boom') }])`, nil},
		{"script errors", `return await pipeline(['a', 'b'], x => agent(x), a => a.nope.boom)`, nil},
		{"script error in strict mode", `await parallel([() => { throw new Error('boom') }])
return await agent('after')`, func(o *engine.Options) { o.Strict = true }},
		{"agent cap in parallel", `try { return await parallel([1,2,3,4,5].map(i => () => agent('x' + i))) } catch (e) { return [e.code, e.message] }`,
			func(o *engine.Options) { o.MaxAgents = 3 }},
		{"token budget in pipeline", `try { return await pipeline([1, 2], i => agent('x' + i), a => agent('then ' + a)) } catch (e) { return [e.code, budget.remaining()] }`,
			func(o *engine.Options) { o.TokenBudget, o.Concurrency = 1, 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeScript(t, "limits.workflow.js", "export const meta = { name: 'limits', description: 'limits' }\n"+tc.body+"\n")
			// A child that tries to start a grandchild, for workflow()'s one level.
			write(t, filepath.Join(filepath.Dir(path), "child.workflow.js"), `export const meta = { name: 'child', description: 'nests' }
try { return await workflow('child.workflow.js') } catch (e) { return [e.code, e.message] }
`)
			opts := engine.DefaultOptions()
			opts.RetryBackoff = 0
			if tc.opts != nil {
				tc.opts(&opts)
			}
			local, localDetail := runLocally(t, path, "", opts)
			in := startFile(t, c, path, "", opts, false)
			got := wait(t, c, in.RunID)
			if got.Result == nil {
				got.Result = json.RawMessage("null")
			}
			// Where a human could answer a checkpoint is the one thing
			// the backends tell apart.
			got.Error = strings.Replace(got.Error, "on Temporal with --await-checkpoints", "under `dynworkflow serve`", 1)
			if g, w := warnings(got.Logs), warnings(localDetail.Logs); g != w {
				t.Errorf("warnings on Temporal:\n%s\nlocally:\n%s", g, w)
			}
			if got.Status != local.Status || string(got.Result) != string(local.Result) || got.Error != local.Error || !samePause(got.PauseReason, local) {
				t.Errorf("on Temporal: %s %s %q %q\nlocally:     %s %s %q %q", got.Status, got.Result, got.Error, got.PauseReason,
					local.Status, local.Result, local.Error, local.PauseReason)
			}
			if got.Stats.Live != local.Stats.Live || got.Stats.Failed != local.Stats.Failed {
				t.Errorf("on Temporal %d live and %d failed, locally %d and %d", got.Stats.Live, got.Stats.Failed, local.Stats.Live, local.Stats.Failed)
			}
			if g, w := got.Stats.ScriptErrors, local.Stats.ScriptErrors; g != w || !slices.Equal(engine.SortScriptErrors(got.ScriptErrors), local.ScriptErrors) {
				t.Errorf("on Temporal %d script errors %+v, locally %d %+v", g, got.ScriptErrors, w, local.ScriptErrors)
			}
			replay(t, c, in.RunID)
		})
	}
}

// warnings lists the warn lines of a log, sorted: branches warn in the
// order their calls end, which is the agents'.
func warnings(logs []engine.LogLine) string {
	var out []string
	for _, l := range logs {
		if l.Level == "warn" {
			out = append(out, l.Message)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
