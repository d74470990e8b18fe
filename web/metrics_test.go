package web_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/web"
	"github.com/dynworkflow/dynworkflow/web/metrics"
)

// metered answers with usage, failing a "flaky" prompt transiently on its
// first attempt and a "broken" one for good.
type metered struct{}

func (metered) Name() string { return "metered" }

func (metered) Run(_ context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	u := executors.Usage{InputTokens: 100, CachedInputTokens: 40, OutputTokens: 10, CostUSD: 0.25}
	switch {
	case strings.Contains(req.Prompt, "flaky") && req.Attempt == 1:
		return executors.Result{Usage: u}, &executors.Error{Class: executors.Transient, Message: "overloaded"}
	case strings.Contains(req.Prompt, "broken"):
		return executors.Result{Usage: u}, errors.New("gave up")
	}
	return executors.Result{Text: "ok", Usage: u}, nil
}

const meteredScript = `
export const meta = { name: 'metered', description: 'calls that finish, retry and fail' }
await parallel(['a', 'b'].map(n => () => agent('scan ' + n, { model: 'm1' })))
await agent('flaky fix', { model: 'm2' })
await agent('broken fix', { model: 'm2' })
return 1
`

// scrape GETs /metrics over HTTP with the token and parses the text.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return families
}

// value is the counter, gauge or histogram count of family name whose
// labels include want ("k=v" pairs), summed over the matching series.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	sum := 0.0
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for _, kv := range want {
			k, v, _ := strings.Cut(kv, "=")
			if have[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

func TestMetricsAreScrapedOverHTTP(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	rt, err := engine.New(engine.Config{Store: st, Hosts: lang.NewRegistry(jsvm.New()),
		Executors: executors.NewSet(metered{}), Cwd: dir, ObserveFsync: m.ObserveFsync})
	if err != nil {
		t.Fatal(err)
	}
	defaults := engine.DefaultOptions()
	defaults.Executor, defaults.AgentRetries, defaults.RetryBackoff = "metered", 1, time.Millisecond
	srv, err := web.New(web.Config{Runtime: rt, Token: testToken, Cwd: dir, Metrics: m, Defaults: defaults})
	if err != nil {
		t.Fatal(err)
	}
	f := serve(t, dir, rt, srv)

	// Without the token, nothing.
	if res := f.do(request{method: http.MethodGet, path: "/metrics", noToken: true}); res.status != http.StatusUnauthorized {
		t.Fatalf("GET /metrics without the token: %d", res.status)
	}

	run := f.startScript(meteredScript)
	if d := f.waitStatus(run.RunID, "completed"); d.Summary.Stats.Failed != 1 {
		t.Fatalf("run stats: %+v", d.Summary.Stats)
	}
	// The run totals come from the server's listing, at most a second old.
	waitMetric(t, f.http.URL, "dynworkflow_runs", 1, "status=completed")
	fams := scrape(t, f.http.URL)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"dynworkflow_calls_started_total", []string{"executor=metered", "model=m1"}, 2},
		{"dynworkflow_calls_started_total", []string{"executor=metered", "model=m2"}, 2},
		{"dynworkflow_calls_finished_total", []string{"executor=metered", "model=m1"}, 2},
		{"dynworkflow_calls_finished_total", []string{"executor=metered", "model=m2"}, 1},
		{"dynworkflow_calls_failed_total", []string{"executor=metered", "model=m2", "class=terminal"}, 1},
		{"dynworkflow_calls_retried_total", []string{"executor=metered", "model=m2", "class=transient"}, 1},
		// Five attempts: two scans, the flaky call twice, the broken one.
		{"dynworkflow_tokens_total", []string{"kind=input"}, 500},
		{"dynworkflow_tokens_total", []string{"kind=cached_input"}, 200},
		{"dynworkflow_tokens_total", []string{"kind=output"}, 50},
		{"dynworkflow_cost_usd_total", nil, 1.25},
		{"dynworkflow_call_queue_wait_seconds", []string{"executor=metered"}, 4},
		{"dynworkflow_call_duration_seconds", []string{"outcome=finished"}, 3},
		{"dynworkflow_call_duration_seconds", []string{"outcome=failed"}, 1},
		{"dynworkflow_sse_clients", nil, 0},
	} {
		if got := value(fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Every finished call is fsynced before the script sees it.
	if got := value(fams, "dynworkflow_journal_fsync_seconds"); got < 1 {
		t.Errorf("%v journal fsyncs observed", got)
	}
	if got := value(fams, "go_goroutines"); got <= 0 {
		t.Errorf("the Go runtime's metrics are missing")
	}

	// A stream open is an SSE client while it lasts.
	ctx, cancel := context.WithCancel(context.Background())
	streaming := make(chan error, 1)
	go func() { streaming <- f.client.Stream(ctx, 0, "", func(web.StreamEvent) error { return nil }) }()
	waitMetric(t, f.http.URL, "dynworkflow_sse_clients", 1)
	cancel()
	<-streaming
	waitMetric(t, f.http.URL, "dynworkflow_sse_clients", 0)
}

// waitMetric scrapes until the metric has the value want.
func waitMetric(t *testing.T, url, name string, want float64, labels ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := value(scrape(t, url), name, labels...)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s stayed %v, want %v", name, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
