package temporal

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// BenchmarkPerCall measures what one agent call costs the Temporal server:
// its CPU time (from /proc), and the events and bytes it adds to the
// history, over a run of 1,000 agents of 200 ms at concurrency 256 on two
// in-process workers. One run per iteration: go test -run '^$' -bench
// PerCall -benchtime 1x ./engine/temporal/
func BenchmarkPerCall(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchPerCall(b, n, 200*time.Millisecond) })
	}
}

func benchPerCall(b *testing.B, n int, latency time.Duration) {
	srv := dev.Get(b)
	ctx := context.Background()
	queue := fmt.Sprintf("bench-%d", queues.Add(1))
	c, err := Dial(ctx, Config{Address: srv.Address, Namespace: srv.Namespace, TaskQueue: queue, Blobs: b.TempDir()}, hosts(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	set := executors.NewSet(simulate.New(simulate.Config{MinLatency: latency, MaxLatency: latency}))
	for i := range 2 {
		w := NewWorker(c, &Activities{Executors: set, Hosts: hosts(), StateRoot: b.TempDir(), Identity: fmt.Sprint("w", i)},
			WorkerOptions{TaskQueue: queue, Identity: fmt.Sprint("w", i)})
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
	}
	path := writeScript(b, "fan.workflow.js", fmt.Sprintf(`export const meta = { name: 'fan', description: 'n agents' }
const out = await parallel(Array.from({ length: %d }, (_, i) => () => agent('task ' + i)))
return out.length
`, n))
	bundle, script, err := BundleFile(c.hosts, path)
	if err != nil {
		b.Fatal(err)
	}
	opts := engine.DefaultOptions()
	opts.Concurrency, opts.MaxAgents, opts.MaxItems = 256, n, n
	var cpu, wall time.Duration
	var events, bytes int64
	b.ResetTimer()
	for range b.N {
		cpu0 := processCPU(b, srv.PID())
		start := time.Now()
		in, err := c.Start(ctx, StartRequest{Bundle: bundle, Script: script, Options: opts, Cwd: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		st, err := c.Wait(ctx, in.RunID)
		if err != nil || st.Status != engine.StatusCompleted {
			b.Fatalf("%v %s %s", err, st.Status, st.Error)
		}
		wall += time.Since(start)
		cpu += processCPU(b, srv.PID()) - cpu0
		d, err := c.sdk.DescribeWorkflow(ctx, in.RunID, "")
		if err != nil {
			b.Fatal(err)
		}
		info := d.RawResponse.GetWorkflowExecutionInfo()
		events += info.GetHistoryLength()
		bytes += info.GetHistorySizeBytes()
	}
	calls := float64(b.N * n)
	b.ReportMetric(float64(cpu.Microseconds())/1000/calls, "server-cpu-ms/call")
	b.ReportMetric(float64(events)/calls, "events/call")
	b.ReportMetric(float64(bytes)/calls, "history-B/call")
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/run")
	b.ReportMetric(0, "ns/op")
}

// processCPU is the CPU time (user and system) process pid used so far.
func processCPU(tb testing.TB, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Skipf("no CPU time of the server: %v", err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // CLK_TCK is 100 on Linux
}
