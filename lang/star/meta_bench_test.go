package star

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Reading the meta is linear in its size, even all on one line: 100,000
// phases, 100,000 keys, or 40,000 string concatenations load in well
// under a second (the target is 1 s).
func BenchmarkMetaPhasesOneLine(b *testing.B) {
	var s strings.Builder
	s.WriteString(`meta = {"name": "big", "description": "d", "phases": [`)
	for i := range 100_000 {
		fmt.Fprintf(&s, `{"title": "phase %d"},`, i)
	}
	s.WriteString("]}\ndef main(args):\n    return 1\n")
	benchLoad(b, s.String())
}

func BenchmarkMetaKeys(b *testing.B) {
	var s strings.Builder
	s.WriteString(`meta = {"name": "big", "description": "d", `)
	for i := range 100_000 {
		fmt.Fprintf(&s, `"k%d": 1, `, i)
	}
	s.WriteString("}\ndef main(args):\n    return 1\n")
	benchLoad(b, s.String())
}

func BenchmarkMetaConcatenations(b *testing.B) {
	benchLoad(b, `meta = {"name": "big", "description": `+strings.Repeat(`"ab" + `, 40_000)+`"end"}`+"\ndef main(args):\n    return 1\n")
}

// benchLoad reports the wall time and the CPU time of a load: on a busy
// machine the second is the one to read.
func benchLoad(b *testing.B, text string) {
	h := New()
	cpu0 := processCPU()
	for b.Loop() {
		if _, err := h.Load(lang.Source{Path: "big.workflow.star", Text: []byte(text)}); err != nil {
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
