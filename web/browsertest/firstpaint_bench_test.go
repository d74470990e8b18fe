package browsertest_test

import (
	"slices"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// BenchmarkDashboardFirstPaint1000 opens a finished 1,000-agent run in a
// fresh page load, as a user following a link does, and reports the time
// from the navigation to the first frame that shows the run (the page's own
// dynworkflow.render-run measure ends at that frame; performance.now()
// counts from the navigation), with its parts: fetching the run's detail
// and building the view. The figures are medians over the iterations.
//
//	go test -run '^$' -bench DashboardFirstPaint1000 -benchtime 5x ./web/browsertest/
func BenchmarkDashboardFirstPaint1000(b *testing.B) {
	s := newServer(b, simulate.Config{MinLatency: 0, MaxLatency: time.Millisecond})
	tb := newTab(b)
	resp, err := s.client.Start(b.Context(), startRequest(thousandScript, 256))
	if err != nil {
		b.Fatal(err)
	}
	if d := s.waitStatus(resp.RunID, "completed"); len(d.Calls) != 1000 {
		b.Fatalf("the run made %d calls, want 1,000", len(d.Calls))
	}
	link := s.link(resp.RunID)
	var paint, fetch, build []float64
	for b.Loop() {
		tb.navigate("about:blank")
		tb.navigate(link)
		tb.waitFor("the run rendered", `performance.getEntriesByName("dynworkflow.render-run").length > 0`)
		m := measures(tb, "dynworkflow.render-run")[0]
		if m.Detail.Calls != 1000 {
			b.Fatalf("the page rendered %d calls, want 1,000", m.Detail.Calls)
		}
		paint = append(paint, m.Start+m.Duration)
		fetch = append(fetch, m.Detail.FetchMs)
		build = append(build, m.Detail.BuildMs)
	}
	b.ReportMetric(medianOf(paint), "first-paint-ms")
	b.ReportMetric(medianOf(fetch), "fetch-ms")
	b.ReportMetric(medianOf(build), "build-ms")
	b.ReportMetric(0, "ns/op")
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Sorted(slices.Values(v))
	return v[len(v)/2]
}
