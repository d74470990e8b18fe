package jsvm

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Reading the meta is linear in its size, even all on one line: 100,000
// phases on one line, or 40,000 string concatenations, load in well under
// a second (the target is 1 s).
func BenchmarkMetaPhasesOneLine(b *testing.B) {
	benchLoad(b, func(n int) string {
		var s strings.Builder
		s.WriteString("export const meta = { name: 'big', description: 'd', phases: [")
		for i := range n {
			fmt.Fprintf(&s, "{ title: 'phase %d' },", i)
		}
		s.WriteString("] }\nreturn 1\n")
		return s.String()
	}, phasesN)
}

func BenchmarkMetaConcatenations(b *testing.B) {
	benchLoad(b, func(n int) string {
		return "export const meta = { name: 'big', description: " + strings.Repeat("'ab' + ", n) + "'end' }\nreturn 1\n"
	}, concatN)
}

// benchLoad reports the wall time and the CPU time of a load: on a busy
// machine the second is the one to read.
func benchLoad(b *testing.B, script func(n int) string, n int) {
	text := []byte(script(n))
	h := New()
	cpu0 := processCPU()
	for b.Loop() {
		if _, err := h.Load(lang.Source{Path: "big.workflow.js", Text: text}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/load")
	b.ReportMetric(float64((processCPU()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/load")
}

// processCPU is the user and system time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var concatN, phasesN = 40_000, 100_000
