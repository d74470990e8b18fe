package proc

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStart runs /bin/true per iteration, with a prompt on its
// standard input and its output read, as an agent is run: through Run
// (process group, registry entry, output split into lines), and with a
// bare os/exec for scale. cpu-µs/call is our own CPU time per call (not
// the child's), which a loaded machine changes far less than the wall
// time.
func BenchmarkStart(b *testing.B) {
	prompt := []byte("a prompt\n")
	b.Run("Run", func(b *testing.B) {
		reg, err := OpenRegistry(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer reg.Close()
		spec := Spec{Path: "/bin/true", Args: []string{"exec", "--json", "-"}, Dir: b.TempDir(), Stdin: prompt, Name: "bench", Registry: reg}
		if _, err := Run(context.Background(), spec, nil); err != nil {
			b.Fatal(err) // the spawner threads start outside the timing
		}
		measure(b, func() error {
			_, err := Run(context.Background(), spec, func([]byte) {})
			return err
		})
	})
	b.Run("os-exec", func(b *testing.B) {
		dir := b.TempDir()
		measure(b, func() error {
			cmd := exec.Command("/bin/true", "exec", "--json", "-")
			cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = dir, bytes.NewReader(prompt), io.Discard, io.Discard
			return cmd.Run()
		})
	})
}

// measure runs call per iteration and reports our CPU and wall time per
// call.
func measure(b *testing.B, call func() error) {
	b.ReportAllocs()
	before := cpuTime()
	for b.Loop() {
		if err := call(); err != nil {
			b.Fatal(err)
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
