package proc

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStart runs /bin/true per iteration, with a prompt on its
// standard input, as an agent is run: what starting, watching and reaping
// one child costs us beside its fork and exec. cpu-µs/call is our own
// CPU time per call (not the child's), which a loaded machine changes far
// less than the wall time.
func BenchmarkStart(b *testing.B) {
	reg, err := OpenRegistry(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	spec := Spec{Path: "/bin/true", Args: []string{"exec", "--json", "-"}, Stdin: []byte("a prompt\n"), Name: "bench", Registry: reg}
	if _, err := Run(context.Background(), spec, nil); err != nil {
		b.Fatal(err) // the spawner threads start outside the timing
	}
	b.ReportAllocs()
	before := cpuTime()
	for b.Loop() {
		ex, err := Run(context.Background(), spec, func([]byte) {})
		if err != nil || ex.Code != 0 {
			b.Fatal(ex, err)
		}
	}
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/call")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "wall-µs/call")
}

// cpuTime is the CPU time this process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
