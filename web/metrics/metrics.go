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
// It writes the Prometheus text format itself (text.go) rather than link
// prometheus/client_golang: that library and the protobuf runtime it
// brings cost every dynworkflow process, most of which never serve a
// scrape, 3.6 MB of binary and 2.3 MB of resident memory, about 8% of the
// peak of a 1,000-agent run (bench/rss.sh). The families here are few and
// fixed; the tests parse what this package writes with Prometheus's own
// parser.
package metrics

import (
	"bytes"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

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
	mu sync.Mutex

	started, finished, failed, replayed *counterVec
	retried                             *counterVec
	tokens, cost                        *counterVec
	queueWait, duration                 *histogramVec
	fsync                               *histogramVec
	checkpointWait                      *histogramVec

	models map[string]bool
	// calls are the running calls' labels, by run and path: the events
	// after call.started do not all repeat them.
	calls map[callKey]labels

	// runs and streamClients are read when scraped; nil until set.
	runs          func() map[string]int
	streamClients func() int64
}

type callKey struct{ run, path string }

type labels struct{ executor, model string }

// New returns counters at zero. A scrape also reports the Go runtime's
// and the process's own figures.
func New() *Metrics {
	call := []string{"executor", "model"}
	return &Metrics{
		started: newCounterVec("dynworkflow_calls_started_total",
			"Agent calls started on an executor.", call...),
		finished: newCounterVec("dynworkflow_calls_finished_total",
			"Agent calls that finished with an answer.", call...),
		failed: newCounterVec("dynworkflow_calls_failed_total",
			"Agent calls that ended without an answer, by failure class.", append(call, "class")...),
		retried: newCounterVec("dynworkflow_calls_retried_total",
			"Attempts that failed and were tried again: transient failures and schema repairs.", append(call, "class")...),
		replayed: newCounterVec("dynworkflow_calls_replayed_total",
			"Agent calls answered from the journal by a resume, at no cost.", "executor"),
		tokens: newCounterVec("dynworkflow_tokens_total",
			"Tokens of live attempts; kind is input (cached included), cached_input or output.", append(call, "kind")...),
		cost: newCounterVec("dynworkflow_cost_usd_total",
			"Cost of live attempts in US dollars, where the executor reports it.", call...),
		queueWait: newHistogramVec("dynworkflow_call_queue_wait_seconds",
			"How long an agent call waited for a free worker under the run's concurrency.",
			[]float64{0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800}, "executor"),
		duration: newHistogramVec("dynworkflow_call_duration_seconds",
			"How long an agent call ran, retries included, by outcome.", durationBuckets, append(call, "outcome")...),
		fsync: newHistogramVec("dynworkflow_journal_fsync_seconds",
			"Latency of the journal's fdatasync: what every finished call waits for before the script sees it.",
			[]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1}),
		checkpointWait: newHistogramVec("dynworkflow_checkpoint_wait_seconds",
			"How long a checkpoint waited for its answer.", durationBuckets),
		models: map[string]bool{},
		calls:  map[callKey]labels{},
	}
}

// ObserveFsync records one journal fdatasync (engine.Config.ObserveFsync).
func (m *Metrics) ObserveFsync(d time.Duration) {
	m.mu.Lock()
	m.fsync.observe(d.Seconds())
	m.mu.Unlock()
}

// Runs exports the number of runs by status, read from list when scraped.
func (m *Metrics) Runs(list func() map[string]int) {
	m.mu.Lock()
	m.runs = list
	m.mu.Unlock()
}

// StreamClients exports the number of open event streams (SSE clients).
func (m *Metrics) StreamClients(n func() int64) {
	m.mu.Lock()
	m.streamClients = n
	m.mu.Unlock()
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var buf bytes.Buffer
		m.write(&buf)
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(buf.Bytes())
	})
}

// write writes every family into memory, never to the network: the lock
// it takes is the one every event's counting takes, on the goroutine that
// publishes the engine's events, and a slow scraper must not hold them up.
// The figures read from elsewhere (runs, event streams, the process) are
// read outside the lock.
func (m *Metrics) write(w *bytes.Buffer) {
	m.mu.Lock()
	runs, streamClients := m.runs, m.streamClients
	for _, c := range []*counterVec{m.started, m.finished, m.failed, m.retried, m.replayed, m.tokens, m.cost} {
		c.write(w)
	}
	for _, h := range []*histogramVec{m.queueWait, m.duration, m.fsync, m.checkpointWait} {
		h.write(w)
	}
	m.mu.Unlock()

	if runs != nil {
		byStatus := runs()
		writeHeader(w, "dynworkflow_runs", "Runs of the project by status, as the runtime lists them.", "gauge")
		for _, status := range slices.Sorted(maps.Keys(byStatus)) {
			writeSample(w, "dynworkflow_runs", statusLabel, []string{status}, "", "", float64(byStatus[status]))
		}
	}
	if streamClients != nil {
		writeGauge(w, "dynworkflow_sse_clients", "Event streams open: dashboards and attached CLIs.", float64(streamClients()))
	}
	writeProcess(w)
}

var statusLabel = []string{"status"}

// writeGauge writes a gauge family of one series without labels.
func writeGauge(w *bytes.Buffer, name, help string, v float64) {
	writeHeader(w, name, help, "gauge")
	writeSample(w, name, nil, nil, "", "", v)
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
			m.started.add(1, l.executor, l.model)
			m.queueWait.observe(float64(p.QueuedMs)/1e3, l.executor)
		case engine.EventCallReplayed:
			m.replayed.add(1, p.Executor)
		case engine.EventCallRetry:
			l := m.calls[key]
			m.retried.add(1, l.executor, l.model, p.Class)
		case engine.EventCallFinished, engine.EventCallFailed:
			l, ok := m.calls[key]
			if !ok {
				l = labels{p.Executor, ""}
			}
			delete(m.calls, key)
			outcome := "finished"
			if ev.Type == engine.EventCallFailed {
				outcome = "failed"
				m.failed.add(1, l.executor, l.model, p.Class)
			} else {
				m.finished.add(1, l.executor, l.model)
			}
			m.duration.observe(float64(p.DurationMs)/1e3, l.executor, l.model, outcome)
			if u := p.Usage; u != nil {
				m.tokens.add(float64(u.InputTokens), l.executor, l.model, "input")
				m.tokens.add(float64(u.CachedInputTokens), l.executor, l.model, "cached_input")
				m.tokens.add(float64(u.OutputTokens), l.executor, l.model, "output")
				if u.CostUSD > 0 {
					m.cost.add(u.CostUSD, l.executor, l.model)
				}
			}
		}
	case engine.CheckpointPayload:
		if p.Source != "journal" {
			m.checkpointWait.observe(float64(p.WaitedMs) / 1e3)
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
