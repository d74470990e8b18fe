//go:build linux

package engine

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
)

// BenchmarkFinishedToDurable measures the window in which a SIGKILL costs a
// finished call its answer: from the moment the executor returns the answer
// to the moment its record is on disk (the call.finished event is published
// right after the fsync). 16 calls run at once on an executor whose calls
// take 2 to 20 ms, so that they finish at scattered times, as agents do.
// Target: p99 under 20 ms on an idle machine. What bounds it: the record
// is handed to the journal as soon as the answer is checked, without
// waiting for a slot, a timer or a batch to fill; the journal writes and
// syncs whatever is pending as soon as the previous fsync returns, so a
// record waits for at most that fsync and its own (fsync-ms is the cost of
// one on the same file system); and the snapshots a running run refreshes
// every second are not fsynced, so they do not queue in front of it.
func BenchmarkFinishedToDurable(b *testing.B) {
	const n, conc = 400, 16
	exec := &stampedExec{returned: map[string]time.Time{}, rng: rand.New(rand.NewPCG(1, 2))}
	cwd := b.TempDir()
	st, err := store.Open(filepath.Join(b.TempDir(), "state"), cwd)
	if err != nil {
		b.Fatal(err)
	}
	rt, err := New(Config{Store: st, Hosts: lang.NewRegistry(jsvm.New()), Executors: executors.NewSet(exec), Cwd: cwd})
	if err != nil {
		b.Fatal(err)
	}
	script, err := rt.Hosts().Load(lang.Source{Path: filepath.Join(cwd, "bench-fanout.workflow.js"), Text: []byte(benchFanoutText)})
	if err != nil {
		b.Fatal(err)
	}
	opts := benchOptions(n, conc)
	opts.Executor = exec.Name()
	var windows []time.Duration
	for b.Loop() {
		sub := rt.Events().Subscribe(4*n, func(e Event) bool { return e.Type == EventCallFinished })
		r, err := rt.Start(context.Background(), StartRequest{Script: script, Args: json.RawMessage(`{"n":400}`), Options: opts})
		if err != nil {
			b.Fatal(err)
		}
		if o, err := r.Wait(context.Background()); err != nil || o.Status != StatusCompleted {
			b.Fatalf("run: %+v %v", o, err)
		}
		sub.Close()
		for ev := range sub.C {
			p := ev.Payload.(CallPayload)
			exec.mu.Lock()
			windows = append(windows, ev.Timestamp.Sub(exec.returned[r.ID()+p.Path]))
			exec.mu.Unlock()
		}
	}
	if len(windows) == 0 {
		b.Fatal("no call.finished events")
	}
	slices.Sort(windows)
	q := func(p float64) float64 {
		return float64(windows[min(len(windows)-1, int(p*float64(len(windows))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.9), "p90-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(float64(windows[len(windows)-1].Microseconds())/1000, "max-ms")
	// For scale: the window cannot be shorter than a write and an fsync,
	// and a record that arrives while the previous batch is being synced
	// waits for that fsync first.
	_, wall := benchSyncCost(b, st.RunsDir(), 300, 50)
	b.ReportMetric(float64(wall.Microseconds())/1000, "fsync-ms")
}

// stampedExec answers after 2 to 20 ms and notes when it returned each
// call's answer.
type stampedExec struct {
	mu       sync.Mutex
	rng      *rand.Rand
	returned map[string]time.Time // run id + call path
}

func (*stampedExec) Name() string { return "stamped" }

func (e *stampedExec) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	e.mu.Lock()
	d := time.Duration(2+e.rng.IntN(19)) * time.Millisecond
	e.mu.Unlock()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return executors.Result{}, ctx.Err()
	}
	e.mu.Lock()
	e.returned[req.RunID+req.Path] = time.Now()
	e.mu.Unlock()
	return executors.Result{Text: "ok", Usage: executors.Usage{InputTokens: 1, OutputTokens: 1}}, nil
}
