package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dynworkflow/dynworkflow/lang"
)

// BenchmarkListHugeLastLine is Runtime.List over one finished run whose
// journal ends with a 20 MB line: its end record, holding the 20 MB string
// the run returned. Reading the last line was quadratic (18 s per list);
// the target is under 50 ms.
func BenchmarkListHugeLastLine(b *testing.B) {
	e := newBenchEnv(b)
	script, err := e.rt.Hosts().Load(lang.Source{Path: filepath.Join(b.TempDir(), "big.workflow.js"), Text: []byte(
		"export const meta = { name: 'big', description: 'a 20 MB result' }\nawait agent('one call')\nreturn 'x'.repeat(20e6)\n")})
	if err != nil {
		b.Fatal(err)
	}
	r, err := e.rt.Start(context.Background(), StartRequest{Script: script, Options: benchOptions(1, 1)})
	e.checked(b, r, err, 1, 0)
	cpu0 := benchCPU(b)
	for b.Loop() {
		sums, err := e.rt.List()
		if err != nil || len(sums) != 1 || sums[0].Status != string(StatusCompleted) {
			b.Fatalf("list: %+v, %v", sums, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/list")
	b.ReportMetric(float64((benchCPU(b)-cpu0).Nanoseconds())/1e6/float64(b.N), "cpu-ms/list")
}
