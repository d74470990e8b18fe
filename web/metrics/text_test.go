package metrics

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
)

// scrapeText serves m over HTTP and parses the answer with Prometheus's
// own text parser: what a scraper would make of it.
func scrapeText(t *testing.T, m *Metrics) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != contentType {
		t.Errorf("Content-Type %q, want %q", ct, contentType)
	}
	text, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("not the Prometheus text format: %v\n%s", err, text)
	}
	return fams, string(text)
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// finished is a call's events from its start to its answer.
func finished(run, path, executor, model string, ms int64, usage *tokens) []engine.Event {
	return []engine.Event{
		{Type: engine.EventCallStarted, RunID: run, Payload: engine.CallPayload{Path: path, Executor: executor, Model: model, QueuedMs: 20}},
		{Type: engine.EventCallFinished, RunID: run, Payload: engine.CallPayload{Path: path, Executor: executor, DurationMs: ms, Usage: usage.usage()}},
	}
}

// tokens is the usage a finished call reports; nil reports none.
type tokens struct{ in, out int64 }

func (e *tokens) usage() *executors.Usage {
	if e == nil {
		return nil
	}
	return &executors.Usage{InputTokens: e.in, OutputTokens: e.out}
}

func TestTextFormat(t *testing.T) {
	hostile := "evil\"} 1\nfake_metric 9\\"
	cases := []struct {
		name   string
		events []engine.Event
		check  func(t *testing.T, fams map[string]*dto.MetricFamily)
	}{
		{
			name:   "a model name cannot break out of its label",
			events: finished("r1", "0", "codex", hostile, 1500, &tokens{in: 10, out: 2}),
			check: func(t *testing.T, fams map[string]*dto.MetricFamily) {
				if _, ok := fams["fake_metric"]; ok {
					t.Fatal("a label value wrote a series of its own")
				}
				ms := fams["dynworkflow_calls_started_total"].GetMetric()
				if len(ms) != 1 || labelsOf(ms[0])["model"] != hostile {
					t.Fatalf("model label %q, want %q", labelsOf(ms[0])["model"], hostile)
				}
			},
		},
		{
			name: "histogram buckets are cumulative, le inclusive, with sum and count",
			events: append(append(finished("r1", "0", "codex", "m", 500, nil), finished("r1", "1", "codex", "m", 1000, nil)...),
				finished("r1", "2", "codex", "m", 7200_000, nil)...),
			check: func(t *testing.T, fams map[string]*dto.MetricFamily) {
				ms := fams["dynworkflow_call_duration_seconds"].GetMetric()
				if len(ms) != 1 {
					t.Fatalf("%d series, want 1", len(ms))
				}
				h := ms[0].GetHistogram()
				if h.GetSampleCount() != 3 || h.GetSampleSum() != 0.5+1+7200 {
					t.Fatalf("count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
				}
				want := map[float64]uint64{0.1: 0, 0.5: 1, 1: 2, 3600: 2}
				for _, b := range h.GetBucket() {
					if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
						t.Errorf("le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
					}
				}
			},
		},
		{
			name:   "series of a family are told apart by every label",
			events: append(finished("r1", "0", "codex", "a b", 10, &tokens{in: 1}), finished("r1", "1", "codex b", "a", 10, &tokens{in: 2})...),
			check: func(t *testing.T, fams map[string]*dto.MetricFamily) {
				got := map[string]float64{}
				for _, m := range fams["dynworkflow_tokens_total"].GetMetric() {
					l := labelsOf(m)
					if l["kind"] == "input" {
						got[l["executor"]+"|"+l["model"]] = m.GetCounter().GetValue()
					}
				}
				if got["codex|a b"] != 1 || got["codex b|a"] != 2 {
					t.Fatalf("input tokens by series: %v", got)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := New()
			for _, ev := range c.events {
				m.count(ev)
			}
			fams, _ := scrapeText(t, m)
			c.check(t, fams)
		})
	}
}

func TestProcessFigures(t *testing.T) {
	m := New()
	m.Runs(func() map[string]int { return map[string]int{"completed": 2, "paused": 1} })
	m.StreamClients(func() int64 { return 3 })
	m.ObserveFsync(3 * time.Millisecond)
	fams, text := scrapeText(t, m)
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total",
		"process_resident_memory_bytes", "process_open_fds", "process_start_time_seconds", "go_threads"} {
		f := fams[name]
		if f == nil || len(f.GetMetric()) != 1 {
			t.Errorf("%s missing:\n%s", name, text)
			continue
		}
		m := f.GetMetric()[0]
		if v := m.GetGauge().GetValue() + m.GetCounter().GetValue(); v <= 0 {
			t.Errorf("%s = %v", name, v)
		}
	}
	if start := fams["process_start_time_seconds"].GetMetric()[0].GetGauge().GetValue(); start > float64(time.Now().Unix())+1 ||
		start < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("process_start_time_seconds %v is not this test's start", start)
	}
	runs := map[string]float64{}
	for _, m := range fams["dynworkflow_runs"].GetMetric() {
		runs[labelsOf(m)["status"]] = m.GetGauge().GetValue()
	}
	if runs["completed"] != 2 || runs["paused"] != 1 {
		t.Errorf("dynworkflow_runs %v", runs)
	}
	if v := fams["dynworkflow_sse_clients"].GetMetric()[0].GetGauge().GetValue(); v != 3 {
		t.Errorf("dynworkflow_sse_clients %v", v)
	}
	if c := fams["dynworkflow_journal_fsync_seconds"].GetMetric()[0].GetHistogram().GetSampleCount(); c != 1 {
		t.Errorf("fsync count %d", c)
	}
}
