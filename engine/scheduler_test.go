//go:build linux

package engine

import (
	"context"
	"encoding/json"
	"fmt"
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

// gate is an executor whose calls each wait until `want` of them run at
// once: a scheduler that never reaches its cap leaves them waiting until
// the patience runs out, and the call fails. The first call of a run is a
// warm-up that answers at once, since the bug this guards against only
// shows once a worker has parked.
type gate struct {
	want     int
	patience time.Duration

	mu      sync.Mutex
	running int
	peak    int
	opened  bool
	full    chan struct{}
}

func newGate(want int) *gate {
	return &gate{want: want, patience: 10 * time.Second, full: make(chan struct{})}
}

func (g *gate) Name() string { return "gate" }

func (g *gate) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	if req.Prompt == "warm-up" {
		return executors.Result{Text: "warm"}, nil
	}
	g.mu.Lock()
	g.running++
	g.peak = max(g.peak, g.running)
	if g.running == g.want && !g.opened {
		g.opened = true
		close(g.full)
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.running--
		g.mu.Unlock()
	}()
	select {
	case <-g.full:
		return executors.Result{Text: "ok"}, nil
	case <-time.After(g.patience):
		return executors.Result{}, &executors.Error{Class: executors.Terminal,
			Message: fmt.Sprintf("only %d calls ran at once, want %d", g.peak, g.want)}
	case <-ctx.Done():
		return executors.Result{}, ctx.Err()
	}
}

const gateScript = `export const meta = { name: 'burst', description: 'a warm-up call, then a burst' }
await agent('warm-up')
const out = await parallel(Array.from({ length: args.n }, (_, i) => () => agent('task ' + i)))
return out.filter(x => x === 'ok').length
`

func newGateRuntime(t testing.TB, exec executors.Executor) (*Runtime, lang.Script) {
	t.Helper()
	cwd := t.TempDir()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), cwd)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(Config{Store: st, Hosts: lang.NewRegistry(jsvm.New()), Executors: executors.NewSet(exec), Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	script, err := rt.Hosts().Load(lang.Source{Path: filepath.Join(cwd, "burst.workflow.js"), Text: []byte(gateScript)})
	if err != nil {
		t.Fatal(err)
	}
	return rt, script
}

// The cap must be reached as well as respected: a burst of calls after a
// warm-up runs `concurrency` of them at once, never more.
func TestSchedulerReachesItsCap(t *testing.T) {
	for _, tc := range []struct{ n, concurrency int }{
		{16, 16}, // exactly the cap
		{40, 8},  // more calls than workers: the cap is reached, not passed
		{3, 16},  // fewer calls than workers
	} {
		t.Run(fmt.Sprintf("%d calls at %d", tc.n, tc.concurrency), func(t *testing.T) {
			g := newGate(min(tc.n, tc.concurrency))
			rt, script := newGateRuntime(t, g)
			opts := DefaultOptions()
			opts.Executor, opts.Concurrency = "gate", tc.concurrency
			r, err := rt.Start(context.Background(), StartRequest{Script: script, Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, tc.n)), Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			o, err := r.Wait(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if g.peak != min(tc.n, tc.concurrency) {
				t.Fatalf("at most %d calls ran at once, want %d", g.peak, min(tc.n, tc.concurrency))
			}
			if o.Status != StatusCompleted || string(o.Result) != fmt.Sprint(tc.n) {
				t.Fatalf("status %s, result %s, error %q: want all %d calls answered", o.Status, o.Result, o.Error, tc.n)
			}
		})
	}
}

// sleeper answers after a fixed time and records when each call started.
type sleeper struct {
	d      time.Duration
	mu     sync.Mutex
	starts []time.Time
}

func (s *sleeper) Name() string { return "sleeper" }

func (s *sleeper) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	if req.Prompt == "warm-up" {
		return executors.Result{Text: "warm"}, nil
	}
	s.mu.Lock()
	s.starts = append(s.starts, time.Now())
	s.mu.Unlock()
	select {
	case <-time.After(s.d):
		return executors.Result{Text: "ok"}, nil
	case <-ctx.Done():
		return executors.Result{}, ctx.Err()
	}
}

// BenchmarkBurstAfterWarmup is the figure: a warm-up call, then 16
// calls of 200 ms at concurrency 16. A scheduler that reaches its cap
// finishes the burst in a little over 200 ms; one that wakes a single
// worker per burst takes 16 × 200 ms. It reports the wall time per run
// (mean and worst) and the start latency of the burst's calls: how long
// after the burst's first call each of the others started (p50, p99, max).
func BenchmarkBurstAfterWarmup(b *testing.B) {
	const n, conc = 16, 16
	s := &sleeper{d: 200 * time.Millisecond}
	rt, script := newGateRuntime(b, s)
	opts := DefaultOptions()
	opts.Executor, opts.Concurrency = "sleeper", conc
	var walls []time.Duration
	var spreads []time.Duration
	for b.Loop() {
		s.mu.Lock()
		s.starts = s.starts[:0]
		s.mu.Unlock()
		t0 := time.Now()
		r, err := rt.Start(context.Background(), StartRequest{Script: script, Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), Options: opts})
		if err != nil {
			b.Fatal(err)
		}
		o, err := r.Wait(context.Background())
		if err != nil || o.Status != StatusCompleted || string(o.Result) != fmt.Sprint(n) {
			b.Fatalf("run: %v %s %s %s", err, o.Status, o.Result, o.Error)
		}
		walls = append(walls, time.Since(t0))
		s.mu.Lock()
		first := slices.MinFunc(s.starts, time.Time.Compare)
		for _, st := range s.starts {
			spreads = append(spreads, st.Sub(first))
		}
		s.mu.Unlock()
	}
	slices.Sort(walls)
	slices.Sort(spreads)
	var sum time.Duration
	for _, w := range walls {
		sum += w
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	b.ReportMetric(ms(sum/time.Duration(len(walls))), "wall-ms/run")
	b.ReportMetric(ms(walls[len(walls)-1]), "worst-wall-ms")
	b.ReportMetric(ms(spreads[len(spreads)/2]), "start-p50-ms")
	b.ReportMetric(ms(spreads[len(spreads)*99/100]), "start-p99-ms")
	b.ReportMetric(ms(spreads[len(spreads)-1]), "start-max-ms")
	b.ReportMetric(0, "ns/op")
}
