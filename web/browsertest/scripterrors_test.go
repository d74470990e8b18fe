package browsertest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// TestScriptErrorsShow: a run whose fan-out branches threw completes, but
// the page must not let it pass for a success. The run view, open while
// the run waits at a checkpoint, gets the badge and the errors (with
// where they were thrown) from the events alone; the run list shows the
// badge too.
func TestScriptErrorsShow(t *testing.T) {
	s := newServer(t, simulate.Config{})
	id := s.start(`export const meta = { name: 'lens-review', description: 'the README bug', phases: ['Review'] }
await checkpoint('Start the review?', { kind: 'confirm' })
return await parallel(['correctness', 'security', 'speed'].map(l => () => agent('review ' + l + FINDINGS, { phase: 'Review' })))
`)
	tb := newTab(t)
	tb.navigate(s.link(id))
	tb.waitFor("the run view, waiting", `document.querySelector('.run-sub .badge')?.textContent === "running" || document.querySelector('form.checkpoint')`)
	if eval[bool](tb, `!document.querySelector('.badge.script-errors').hidden`) {
		t.Fatal("the script-errors badge shows before any branch threw")
	}
	cps, err := s.client.Checkpoints(context.Background())
	if err != nil || len(cps) != 1 {
		t.Fatalf("checkpoints: %v %v", cps, err)
	}
	if err := s.client.Respond(context.Background(), cps[0].ID, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	tb.waitFor("the run completed", `document.querySelector('.run-sub .badge')?.textContent === "completed"`)
	tb.waitFor("the badge", `(() => { const b = document.querySelector('.run-sub .badge.script-errors'); return b && !b.hidden && b.textContent === "3 script errors"; })()`)
	tb.waitFor("the errors in the failure box",
		`(() => { const box = document.querySelector('[data-field=script-errors]'); return box && box.textContent.includes("×3") &&
			box.textContent.includes("ReferenceError: FINDINGS is not defined") && /:3:\d+/.test(box.textContent); })()`)
	tb.screenshot(artifacts(t), "script-errors-run.png")

	// The list, loaded afresh, shows it too.
	tb.navigate(s.link(""))
	tb.waitFor("the list's badge", `document.querySelector(`+jsString(`.run-row[data-run=`+jsString(id)+`] .badge.script-errors`)+`)?.textContent === "3 script errors"`)
	// And a fresh load of the run view, from the detail rather than the events.
	tb.navigate(s.link(id))
	tb.waitFor("the badge after a reload", `(() => { const b = document.querySelector('.run-sub .badge.script-errors'); return b && !b.hidden && b.textContent === "3 script errors"; })()`)
	tb.waitFor("the box after a reload", `document.querySelector('[data-field=script-errors]')?.textContent.includes("FINDINGS is not defined")`)
}
