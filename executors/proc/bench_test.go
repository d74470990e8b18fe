package proc

import (
	"context"
	"testing"
)

// BenchmarkStart runs /bin/true per iteration, started by us and by a
// supervisor: the supervisor's cost per agent call (a message each way and
// three descriptors passed) beside a fork and exec.
func BenchmarkStart(b *testing.B) {
	for _, supervised := range []bool{false, true} {
		name := "direct"
		if supervised {
			name = "supervised"
		}
		b.Run(name, func(b *testing.B) {
			reg, err := OpenRegistry(b.TempDir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			if supervised {
				sup := NewSupervisor(nil)
				if sup == nil {
					b.Skip("no supervisor here")
				}
				defer sup.Close()
				reg.Supervise(sup)
				if _, err := Run(context.Background(), Spec{Path: "/bin/true", Registry: reg}, nil); err != nil {
					b.Fatal(err) // start the supervisor outside the timing
				}
			}
			for b.Loop() {
				ex, err := Run(context.Background(), Spec{Path: "/bin/true", Registry: reg}, nil)
				if err != nil || ex.Code != 0 {
					b.Fatal(ex, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/call")
		})
	}
}
