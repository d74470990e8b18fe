// Package metrics counts what a runtime does, for Prometheus: runs by
// status, agent calls started, finished, failed, retried and replayed by
// executor and model, tokens and cost, how long calls waited for a worker
// and ran, journal fsync latency, event-stream clients, checkpoint waits.
//
// Counts come from the engine's event bus, as the dashboard's do, so they
// follow whatever path the engine takes; the run totals are read from the
// runtime's listing when scraped, so that runs older than this process
// count too. The server serves them at /metrics in the Prometheus text
// format, behind its bearer token.
//
// It is built on prometheus/client_golang rather than the OpenTelemetry
// SDK's Prometheus exporter: that exporter is a bridge onto the same
// library plus the OpenTelemetry metric SDK, more code in every binary
// for the same text.
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dynworkflow/dynworkflow/engine"
)

// maxModels bounds the model label: a model name comes from a script,
// which must not be able to grow the server's memory without bound. Calls
// on models past the first maxModels count under "other".
const maxModels = 64

// durationBuckets suit agent calls: seconds to an hour.
var durationBuckets = []float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// Metrics holds a runtime's counters.
type Metrics struct {
	reg *prometheus.Registry

	started, finished, failed, replayed *prometheus.CounterVec
	retried                             *prometheus.CounterVec
	tokens, cost                        *prometheus.CounterVec
	queueWait, duration                 *prometheus.HistogramVec
	fsync                               prometheus.Histogram
	checkpointWait                      prometheus.Histogram

	mu     sync.Mutex
	models map[string]bool
	// calls are the running calls' labels, by run and path: the events
	// after call.started do not all repeat them.
	calls map[callKey]labels
}

type callKey struct{ run, path string }

type labels struct{ executor, model string }

// New returns counters at zero, with the Go runtime's and the process's
// own metrics beside them.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	call := []string{"executor", "model"}
	m := &Metrics{
		reg: reg,
		started: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynworkflow_calls_started_total",
			Help: "Agent calls started on an executor."}, call),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynworkflow_calls_finished_total",
			Help: "Agent calls that finished with an answer."}, call),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynworkflow_calls_failed_total",
			Help: "Agent calls that ended without an answer, by failure class."}, append(call, "class")),
		retried: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynworkflow_calls_retried_total",
			Help: "Attempts that failed and were tried again: transient failures and schema repairs."}, append(call, "class")),
		replayed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynworkflow_calls_replayed_total",
			Help: "Agent calls answered from the journal by a resume, at no cost."}, []string{"executor"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynworkflow_tokens_total",
			Help: "Tokens of live attempts; kind is input (cached included), cached_input or output."}, append(call, "kind")),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynworkflow_cost_usd_total",
			Help: "Cost of live attempts in US dollars, where the executor reports it."}, call),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "dynworkflow_call_queue_wait_seconds",
			Help:    "How long an agent call waited for a free worker under the run's concurrency.",
			Buckets: []float64{0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800}}, []string{"executor"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "dynworkflow_call_duration_seconds",
			Help: "How long an agent call ran, retries included, by outcome.", Buckets: durationBuckets}, append(call, "outcome")),
		fsync: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "dynworkflow_journal_fsync_seconds",
			Help:    "Latency of the journal's fdatasync: what every finished call waits for before the script sees it.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1}}),
		checkpointWait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "dynworkflow_checkpoint_wait_seconds",
			Help: "How long a checkpoint waited for its answer.", Buckets: durationBuckets}),
		models: map[string]bool{},
		calls:  map[callKey]labels{},
	}
	reg.MustRegister(m.started, m.finished, m.failed, m.retried, m.replayed, m.tokens, m.cost, m.queueWait,
		m.duration, m.fsync, m.checkpointWait,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveFsync records one journal fdatasync (engine.Config.ObserveFsync).
func (m *Metrics) ObserveFsync(d time.Duration) { m.fsync.Observe(d.Seconds()) }

// Runs exports the number of runs by status, read from list when scraped.
func (m *Metrics) Runs(list func() map[string]int) {
	m.reg.MustRegister(&runsCollector{list: list, desc: prometheus.NewDesc("dynworkflow_runs",
		"Runs of the project by status, as the runtime lists them.", []string{"status"}, nil)})
}

// StreamClients exports the number of open event streams (SSE clients).
func (m *Metrics) StreamClients(n func() int64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "dynworkflow_sse_clients",
		Help: "Event streams open: dashboards and attached CLIs."}, func() float64 { return float64(n()) }))
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Follow counts the events of bus from now on. It counts as the events
// are published, on the publisher's goroutine (a counter's increment is
// cheaper than a channel send), so that nothing is ever lost or late and
// no goroutine is left to stop: the subscription delivers nothing.
func (m *Metrics) Follow(bus *engine.Bus) {
	bus.Subscribe(1, func(ev engine.Event) bool {
		switch ev.Type {
		case engine.EventCallStarted, engine.EventCallFinished, engine.EventCallFailed, engine.EventCallRetry,
			engine.EventCallReplayed, engine.EventCheckpoint, engine.EventRunStatus:
			m.count(ev)
		}
		return false
	})
}

// model is the model label of a call: "" when the call named none and its
// executor's default answered, "other" past maxModels distinct names.
func (m *Metrics) model(name string) string {
	if name == "" || m.models[name] {
		return name
	}
	if len(m.models) >= maxModels {
		return "other"
	}
	m.models[name] = true
	return name
}

func (m *Metrics) count(ev engine.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch p := ev.Payload.(type) {
	case engine.CallPayload:
		key := callKey{ev.RunID, p.Path}
		switch ev.Type {
		case engine.EventCallStarted:
			l := labels{p.Executor, m.model(p.Model)}
			m.calls[key] = l
			m.started.WithLabelValues(l.executor, l.model).Inc()
			m.queueWait.WithLabelValues(l.executor).Observe(float64(p.QueuedMs) / 1e3)
		case engine.EventCallReplayed:
			m.replayed.WithLabelValues(p.Executor).Inc()
		case engine.EventCallRetry:
			l := m.calls[key]
			m.retried.WithLabelValues(l.executor, l.model, p.Class).Inc()
		case engine.EventCallFinished, engine.EventCallFailed:
			l, ok := m.calls[key]
			if !ok {
				l = labels{p.Executor, ""}
			}
			delete(m.calls, key)
			outcome := "finished"
			if ev.Type == engine.EventCallFailed {
				outcome = "failed"
				m.failed.WithLabelValues(l.executor, l.model, p.Class).Inc()
			} else {
				m.finished.WithLabelValues(l.executor, l.model).Inc()
			}
			m.duration.WithLabelValues(l.executor, l.model, outcome).Observe(float64(p.DurationMs) / 1e3)
			if u := p.Usage; u != nil {
				m.tokens.WithLabelValues(l.executor, l.model, "input").Add(float64(u.InputTokens))
				m.tokens.WithLabelValues(l.executor, l.model, "cached_input").Add(float64(u.CachedInputTokens))
				m.tokens.WithLabelValues(l.executor, l.model, "output").Add(float64(u.OutputTokens))
				if u.CostUSD > 0 {
					m.cost.WithLabelValues(l.executor, l.model).Add(u.CostUSD)
				}
			}
		}
	case engine.CheckpointPayload:
		if p.Source != "journal" {
			m.checkpointWait.Observe(float64(p.WaitedMs) / 1e3)
		}
	case engine.StatusPayload:
		// The execution ended: what it left running never finishes.
		for k := range m.calls {
			if k.run == ev.RunID {
				delete(m.calls, k)
			}
		}
	}
}

// runsCollector reads the run totals when scraped.
type runsCollector struct {
	list func() map[string]int
	desc *prometheus.Desc
}

func (c *runsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *runsCollector) Collect(ch chan<- prometheus.Metric) {
	for status, n := range c.list() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), status)
	}
}
