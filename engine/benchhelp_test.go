//go:build linux

package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/journal"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Helpers of the benchmarks in bench_test.go. Everything here is named
// bench* so that it cannot collide with the helpers of other test files.

// benchNoopName is the executor name the benchmarks run their calls on.
const benchNoopName = "noop"

// benchNoop is an executor whose Run answers a fixed text at once: what is
// left of a call's cost is the engine's (script VM, identity, journal,
// events, snapshot) plus the fsync.
type benchNoop struct{}

func (benchNoop) Name() string { return benchNoopName }

func (benchNoop) Run(context.Context, executors.Request, executors.Observer) (executors.Result, error) {
	return executors.Result{
		Text:     "ok: the no-op executor's fixed answer",
		Usage:    executors.Usage{InputTokens: 3, OutputTokens: 7},
		Provider: benchNoopName, Model: benchNoopName,
	}, nil
}

// benchFanoutText is a parallel() of args.n thunks, each one agent call.
// It returns a count rather than the n answers, so that what the run
// writes per call is the engine's, not a result that grows with n.
const benchFanoutText = `export const meta = { name: 'bench-fanout', description: 'args.n agent calls in one parallel()' }
const results = await parallel(Array.from({ length: args.n }, (_, i) => () => agent(` + "`task ${i}`" + `)))
const answered = results.filter(r => r !== null).length
if (answered !== args.n) throw new Error('only ' + answered + ' of ' + args.n + ' calls answered')
return answered
`

// benchEnv is a runtime over a temporary state directory, with the no-op
// executor and the fan-out script loaded.
type benchEnv struct {
	rt     *Runtime
	script lang.Script
	runs   string // the runs directory
}

func newBenchEnv(tb testing.TB) *benchEnv {
	tb.Helper()
	cwd := tb.TempDir()
	st, err := store.Open(filepath.Join(tb.TempDir(), "state"), cwd)
	if err != nil {
		tb.Fatal(err)
	}
	rt, err := New(Config{
		Store: st, Hosts: lang.NewRegistry(jsvm.New()),
		Executors: executors.NewSet(benchNoop{}), Cwd: cwd,
	})
	if err != nil {
		tb.Fatal(err)
	}
	script, err := rt.Hosts().Load(lang.Source{Path: filepath.Join(cwd, "bench-fanout.workflow.js"), Text: []byte(benchFanoutText)})
	if err != nil {
		tb.Fatal(err)
	}
	return &benchEnv{rt: rt, script: script, runs: st.RunsDir()}
}

// benchOptions are the default options on the no-op executor, with room
// for n calls in one parallel().
func benchOptions(n, concurrency int) Options {
	o := DefaultOptions()
	o.Executor = benchNoopName
	o.Concurrency = concurrency
	o.MaxAgents = max(o.MaxAgents, n)
	o.MaxItems = max(o.MaxItems, n)
	return o
}

// benchResult is what one finished execution cost.
type benchResult struct {
	id      string
	outcome Outcome
	journal journal.Stats
}

func (e *benchEnv) checked(tb testing.TB, r *Run, err error, wantLive, wantReplayed int) benchResult {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o, err := r.Wait(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if o.Status != StatusCompleted || o.Stats.Live != wantLive || o.Stats.Replayed != wantReplayed || o.Stats.Failed != 0 {
		tb.Fatalf("run %s: status %s (error %q), %d live, %d replayed, %d failed; want completed, %d live, %d replayed",
			o.RunID, o.Status, o.Error, o.Stats.Live, o.Stats.Replayed, o.Stats.Failed, wantLive, wantReplayed)
	}
	return benchResult{id: r.ID(), outcome: o, journal: r.journal.Stats()}
}

// start runs a fresh n-call fan-out to completion.
func (e *benchEnv) start(tb testing.TB, n, concurrency int) benchResult {
	tb.Helper()
	r, err := e.rt.Start(context.Background(), StartRequest{
		Script: e.script, Args: json.RawMessage(`{"n":` + strconv.Itoa(n) + `}`), Options: benchOptions(n, concurrency),
	})
	return e.checked(tb, r, err, n, 0)
}

// resume resumes run id unchanged: every one of its n calls replays.
func (e *benchEnv) resume(tb testing.TB, id string, n int) benchResult {
	tb.Helper()
	r, err := e.rt.Resume(context.Background(), id, ResumeRequest{})
	return e.checked(tb, r, err, 0, n)
}

// benchCPU is the CPU time (user + system) this process has used so far.
func benchCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchWritten is how many bytes this process has handed to write(2) and
// friends so far (wchar of /proc/self/io): the journal, the snapshots and
// their temp files, the lease files. Nothing else writes while a
// benchmark loop runs. It returns -1 where /proc/self/io is unreadable.
func benchWritten() int64 {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("wchar:")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// benchSyncCost measures the journal's unit of durable work outside the
// engine: one append of a record of recSize bytes plus one fdatasync, on
// the file system the runs live on. It returns the CPU time and the wall
// time of one such write+sync.
func benchSyncCost(tb testing.TB, dir string, recSize, iters int) (cpu, wall time.Duration) {
	tb.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "fsync-probe.jsonl"), os.O_RDWR|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	rec := append(bytes.Repeat([]byte("x"), max(recSize-1, 0)), '\n')
	sync := func() {
		if _, err := f.Write(rec); err != nil {
			tb.Fatal(err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			tb.Fatal(err)
		}
	}
	for range 10 { // warm up: allocate the first blocks
		sync()
	}
	c0, t0 := benchCPU(tb), time.Now()
	for range iters {
		sync()
	}
	return (benchCPU(tb) - c0) / time.Duration(iters), time.Since(t0) / time.Duration(iters)
}

// benchFileSize is the size of a file, 0 when it is missing.
func benchFileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// benchMicros renders a duration in µs for a log line.
func benchMicros(d time.Duration) string {
	return fmt.Sprintf("%.1fµs", float64(d.Nanoseconds())/1e3)
}
