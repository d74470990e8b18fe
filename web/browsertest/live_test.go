package browsertest_test

import (
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// liveScript's four tasks each wait for the test to release them.
const liveScript = `export const meta = {
  name: 'live-agents',
  description: 'Four agents that take their time',
  phases: ['Work', 'Sum up'],
}
phase('Work')
const out = await parallel([1, 2, 3, 4].map(i => () =>
  agent('task ' + i + ' [gate:task-' + i + ']', { label: 'task-' + i })))
phase('Sum up')
const sum = await agent('sum up ' + out.length + ' answers', { label: 'sum' })
return { answers: out.length, sum }
`

// TestAgentsChangeLive: the run view shows agents start and finish, and
// the run complete, as it happens, without a reload; the run list shows a
// run started after the page loaded.
func TestAgentsChangeLive(t *testing.T) {
	s := newServer(t, simulate.Config{})
	tb := newTab(t)
	tb.navigate(s.link(""))
	tb.waitFor("the run list", `document.body.dataset.state === "ready" && document.body.dataset.conn === "live"`)

	id := s.start(liveScript)
	row := `document.querySelector('.run-row[data-run=` + jsString(id) + `]')`
	tb.waitFor("the new run in the list", row+` && `+row+`.querySelector('.badge').textContent === "running"`)

	tb.click(`.run-row[data-run="` + id + `"]`)
	tb.waitFor("the run view", `document.querySelector('.view-run h1') && document.querySelector('.view-run h1').textContent === "live-agents"`)
	// The page must not reload from here on: a reload would lose this.
	eval[bool](tb, `window.stillHere = true`)

	agent := func(label string) string {
		return `[...document.querySelectorAll('.agent-row')].find(r => r.querySelector('.a-name').textContent === ` + jsString(label) + `)`
	}
	tb.waitFor("task-4 running", agent("task-4")+`?.dataset.status === "running"`)
	s.release("task-1")
	tb.waitFor("task-1 done while task-4 still runs", agent("task-1")+`?.dataset.status === "done" && `+agent("task-4")+`?.dataset.status === "running"`)
	for _, task := range []string{"task-2", "task-3", "task-4"} {
		s.release(task)
	}
	tb.waitFor("the Sum up phase", `document.querySelector('[data-stat=phase]').textContent.startsWith("Sum up (2 of 2)")`)
	tb.waitFor("task-4 done", agent("task-4")+`?.dataset.status === "done"`)
	tb.waitFor("the run completed", `document.querySelector('.run-sub .badge').textContent === "completed"`)
	tb.waitFor("the result", `document.querySelector('[data-field=run-result]')?.textContent.includes('"answers": 4')`)
	if !eval[bool](tb, `window.stillHere === true`) {
		t.Fatal("the page reloaded")
	}
	counts := eval[string](tb, `document.querySelector('.phase[data-phase="Work"] .phase-counts').textContent`)
	if !strings.HasPrefix(counts, "4 agents") || !strings.Contains(counts, "4 done") {
		t.Errorf("Work phase counts: %q", counts)
	}
	if d := s.detail(id); d.Summary.Status != "completed" {
		t.Errorf("the API says %s", d.Summary.Status)
	}
}

// TestAgentPanelShowsLastActivity: the agent panel of a running call says
// what the agent did last and when (issue 23, item 5), from the run's
// detail and then from call.progress events, and drops it once the call
// is done.
func TestAgentPanelShowsLastActivity(t *testing.T) {
	s := newServer(t, simulate.Config{})
	tb := newTab(t)
	id := s.start(`export const meta = { name: 'busy', description: 'one agent at work' }
return await agent('work [simulate:sleep=4s]', { label: 'worker' })
`)
	tb.navigate(s.link(id))
	tb.waitFor("the running agent", `document.querySelector('.agent-row[data-status=running]')`)
	tb.click(`.agent-row[data-status=running]`)
	tb.waitFor("the last activity in the agent panel",
		`[...document.querySelectorAll('.agent-panel dt')].some(dt => dt.textContent === "Last activity" && dt.nextElementSibling.textContent.startsWith("tool: simulate: working for 4s · "))`)
	if !eval[bool](tb, `/\([^)]* ago\)|\(just now\)/.test(document.querySelector('.agent-panel .activity').textContent)`) {
		t.Errorf("the activity does not say when: %q", eval[string](tb, `document.querySelector('.agent-panel .activity').textContent`))
	}
	tb.waitFor("the call done, its activity gone", `document.querySelector('.agent-panel .badge')?.textContent === "done" && !document.querySelector('.agent-panel .activity')`)
}

// TestQuotaParkedRunSaysSo: a run parked until its executor's quota
// resets says "waiting for quota" in the run list and the run view, with
// the reset time in its reason, as the run.status event tells it (issue
// 23, item 6).
func TestQuotaParkedRunSaysSo(t *testing.T) {
	s := newServer(t, simulate.Config{})
	tb := newTab(t)
	id := s.start(`export const meta = { name: 'limited', description: 'meets its quota' }
return await agent('go [simulate:ratelimit=1h]')
`)
	tb.navigate(s.link(id))
	tb.waitFor("the run view's badge to say it waits for quota",
		`document.querySelector('.run-sub .badge')?.textContent === "waiting for quota"`)
	if reason := eval[string](tb, `document.querySelector('.run-sub .reason')?.textContent || ""`); !strings.HasPrefix(reason, "waiting for quota until ") {
		t.Errorf("the run view's reason is %q", reason)
	}
	tb.navigate(s.link(""))
	tb.waitFor("the run list's badge to say it waits for quota",
		`document.querySelector('.run-row[data-run=`+jsString(id)+`] .badge')?.textContent === "waiting for quota"`)
}
