package proc

import (
	"context"
	"testing"
)

// BenchmarkStart runs /bin/true per iteration: what starting, watching and
// reaping one child costs beside its fork and exec.
func BenchmarkStart(b *testing.B) {
	reg, err := OpenRegistry(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		ex, err := Run(context.Background(), Spec{Path: "/bin/true", Stdin: []byte("prompt"), Registry: reg}, nil)
		if err != nil || ex.Code != 0 {
			b.Fatal(ex, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/call")
}
