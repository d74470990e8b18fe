package browsertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/web"
)

// TestCheckpointAnsweredFromThePage answers the release-gate example's two
// questions (a select, then a confirm) in the page, and the run goes on
// to publish with the answers given.
func TestCheckpointAnsweredFromThePage(t *testing.T) {
	s := newServer(t, simulate.Config{})
	id := s.startExample("release-gate.workflow.js")
	tb := newTab(t)
	tb.navigate(s.link(id))
	tb.waitFor("the select form", `document.querySelector('.view-run form.checkpoint[data-kind=select]')`)
	tb.click(`.view-run form.checkpoint[data-kind=select] label:nth-of-type(2) input`)
	tb.click(`.view-run form.checkpoint[data-kind=select] button[type=submit]`)
	tb.waitFor("the confirm form", `document.querySelector('.view-run form.checkpoint[data-kind=confirm]')`)
	prompt := eval[string](tb, `document.querySelector('.view-run form.checkpoint[data-kind=confirm] .cp-prompt').textContent`)
	if want := "Publish these notes to stable?"; len(prompt) < len(want) || prompt[:len(want)] != want {
		t.Errorf("confirm prompt %q", prompt)
	}
	tb.click(`.view-run form.checkpoint[data-kind=confirm] button[data-answer=yes]`)
	tb.waitFor("the run completed", `document.querySelector('.run-sub .badge').textContent === "completed"`)
	tb.waitFor("no form left", `!document.querySelector('form.checkpoint')`)

	d := s.detail(id)
	var result struct {
		Published bool   `json:"published"`
		Channel   string `json:"channel"`
	}
	if err := json.Unmarshal(d.Result, &result); err != nil || !result.Published || result.Channel != "stable" {
		t.Fatalf("result %s (%v): want published to stable", d.Result, err)
	}
	tb.waitFor("the answers among the calls", `[...document.querySelectorAll('.agent-row .a-name')].filter(e => e.textContent.startsWith("? ")).length === 2`)
}

// TestCheckpointAnsweredElsewhere: a question answered through the API
// leaves the page that showed it; a text question rejects nothing and
// sends what was typed.
func TestCheckpointAnsweredElsewhere(t *testing.T) {
	s := newServer(t, simulate.Config{})
	id := s.start(`export const meta = { name: 'asks', description: 'asks twice' }
const who = await checkpoint('Who reviews this?', { kind: 'text', default: 'nobody' })
const again = await checkpoint('And who approves?', { kind: 'text' })
return { who, again }
`)
	tb := newTab(t)
	tb.navigate(s.link(""))
	tb.waitFor("the text question in the list", `document.querySelector('form.checkpoint[data-kind=text]')?.querySelector('.cp-prompt').textContent === "Who reviews this?"`)
	if v := eval[string](tb, `document.querySelector('form.checkpoint textarea').value`); v != "nobody" {
		t.Errorf("the default is not offered: %q", v)
	}
	var cp web.Checkpoint
	cps, err := s.client.Checkpoints(context.Background())
	if err != nil || len(cps) != 1 {
		t.Fatalf("checkpoints: %v %v", cps, err)
	}
	cp = cps[0]
	if err := s.client.Respond(context.Background(), cp.ID, json.RawMessage(`"ada"`)); err != nil {
		t.Fatal(err)
	}
	tb.waitFor("the next question, and the answered one gone", `document.querySelectorAll('form.checkpoint').length === 1 && document.querySelector('form.checkpoint .cp-prompt').textContent === "And who approves?"`)
	tb.do(sendKeys(`form.checkpoint textarea`, "grace"))
	tb.click(`form.checkpoint button[type=submit]`)
	tb.waitFor("no question left", `!document.querySelector('form.checkpoint')`)
	d := s.waitStatus(id, "completed")
	var got struct{ Who, Again string }
	if err := json.Unmarshal(d.Result, &got); err != nil || got.Who != "ada" || got.Again != "grace" {
		t.Errorf("result %s (%v)", d.Result, err)
	}
}

const longScript = `export const meta = { name: 'long-haul', description: 'many steps, one at a time', phases: ['Steps'] }
phase('Steps')
for (let i = 0; i < 600; i++) await agent('step ' + i + ' [simulate:sleep=100ms]', { label: 'step-' + i })
await agent('the end [gate:end]', { label: 'end' }) // never released: the run never ends by itself
return 'all steps'
`

// heldScript is longScript with step 30 held at the gate "hold": the
// running step stays where it is, however slow the machine, until the
// test releases it.
const heldScript = `export const meta = { name: 'long-haul', description: 'many steps, one at a time', phases: ['Steps'] }
phase('Steps')
for (let i = 0; i < 600; i++) await agent('step ' + i + (i === 30 ? ' [gate:hold]' : '') + ' [simulate:sleep=100ms]', { label: 'step-' + i })
await agent('the end [gate:end]', { label: 'end' })
return 'all steps'
`

// TestPauseResumeStopDelete drives a run's life from the page's buttons
// and checks each step through the API.
func TestPauseResumeStopDelete(t *testing.T) {
	s := newServer(t, simulate.Config{})
	id := s.start(heldScript)
	tb := newTab(t)
	tb.navigate(s.link(id))
	tb.waitFor("step 30 running at its gate", `document.querySelector('[data-stat=agents]')?.textContent.includes("30/31 done · 1 running")`)
	// The running step is far down the list: the phase jumps to it.
	tb.waitFor("enough steps for a jump", `!document.querySelector('[data-jump=running]').hidden`)
	tb.click(`[data-jump=running]`)
	tb.waitFor("the running step focused", `document.activeElement.classList.contains('agent-row') && Number(document.activeElement.dataset.index) === 30`)
	s.release("hold")
	// Back up to the run's buttons, as a person would: a button half under
	// the sticky top bar counts as in view, and a click there hits the bar.
	tb.do(evalVoid(`window.scrollTo(0, 0)`))
	tb.click(`button[data-action=pause]`)
	tb.waitFor("paused", `document.querySelector('.run-sub .badge').textContent === "paused"`)
	d := s.waitStatus(id, "paused")
	done := 0
	for _, c := range d.Calls {
		if c.Status == "done" {
			done++
		}
	}
	if done == 600 {
		t.Fatal("the run finished before the pause")
	}

	tb.click(`button[data-action=resume]`)
	tb.waitFor("running again", `document.querySelector('.run-sub .badge').textContent === "running"`)
	tb.waitFor("a step done after the resume", `document.querySelector('[data-stat=execution]').textContent === "2" && document.querySelectorAll('.agent-row[data-status=done]').length > 0`)
	if st := s.detail(id).Summary; st.Status != "running" || st.Epoch != 1 {
		t.Fatalf("after resume the API says %s, epoch %d", st.Status, st.Epoch)
	}

	// Stop asks first; Cancel leaves the run alone. Asking again at once
	// is not undone by the first dialog's close event, which comes later.
	tb.click(`button[data-action=stop]`)
	tb.waitFor("the confirmation", `document.querySelector('dialog#confirm').open`)
	eval[bool](tb, `document.querySelector('#confirm-cancel').click(), document.querySelector('button[data-action=stop]').click(), true`)
	if !eval[bool](tb, `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(document.querySelector('dialog#confirm').open))))`) {
		t.Fatal("the second confirmation closed by itself")
	}
	tb.click(`#confirm-cancel`)
	tb.waitFor("the dialog closed", `!document.querySelector('dialog#confirm').open`)
	if st := s.detail(id).Summary.Status; st != "running" {
		t.Fatalf("cancelled stop: the run is %s", st)
	}
	tb.click(`button[data-action=stop]`)
	tb.waitFor("the confirmation", `document.querySelector('dialog#confirm').open`)
	tb.click(`#confirm-ok`)
	tb.waitFor("stopped", `document.querySelector('.run-sub .badge').textContent === "stopped"`)
	s.waitStatus(id, "stopped")

	tb.click(`button[data-action=delete]`)
	tb.waitFor("the confirmation", `document.querySelector('dialog#confirm').open && document.querySelector('#confirm-title').textContent.startsWith("Delete")`)
	tb.click(`#confirm-ok`)
	tb.waitFor("back on the list, without the run", `location.hash === "" && document.querySelector('.view-list') && !document.querySelector('.run-row[data-run=`+jsString(id)+`]')`)
	_, err := s.client.Run(context.Background(), id)
	var ae *web.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
		t.Fatalf("the deleted run: %v", err)
	}
	if d := tb.dialogsOpened(); len(d) != 0 {
		t.Errorf("the page opened browser dialogs: %v", d)
	}
}
