package browsertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/web"
)

// gate answers "quick" prompts at once, fails "flaky" ones transiently on
// their first attempt and "broken" ones for good, and holds "hold" prompts
// until released: a test controls the run rather than racing it.
type gate struct {
	once    sync.Once
	release chan struct{}
}

func newGate() *gate { return &gate{release: make(chan struct{})} }

func (*gate) Name() string { return "gate" }

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

func (g *gate) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	u := executors.Usage{InputTokens: 120, OutputTokens: 30}
	switch {
	case strings.Contains(req.Prompt, "hold"):
		select {
		case <-g.release:
		case <-ctx.Done():
			return executors.Result{}, ctx.Err()
		}
	case strings.Contains(req.Prompt, "flaky") && req.Attempt == 1:
		return executors.Result{Usage: u}, &executors.Error{Class: executors.Transient, Message: "overloaded", RetryAfter: 30 * time.Millisecond}
	case strings.Contains(req.Prompt, "broken"):
		return executors.Result{Usage: u}, errors.New("the agent gave up")
	}
	time.Sleep(15 * time.Millisecond) // a bar with some length
	return executors.Result{Text: "ok: " + req.Prompt, Usage: u}, nil
}

// timelineScript names its phases only in agent(), as the README's first
// example does, and has a bit of everything a timeline distinguishes.
const timelineScript = `export const meta = { name: 'timeline', description: 'phases in agent() only', phases: [{ title: 'Scan' }, { title: 'Fix' }] }
const found = await parallel(['a', 'b', 'c', 'd'].map(n => () => agent('quick scan ' + n, { label: 'scan-' + n, phase: 'Scan', executor: 'gate' })))
const ok = await checkpoint('Fix them?', { default: true, timeoutMs: 150 })
const fixed = await parallel([
  () => agent('flaky fix', { label: 'fix-flaky', phase: 'Fix', executor: 'gate' }),
  () => agent('broken fix', { label: 'fix-broken', phase: 'Fix', executor: 'gate' }),
  () => agent('quick fix', { label: 'fix-quick', phase: 'Fix', executor: 'gate' }),
])
return { found: found.length, fixed: fixed.filter(Boolean).length }
`

// bar is what the timeline drew for one call.
type bar struct {
	Path    string  `json:"path"`
	Kind    string  `json:"kind"`
	X       float64 `json:"x"`
	Y       float64 `json:"y"`
	W       float64 `json:"w"`
	H       float64 `json:"h"`
	Retries int     `json:"retries"`
}

func bars(tb *tab) []bar {
	tb.t.Helper()
	raw := eval[string](tb, `JSON.stringify(document.querySelector('.tl-canvas').timeline.bars.map(b => ({
		path: b.s.path, kind: b.s.kind, x: b.x, y: b.y, w: b.w, h: b.h, retries: (b.s.retries || []).length })))`)
	var out []bar
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		tb.t.Fatal(err)
	}
	return out
}

// clickCanvas clicks the timeline at a point of the canvas.
func clickCanvas(tb *tab, x, y float64) {
	tb.t.Helper()
	r := eval[[]float64](tb, `(() => { const r = document.querySelector('.tl-canvas').getBoundingClientRect(); return [r.left, r.top]; })()`)
	tb.do(chromedp.MouseClickXY(r[0]+x, r[1]+y))
}

// TestTimeline follows a run on the timeline: a bar per call in a band
// per phase, failures, retries, the checkpoint's wait and (after a
// resume) the replayed calls each drawn their own way; a click on a bar
// opens that call's panel; the zoom narrows and fits the window. The run
// names its phases only in agent(): the page still shows its phase.
func TestTimeline(t *testing.T) {
	g := newGate()
	g.open()
	s := newServer(t, simulate.Config{}, g)
	tb := newTab(t)
	req := startRequest(timelineScript, 8)
	req.Options.AgentRetries = new(1)
	resp, err := s.client.Start(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	id := resp.RunID
	d := s.waitStatus(id, "completed")
	tb.navigate(s.link(id))
	tb.waitFor("the run view", `document.querySelector('.view-switch [data-show=timeline]')`)
	tb.click(`.view-switch [data-show=timeline]`)
	tb.waitFor("the timeline", `document.querySelector('.tl-canvas')?.timeline?.bars.length === 8`)

	if got := eval[string](tb, `document.querySelector('[data-stat=phase]').textContent`); !strings.HasPrefix(got, "Fix (2 of 2)") {
		t.Errorf("the phase stat of a run with phases only in agent() is %q, want Fix (2 of 2)", got)
	}
	kinds := map[string]int{}
	retried := ""
	var pathOf = map[string]string{}
	for _, c := range d.Calls {
		pathOf[c.Label] = c.Path
	}
	for _, b := range bars(tb) {
		kinds[b.Kind]++
		if b.Retries > 0 {
			retried = b.Path
		}
	}
	if kinds["live"] != 6 || kinds["failed"] != 1 || kinds["wait"] != 1 {
		t.Errorf("bars by kind: %v, want 6 live, 1 failed, 1 wait", kinds)
	}
	if retried != pathOf["fix-flaky"] {
		t.Errorf("the retried bar is %q, want fix-flaky's %q", retried, pathOf["fix-flaky"])
	}
	// Two bands, in the order of the script's phases, calls on lanes.
	ys := map[string]float64{}
	for _, b := range bars(tb) {
		ys[b.Path] = b.Y
	}
	if !(ys[pathOf["scan-a"]] < ys[pathOf["fix-quick"]]) {
		t.Errorf("the Scan band is not above the Fix band: %v", ys)
	}

	// A click on a bar opens its call.
	for _, b := range bars(tb) {
		if b.Path == pathOf["fix-broken"] {
			clickCanvas(tb, b.X+b.W/2, b.Y+b.H/2)
		}
	}
	tb.waitFor("the clicked call's panel", `document.querySelector('.agent-panel')?.dataset.path === `+jsString(pathOf["fix-broken"]))

	// Zoom in twice, then fit.
	before := eval[string](tb, `document.querySelector('.tl-range').textContent`)
	tb.click(`.tl-zoom button[aria-label="Zoom in"]`)
	tb.click(`.tl-zoom button[aria-label="Zoom in"]`)
	tb.waitFor("a zoomed window", `document.querySelector('.tl-range').textContent.includes("shown of")`)
	tb.click(`.tl-zoom button[aria-label="Fit the whole run"]`)
	tb.waitFor("the whole run again", `document.querySelector('.tl-range').textContent === `+jsString(before))

	// A resume replays every finished call: the timeline says so.
	if _, err := s.client.Resume(t.Context(), id, web.ResumeRequest{}); err != nil {
		t.Fatal(err)
	}
	s.waitStatus(id, "completed")
	tb.waitFor("replayed bars", `document.querySelector('.tl-canvas').timeline.bars.filter(b => b.s.kind === "replayed").length >= 6`)

	// What the end of the page said as raw JSON is in its place now.
	text := eval[string](tb, `document.querySelector('.view-run').innerText`)
	for _, raw := range []string{`"simulatedAnswers"`, `"kind": "simulate"`, `"executors"`} {
		if strings.Contains(text, raw) {
			t.Errorf("the run view still shows raw JSON (%s)", raw)
		}
	}
	if !eval[bool](tb, `!document.querySelector('[data-note=simulated]').hidden`) {
		t.Errorf("the run's simulated answers are not said where its status is")
	}
	if eval[int](tb, `document.querySelectorAll('.executors tr[data-executor]').length`) < 2 {
		t.Errorf("the executors are not listed in a table")
	}
	tb.screenshot(artifacts(t), "timeline-laptop-light.png")
}

// TestCountsAgreeWithTheTerminal holds a run mid-way, with calls done,
// running and queued, and checks that the page counts them as the
// terminal's live view does (from the engine's own counters).
func TestCountsAgreeWithTheTerminal(t *testing.T) {
	g := newGate()
	t.Cleanup(g.open)
	s := newServer(t, simulate.Config{}, g)
	tb := newTab(t)
	script := `export const meta = { name: 'held', description: 'three held calls fill the slots' }
await parallel(['quick a', 'quick b', 'quick c', 'hold a', 'hold b', 'hold c', 'quick d', 'quick e'].map(p => () => agent(p, { label: p.replace(' ', '-'), phase: 'Scan', executor: 'gate' })))
return 1`
	resp, err := s.client.Start(t.Context(), startRequest(script, 3))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.RunID
	tb.navigate(s.link(id))
	// The engine's counters, which the terminal shows.
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, ok := s.rt.Live(id)
		if !ok {
			t.Fatal("the run is not live")
		}
		p := r.Progress()
		if p.Stats.Running == 3 && p.Stats.Live == 3 && p.Calls == 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never settled with 3 done, 3 held and 2 queued: %+v", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
	tb.waitFor("the terminal's counts on the page", `document.querySelector('[data-stat=agents]')?.textContent === "3/8 done · 3 running · 2 queued"`)
	if got := eval[string](tb, `document.querySelector('.phase[data-phase="Scan"] .phase-counts').textContent`); got != "3 running · 3 done" {
		t.Errorf("the phase head says %q, want the terminal's phase line: 3 running · 3 done", got)
	}
	if got := eval[string](tb, `document.querySelector('[data-stat=phase]').textContent`); !strings.HasPrefix(got, "Scan") {
		t.Errorf("the phase stat is %q, want Scan", got)
	}
	tb.click(`.view-switch [data-show=timeline]`)
	tb.waitFor("running bars", `document.querySelector('.tl-canvas')?.timeline?.bars.filter(b => b.s.kind === "running").length === 3`)
	g.open()
	tb.waitFor("the run completed", `document.querySelector('.run-sub .badge')?.textContent === "completed"`)
	tb.waitFor("the counts at the end", `document.querySelector('[data-stat=agents]')?.textContent === "8/8 done"`)
}

// TestPhoneKeepsTheNameOfAFailedRun: a failed run's long error must not
// push its workflow's name out of its card on a phone.
func TestPhoneKeepsTheNameOfAFailedRun(t *testing.T) {
	s := newServer(t, simulate.Config{})
	tb := newTab(t)
	id := s.start(`export const meta = { name: 'nightly-audit', description: 'fails' }
throw new Error('the audit could not read the repository at /home/someone/projects/a-rather-long-path/with/many/parts because of a permission problem')`)
	s.waitStatus(id, "failed")
	tb.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	tb.navigate(s.link(""))
	sel := `.run-row[data-run=` + jsString(id) + `] .c-name b`
	tb.waitFor("the failed run's card", `document.querySelector(`+jsString(`.run-row[data-run=`+jsString(id)+`] .reason`)+`)`)
	w := eval[[]float64](tb, `(() => { const b = document.querySelector(`+jsString(sel)+`); return [b.clientWidth, b.scrollWidth]; })()`)
	if w[0] < w[1] || w[0] < 60 {
		t.Errorf("the name is %v px wide for %v px of text: cut off", w[0], w[1])
	}
	if html := eval[string](tb, `document.querySelector(`+jsString(`.run-row[data-run=`+jsString(id)+`]`)+`).outerHTML`); !strings.Contains(html, `class="reason"`) {
		t.Errorf("the reason is gone: %s", html)
	}
	tb.screenshot(artifacts(t), "failed-run-phone.png")
}
