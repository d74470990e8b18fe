package browsertest_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

const thousandScript = `export const meta = {
  name: 'thousand',
  description: '1,000 agents in four phases',
  phases: ['Survey', 'Analyse', 'Check', 'Report'],
}
for (const p of ['Survey', 'Analyse', 'Check', 'Report']) {
  phase(p)
  await parallel(Array.from({ length: 250 }, (_, i) => () => agent(p + ' item ' + i, { label: p.toLowerCase() + '-' + i })))
}
return 'done'
`

// measure is a performance.measure entry the page records.
type measure struct {
	Start    float64 `json:"startTime"`
	Duration float64 `json:"duration"`
	Detail   struct {
		Events  int     `json:"events"`
		Calls   int     `json:"calls"`
		FetchMs float64 `json:"fetchMs"`
		BuildMs float64 `json:"buildMs"`
	} `json:"detail"`
}

func measures(tb *tab, name string) []measure {
	tb.t.Helper()
	var out []measure
	raw := eval[string](tb, `JSON.stringify(performance.getEntriesByName(`+jsString(name)+`).map(m => ({startTime: m.startTime, duration: m.duration, detail: m.detail})))`)
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		tb.t.Fatal(err)
	}
	return out
}

// TestThousandAgentRun opens a 1,000-agent run and sends the page a burst
// of 3,000 call events (a start, a progress and an end for each agent) on
// the server's event stream. The page stays light (a windowed list) and
// responsive, and the log reports what rendering and applying cost in the
// browser. The figures are measured with performance.now() in the page;
// they vary with the machine's load, so they are reported, not asserted.
func TestThousandAgentRun(t *testing.T) {
	s := newServer(t, simulate.Config{MinLatency: 2 * time.Millisecond, MaxLatency: 20 * time.Millisecond})
	tb := newTab(t)
	tb.navigate(s.link(""))
	tb.waitFor("the list, live", `document.body.dataset.conn === "live"`)

	// Live: the page follows the run as it happens.
	eval[bool](tb, `performance.clearMeasures("dynworkflow.apply"), true`)
	resp, err := s.client.Start(t.Context(), startRequest(thousandScript, 256))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.RunID
	tb.do(evalVoid(`location.hash = "#run=" + ` + jsString(id)))
	tb.waitFor("the run view", `document.querySelector('.view-run .phase')`)
	tb.waitFor("the run completed on the page", `document.querySelector('.run-sub .badge')?.textContent === "completed"`)
	d := s.waitStatus(id, "completed")
	if len(d.Calls) != 1000 {
		t.Fatalf("%d calls", len(d.Calls))
	}
	events, frames, total, longest, _ := applyStats(measures(tb, "dynworkflow.apply"))
	t.Logf("live 1,000-agent run: %d events applied in %d frames, %.1f ms of script in all, longest frame %.1f ms",
		events, frames, total, longest)

	// The page orders calls as the engine does (numbers as numbers): a
	// shuffled list of the run's paths sorts back into the detail's order.
	paths := make([]string, len(d.Calls))
	for i, c := range d.Calls {
		paths[i] = c.Path
	}
	want, _ := json.Marshal(paths)
	got := eval[string](tb, `import("/assets/format.js").then(f => {
		const p = `+string(want)+`;
		for (let i = p.length - 1; i > 0; i--) { const j = (i * 7919) % (i + 1); [p[i], p[j]] = [p[j], p[i]]; }
		return JSON.stringify(p.sort(f.comparePaths));
	})`)
	if got != string(want) {
		t.Errorf("the page sorts the run's calls differently from the engine")
	}

	// A fresh load of the finished run.
	tb.navigate("about:blank")
	tb.navigate(s.link(id))
	tb.waitFor("the run rendered", `performance.getEntriesByName("dynworkflow.render-run").length > 0`)
	render := measures(tb, "dynworkflow.render-run")[0]
	rows := eval[int](tb, `document.querySelectorAll('.agent-row').length`)
	if render.Detail.Calls != 1000 || rows == 0 || rows > 200 {
		t.Fatalf("rendered %d calls as %d rows; want 1,000 calls in a windowed list", render.Detail.Calls, rows)
	}
	t.Logf("render 1,000 agents: %.1f ms from the detail's arrival to the next frame (fetch %.1f ms, DOM build %.1f ms), %d rows in the DOM",
		render.Duration, render.Detail.FetchMs, render.Detail.BuildMs, rows)
	// The timeline, a click away, draws every call.
	eval[bool](tb, `performance.clearMeasures("dynworkflow.render-timeline"), true`)
	tb.click(`.view-switch [data-show=timeline]`)
	tb.waitFor("the timeline drawn", `performance.getEntriesByName("dynworkflow.render-timeline").some(m => m.detail.bars === 1000)`)
	var drawn []measure
	if err := json.Unmarshal([]byte(eval[string](tb, `JSON.stringify(performance.getEntriesByName("dynworkflow.render-timeline")
		.filter(m => m.detail.bars === 1000).map(m => ({startTime: m.startTime, duration: m.duration})))`)), &drawn); err != nil {
		t.Fatal(err)
	}
	t.Logf("timeline of 1,000 agents: drawn in %.1f ms (layout and canvas), %d bars", drawn[0].Duration, 1000)
	// A zoom redraws it all.
	eval[bool](tb, `performance.clearMeasures("dynworkflow.render-timeline"), true`)
	tb.click(`.tl-zoom button[aria-label="Zoom in"]`)
	tb.waitFor("the zoomed timeline", `performance.getEntriesByName("dynworkflow.render-timeline").length > 0`)
	zoom := eval[float64](tb, `performance.getEntriesByName("dynworkflow.render-timeline")[0].duration`)
	t.Logf("timeline of 1,000 agents: a zoom redraws in %.1f ms", zoom)
	tb.click(`.tl-zoom button[aria-label="Fit the whole run"]`)
	tb.waitFor("the whole run again", `!document.querySelector('.tl-range').textContent.includes("shown of")`)
	tb.screenshot(artifacts(t), "thousand-agents-timeline.png")
	tb.click(`.view-switch [data-show=list]`)

	// The burst: what a live run of these agents would send, all at once.
	eval[bool](tb, `performance.clearMeasures("dynworkflow.apply"), true`)
	bus := s.rt.Events()
	usage := &executors.Usage{InputTokens: 10, OutputTokens: 5}
	for _, c := range d.Calls {
		bus.Publish(id, engine.EventCallStarted, engine.CallPayload{Path: c.Path, Label: c.Label, Phase: c.Phase, Executor: "simulate"})
	}
	for _, c := range d.Calls {
		bus.Publish(id, engine.EventCallProgress, engine.ProgressPayload{Path: c.Path, Progress: executors.Progress{Usage: usage}})
	}
	for _, c := range d.Calls {
		bus.Publish(id, engine.EventCallFinished, engine.CallPayload{Path: c.Path, Label: c.Label, Phase: c.Phase, Usage: usage})
	}
	tb.waitFor("3,000 events applied", `performance.getEntriesByName("dynworkflow.apply").reduce((n, m) => n + m.detail.events, 0) >= 3000`)
	events, frames, total, longest, span := applyStats(measures(tb, "dynworkflow.apply"))
	t.Logf("apply a burst of %d events: %.1f ms of script in %d frames (longest frame %.1f ms), %.1f ms from the first batch to the last applied",
		events, total, frames, longest, span)

	// Still responsive: an agent near the end opens at once, and the view
	// settles back on the server's truth.
	tb.do(evalVoid(`window.scrollTo(0, document.body.scrollHeight)`))
	tb.waitFor("the last agents in view", `[...document.querySelectorAll('.agent-row .a-name')].some(e => e.textContent === "report-249")`)
	start := time.Now()
	tb.click(`.agent-row[data-path="` + d.Calls[999].Path + `"]`)
	tb.waitFor("its panel", `document.querySelector('.agent-panel')?.dataset.path === `+jsString(d.Calls[999].Path))
	t.Logf("open the 1,000th agent's panel after the burst: %s (including the test's round trips)", time.Since(start).Round(time.Millisecond))
	tb.screenshot(artifacts(t), "thousand-agents-laptop-light.png")
	tb.waitFor("every phase done", `[...document.querySelectorAll('.phase-counts')].every(e => e.textContent === "250 agents · 250 done")`)
}

// applyStats sums the page's apply measures: events, frames, script time,
// the longest frame's, and the time from the first to the end of the last.
func applyStats(ms []measure) (events, frames int, total, longest, span float64) {
	for _, m := range ms {
		events += m.Detail.Events
		frames++
		total += m.Duration
		longest = max(longest, m.Duration)
	}
	if len(ms) > 0 {
		span = ms[len(ms)-1].Start + ms[len(ms)-1].Duration - ms[0].Start
	}
	return events, frames, total, longest, span
}
