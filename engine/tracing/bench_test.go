//go:build linux

package tracing

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
)

// instant answers every call at once.
type instant struct{}

func (instant) Name() string { return "instant" }
func (instant) Run(context.Context, executors.Request, executors.Observer) (executors.Result, error) {
	return executors.Result{Text: "ok", Usage: executors.Usage{InputTokens: 10, OutputTokens: 1}}, nil
}

// discard takes spans and drops them: the cost measured is ours and the
// SDK's, not a collector's.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

const fanout1000 = `
export const meta = { name: 'bench', description: '1,000 calls in two phases' }
const r = await parallel(Array.from({ length: 1000 }, (_, i) => () => agent('task ' + i, { label: 'a' + i, phase: i < 500 ? 'One' : 'Two' })))
return r.length
`

// BenchmarkThousandAgents runs a 1,000-call fan-out per iteration with
// tracing off (what every run pays unless asked: nothing should show) and
// on (spans built and handed to an exporter that drops them), and reports
// the CPU and wall time per call. Compare "off" with the same run of a
// build without tracing: BenchmarkParallelNoop1000 in ./engine on both.
//
//	go test -run '^$' -bench ThousandAgents ./engine/tracing/
func BenchmarkThousandAgents(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "tracing=off"
		if on {
			name = "tracing=on"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			st, err := store.Open(filepath.Join(dir, "state"), dir)
			if err != nil {
				b.Fatal(err)
			}
			rt, err := engine.New(engine.Config{Store: st, Hosts: lang.NewRegistry(jsvm.New()),
				Executors: executors.NewSet(instant{}), Cwd: dir, Tracing: on})
			if err != nil {
				b.Fatal(err)
			}
			var tr *Tracer
			if on {
				tr = newTracer(discard{}, resource.Empty(), nil)
				tr.Follow(rt.Events())
				defer func() { _ = tr.Shutdown(context.Background()) }()
			}
			script, err := rt.Hosts().Load(lang.Source{Path: filepath.Join(dir, "bench.workflow.js"), Text: []byte(fanout1000)})
			if err != nil {
				b.Fatal(err)
			}
			opts := engine.DefaultOptions()
			opts.Executor, opts.Concurrency = "instant", 16
			runOnce := func() {
				r, err := rt.Start(context.Background(), engine.StartRequest{Script: script, Options: opts})
				if err != nil {
					b.Fatal(err)
				}
				if s, err := r.Wait(context.Background()); err != nil || s.Stats.Live != 1000 {
					b.Fatalf("run: %+v %v", s.Stats, err)
				}
			}
			runOnce() // warm up
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			runs := 0
			for b.Loop() {
				runOnce()
				runs++
			}
			calls := float64(runs * 1000)
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/1e3/calls, "cpu-µs/call")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/calls, "wall-µs/call")
		})
	}
}

func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
