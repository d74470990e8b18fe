package browsertest_test

import (
	"context"

	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// TestRecoversAfterServerRestart: the server stops (pausing the run the
// page shows) and starts again on the same port; the page notices, shows
// the run paused, and works with the new server: resuming from the page
// runs the rest, and a run started on the new server appears in the list.
func TestRecoversAfterServerRestart(t *testing.T) {
	s := newServer(t, simulate.Config{})
	id := s.start(longScript)
	tb := newTab(t)
	tb.navigate(s.link(id))
	tb.waitFor("a running step", `document.querySelector('[data-stat=agents]')?.textContent.includes("1 running")`)
	eval[bool](tb, `window.stillHere = true`)

	s.close()
	tb.waitFor("the page to notice", `document.body.dataset.conn === "down"`)
	s.open(s.addr)
	tb.waitFor("the stream back", `document.body.dataset.conn === "live"`)
	tb.waitFor("the run paused by the restart", `document.querySelector('.run-sub .badge').textContent === "paused"`)
	tb.click(`button[data-action=resume]`)
	tb.waitFor("running on the new server", `document.querySelector('.run-sub .badge').textContent === "running" && document.querySelector('[data-stat=execution]').textContent === "2"`)
	s.waitStatus(id, "running")

	tb.click(`.crumbs a`)
	tb.waitFor("the list", `document.querySelector('.view-list .run-row[data-run]')`)
	other := s.start(liveScript)
	tb.waitFor("a run started on the new server", `document.querySelector('.run-row[data-run=`+jsString(other)+`]')`)
	if !eval[bool](tb, `window.stillHere === true`) {
		t.Fatal("the page reloaded")
	}
}

// TestKeyboard: the list and the run view work without a mouse, and the
// focus can be seen.
func TestKeyboard(t *testing.T) {
	s := newServer(t, simulate.Config{})
	review := s.startExample("review.workflow.js")
	s.waitStatus(review, "completed")
	tb := newTab(t)
	tb.navigate(s.link(""))
	tb.waitFor("the list", `document.querySelector('.run-row[data-run]')`)

	// Tab from the top of the page reaches the run's row.
	for range 10 {
		tb.do(chromedp.KeyEvent(kb.Tab))
		if eval[bool](tb, `document.activeElement.classList.contains('run-row')`) {
			break
		}
	}
	if !eval[bool](tb, `document.activeElement.classList.contains('run-row')`) {
		t.Fatalf("Tab never reached the run; focus is on %s", eval[string](tb, `document.activeElement.outerHTML.slice(0, 200)`))
	}
	if eval[string](tb, `getComputedStyle(document.activeElement).outlineStyle`) == "none" {
		t.Error("the focused run shows no outline")
	}
	tb.do(chromedp.KeyEvent(kb.Enter))
	tb.waitFor("the run view", `document.querySelector('.view-run .agent-row')`)

	tb.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('.agent-row').focus()`))
	tb.do(chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	if i := eval[string](tb, `document.activeElement.dataset.index`); i != "2" {
		t.Fatalf("ArrowDown twice: focus on row %q", i)
	}
	path := eval[string](tb, `document.activeElement.dataset.path`)
	tb.do(chromedp.KeyEvent(kb.Enter))
	tb.waitFor("the agent panel", `document.querySelector('.agent-panel')?.dataset.path === `+jsString(path))
	if !eval[bool](tb, `new URLSearchParams(location.hash.slice(1)).get("call") === `+jsString(path)) {
		t.Errorf("the address does not name the agent: %s", eval[string](tb, `location.hash`))
	}
	tb.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
			if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Key: "Escape", Code: "Escape", WindowsVirtualKeyCode: 27}); err != nil {
				return err
			}
		}
		return nil
	}))
	tb.waitFor("the panel closed, focus back on the row", `!document.querySelector('.agent-panel') && document.activeElement.dataset.path === `+jsString(path))
}
