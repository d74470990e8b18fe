package browsertest_test

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

const failingScript = `export const meta = {
  name: 'flaky-audit',
  description: 'Audits twelve modules; some agents fail',
  phases: ['Audit', 'Report'],
}
phase('Audit')
const found = await parallel(Array.from({ length: 12 }, (_, i) => () =>
  agent('audit module ' + i + (i % 4 === 1 ? ' [simulate:fail]' : '') + ' [simulate:sleep=' + (40 * i) + 'ms]',
    { label: 'audit-' + i }).catch(e => null)))
phase('Report')
log(found.filter(Boolean).length + ' modules audited')
return { audited: found.filter(Boolean).length }
`

// TestScreenshots saves the run list and the run view of the repository's
// example workflows at laptop and phone widths, light and dark, and checks
// on the way that the phone's Back button closes the agent panel.
func TestScreenshots(t *testing.T) {
	s := newServer(t, simulate.Config{MinLatency: 5e6, MaxLatency: 30e6, Seed: 7})
	dir := artifacts(t)
	review := s.startExample("review.workflow.js")
	s.waitStatus(review, "completed")
	failing := s.start(failingScript)
	s.waitStatus(failing, "completed")
	gate := s.startExample("release-gate.workflow.js")
	tb := newTab(t)

	tb.navigate(s.link(""))
	tb.waitFor("the run list with a checkpoint", `document.body.dataset.state === "ready" && document.querySelectorAll('.run-row[data-run]').length === 3 && document.querySelector('form.checkpoint')`)
	tb.screenshot(dir, "list-laptop-light.png")

	tb.navigate(s.link(review))
	tb.waitFor("the review run", `document.querySelectorAll('.agent-row').length > 3`)
	tb.click(`.agent-row[data-path]`)
	tb.waitFor("the agent panel", `document.querySelector('.agent-panel [data-field=result]')`)
	tb.screenshot(dir, "run-laptop-light.png")

	tb.navigate(s.link(failing))
	tb.waitFor("the failing run", `document.querySelector('.failures:not([hidden])')`)
	tb.screenshot(dir, "run-failures-laptop-light.png")

	tb.navigate(s.link(gate))
	tb.waitFor("the checkpoint of the release gate", `document.querySelector('.view-run form.checkpoint')`)
	tb.screenshot(dir, "run-checkpoint-laptop-light.png")

	dark := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
		})
		return err
	})
	tb.do(dark)
	tb.navigate(s.link(review))
	tb.waitFor("the review run", `document.querySelectorAll('.agent-row').length > 3`)
	tb.click(`.agent-row[data-path]`)
	tb.waitFor("the agent panel", `document.querySelector('.agent-panel [data-field=result]')`)
	tb.screenshot(dir, "run-laptop-dark.png")
	tb.navigate(s.link(""))
	tb.waitFor("the run list", `document.querySelectorAll('.run-row[data-run]').length === 3`)
	tb.screenshot(dir, "list-laptop-dark.png")

	tb.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	tb.navigate(s.link(""))
	tb.waitFor("the run list", `document.querySelectorAll('.run-row[data-run]').length === 3`)
	tb.screenshot(dir, "list-phone-dark.png")
	tb.navigate(s.link(review))
	tb.waitFor("the review run", `document.querySelectorAll('.agent-row').length > 3`)
	tb.screenshot(dir, "run-phone-dark.png")
	tb.click(`.agent-row[data-path]`)
	tb.waitFor("the agent panel", `document.querySelector('.agent-panel [data-field=result]')`)
	tb.screenshot(dir, "agent-phone-dark.png")
	// On a phone the panel covers the page: Back closes it.
	tb.do(chromedp.NavigateBack())
	tb.waitFor("Back to close the panel", `!document.querySelector('.agent-panel') && document.querySelector('.view-run .agent-row')`)
	tb.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}},
		})
		return err
	}))
	tb.navigate(s.link(gate))
	tb.waitFor("the checkpoint", `document.querySelector('.view-run form.checkpoint')`)
	tb.screenshot(dir, "run-checkpoint-phone-light.png")
}
