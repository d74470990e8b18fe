//go:build linux

package engine

import (
	"fmt"
	"testing"
	"time"
)

// The benchmarks of the performance targets. They report figures
// (b.ReportMetric) and never assert timings; they do fail when a run does
// not complete with every call answered, since the figures would then be
// meaningless. Run them with
//
//	go test -run '^$' -bench . ./engine/
//
// and see bench/README.md for the targets and the CLI side.

// BenchmarkParallelNoop1000 is one run of a 1,000-call parallel() on an
// executor that answers at once, per iteration: the engine's own cost per
// agent call (target: at most 20 µs of CPU beyond the fsync).
//
// Every finished call is fsynced before the script sees it; calls that
// finish together share one fsync (group commit), so fsyncs/call depends on
// the concurrency: at conc=1 each call waits for its own. To isolate what
// is "beyond the fsync", the benchmark also measures one bare append +
// fdatasync of a record of the same size on the same file system
// (fsync-cpu-µs, fsync-wall-µs) and subtracts fsyncs/call of them.
func BenchmarkParallelNoop1000(b *testing.B) {
	const n = 1000
	concs := []int{DefaultConcurrency}
	if concs[0] != 16 {
		concs = append(concs, 16)
	}
	for _, conc := range concs {
		b.Run(fmt.Sprintf("conc=%d", conc), func(b *testing.B) {
			e := newBenchEnv(b)
			e.start(b, n, conc) // warm up: the VM, the schema cache, the file system
			b.ReportAllocs()
			var fsyncs, journalBytes, records int64
			runs := 0
			cpu0, w0 := benchCPU(b), benchWritten()
			for b.Loop() {
				res := e.start(b, n, conc)
				fsyncs += res.journal.Fsyncs
				journalBytes += res.journal.Bytes
				records += res.journal.Records
				runs++
			}
			cpu, written := benchCPU(b)-cpu0, benchWritten()-w0
			calls := float64(runs * n)

			// What a run costs whatever its size (a VM, a lease, a journal,
			// two atomic snapshots), from runs of one call: subtracted, it
			// leaves the marginal cost of a call.
			const fixedRuns = 20
			fixed0 := benchCPU(b)
			for range fixedRuns {
				e.start(b, 1, conc)
			}
			fixedPerRun := float64((benchCPU(b) - fixed0).Nanoseconds()) / 1e3 / fixedRuns

			syncCPU, syncWall := benchSyncCost(b, e.runs, int(journalBytes/records), 200)
			perCallCPU := float64(cpu.Nanoseconds()) / 1e3 / calls
			perCallWall := float64(b.Elapsed().Nanoseconds()) / 1e3 / calls
			fsyncsPerCall := float64(fsyncs) / calls
			b.ReportMetric(perCallCPU, "cpu-µs/call")
			b.ReportMetric(perCallWall, "wall-µs/call")
			b.ReportMetric(fsyncsPerCall, "fsyncs/call")
			b.ReportMetric(float64(journalBytes)/calls, "journal-bytes/call")
			if w0 >= 0 {
				b.ReportMetric(float64(written)/calls, "bytes/call")
			}
			b.ReportMetric(float64(syncCPU.Nanoseconds())/1e3, "fsync-cpu-µs")
			b.ReportMetric(float64(syncWall.Nanoseconds())/1e3, "fsync-wall-µs")
			b.ReportMetric(perCallCPU-fsyncsPerCall*float64(syncCPU.Nanoseconds())/1e3, "cpu-beyond-fsync-µs/call")
			b.ReportMetric(perCallWall-fsyncsPerCall*float64(syncWall.Nanoseconds())/1e3, "wall-beyond-fsync-µs/call")
			b.ReportMetric(fixedPerRun, "cpu-µs/run-fixed")
			b.ReportMetric(perCallCPU-fixedPerRun/n-fsyncsPerCall*float64(syncCPU.Nanoseconds())/1e3, "cpu-marginal-beyond-fsync-µs/call")
		})
	}
}

// BenchmarkBytesPerCall runs n-call fan-outs and reports the bytes written
// per finished call (target: flat as the run grows). bytes/call counts
// every byte the process writes during the loop (journal, snapshot and its
// temp file, lease file); journal-bytes/call only the journal's. The fixed
// cost of a run (its header with the script text, the end record, the
// snapshots) is amortized over n, so n=100 pays a little more per call than
// n=1000; what must not happen is bytes/call growing with n.
func BenchmarkBytesPerCall(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			e := newBenchEnv(b)
			e.start(b, n, DefaultConcurrency)
			var journalBytes, fsyncs int64
			var snapshot int64
			runs := 0
			w0 := benchWritten()
			for b.Loop() {
				res := e.start(b, n, DefaultConcurrency)
				journalBytes += res.journal.Bytes
				fsyncs += res.journal.Fsyncs
				snapshot = benchFileSize(e.rt.store.RunPaths(res.id).Snapshot)
				runs++
			}
			written := benchWritten() - w0
			calls := float64(runs * n)
			if w0 >= 0 {
				b.ReportMetric(float64(written)/calls, "bytes/call")
			}
			b.ReportMetric(float64(journalBytes)/calls, "journal-bytes/call")
			b.ReportMetric(float64(snapshot), "snapshot-bytes")
			b.ReportMetric(float64(fsyncs)/calls, "fsyncs/call")
		})
	}
}

// BenchmarkResumeAllReplayed10000 resumes a finished 10,000-call run
// unchanged, so that every call replays from the journal (target: under
// 1 s). The run is made once, untimed; each iteration resumes it again,
// and each resume replays all 10,000 calls.
func BenchmarkResumeAllReplayed10000(b *testing.B) {
	const n = 10_000
	e := newBenchEnv(b)
	t0 := time.Now()
	first := e.start(b, n, 16)
	b.Logf("setup: %d live calls in %s, journal %.1f MB", n, time.Since(t0).Round(time.Millisecond),
		float64(benchFileSize(e.rt.store.RunPaths(first.id).Journal))/1e6)
	b.ReportAllocs()
	var fsyncs int64
	runs := 0
	cpu0 := benchCPU(b)
	for b.Loop() {
		res := e.resume(b, first.id, n)
		fsyncs += res.journal.Fsyncs
		runs++
	}
	cpu := benchCPU(b) - cpu0
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(runs), "ms/resume")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e6/float64(runs), "cpu-ms/resume")
	b.ReportMetric(float64(fsyncs)/float64(runs), "fsyncs/resume")
	b.ReportMetric(float64(benchFileSize(e.rt.store.RunPaths(first.id).Journal))/1e6, "journal-MB")
}

// BenchmarkList50x200 is Runtime.List over 50 finished runs of 200 calls
// each, in process: what `dynworkflow list` costs beyond starting the
// process (target for the CLI: under 30 ms).
func BenchmarkList50x200(b *testing.B) {
	const runs, n = 50, 200
	e := newBenchEnv(b)
	for range runs {
		e.start(b, n, 16)
	}
	for b.Loop() {
		sums, err := e.rt.List()
		if err != nil {
			b.Fatal(err)
		}
		if len(sums) != runs {
			b.Fatalf("listed %d runs, want %d", len(sums), runs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/list")
}

// TestBenchFsyncProbe keeps the fsync probe honest where benchmarks are not
// run: it must measure something on the test's file system.
func TestBenchFsyncProbe(t *testing.T) {
	dir := t.TempDir()
	cpu, wall := benchSyncCost(t, dir, 600, 5)
	if wall <= 0 {
		t.Fatalf("fsync probe measured no time: cpu %s, wall %s", benchMicros(cpu), benchMicros(wall))
	}
	t.Logf("append+fdatasync of 600 bytes: cpu %s, wall %s", benchMicros(cpu), benchMicros(wall))
}
