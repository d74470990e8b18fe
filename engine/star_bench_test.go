//go:build linux

package engine

import (
	"path/filepath"
	"testing"

	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// benchStarFanoutText is benchFanoutText in Starlark: the same args.n
// calls with the same prompts in one parallel().
const benchStarFanoutText = `meta = {"name": "bench-fanout", "description": "args.n agent calls in one parallel()"}

def main(args):
    n = args["n"]
    results = parallel(range(n), lambda i: agent("task %d" % i))
    answered = len([r for r in results if r != None])
    if answered != n:
        fail("only %d of %d calls answered" % (answered, n))
    return answered
`

// newStarBenchEnv is newBenchEnv with the Starlark fan-out script, on a
// runtime that knows both languages.
func newStarBenchEnv(tb testing.TB) *benchEnv {
	tb.Helper()
	e := newBenchEnv(tb)
	rt, err := New(Config{
		Store: e.rt.store, Hosts: lang.NewRegistry(jsvm.New(), star.New()),
		Executors: e.rt.cfg.Executors, Cwd: e.rt.cfg.Cwd,
	})
	if err != nil {
		tb.Fatal(err)
	}
	script, err := rt.Hosts().Load(lang.Source{Path: filepath.Join(e.rt.cfg.Cwd, "bench-fanout.workflow.star"), Text: []byte(benchStarFanoutText)})
	if err != nil {
		tb.Fatal(err)
	}
	return &benchEnv{rt: rt, script: script, runs: e.runs}
}

// BenchmarkStarVsJSParallelNoop1000 runs the 1,000-call parallel() of
// BenchmarkParallelNoop1000 in both languages, alternating, on the no-op
// executor, and reports the engine's CPU per call for each and their ratio
// (target: Starlark within 2x of JavaScript). The journal's fsyncs are the
// same for both, so they are left in.
func BenchmarkStarVsJSParallelNoop1000(b *testing.B) {
	const n = 1000
	conc := DefaultConcurrency
	js, st := newBenchEnv(b), newStarBenchEnv(b)
	js.start(b, n, conc) // warm up both
	st.start(b, n, conc)
	var jsCPU, starCPU float64
	runs := 0
	for b.Loop() {
		c0 := benchCPU(b)
		js.start(b, n, conc)
		c1 := benchCPU(b)
		st.start(b, n, conc)
		c2 := benchCPU(b)
		jsCPU += float64((c1 - c0).Nanoseconds())
		starCPU += float64((c2 - c1).Nanoseconds())
		runs++
	}
	calls := float64(runs * n)
	b.ReportMetric(jsCPU/1e3/calls, "js-cpu-µs/call")
	b.ReportMetric(starCPU/1e3/calls, "star-cpu-µs/call")
	b.ReportMetric(starCPU/jsCPU, "star/js")
}

// TestStarFanoutBench keeps the benchmark's Starlark script honest where
// benchmarks are not run: it must complete with every call answered.
func TestStarFanoutBench(t *testing.T) {
	e := newStarBenchEnv(t)
	e.start(t, 50, 4)
}
