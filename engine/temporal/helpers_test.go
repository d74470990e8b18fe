package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/internal/temporaltest"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// dev is the package's Temporal server, started on first use.
var dev temporaltest.Shared

var queues atomic.Int64

func hosts() *lang.Registry { return lang.NewRegistry(jsvm.New(), star.New()) }

// testLog sends the SDK's warnings to the test's log.
func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// newClient dials the dev server with a task queue of the test's own, so
// tests sharing the server never take each other's work.
func newClient(t *testing.T) *Client {
	t.Helper()
	srv := dev.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	queue := fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), queues.Add(1))
	c, err := Dial(ctx, Config{Address: srv.Address, Namespace: srv.Namespace, TaskQueue: queue, Blobs: t.TempDir()}, hosts(), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// startWorker runs an in-process worker on the client's task queue.
func startWorker(t *testing.T, c *Client, name string, set *executors.Set) {
	t.Helper()
	w := NewWorker(c, &Activities{Executors: set, Hosts: hosts(), StateRoot: t.TempDir(), Identity: name},
		WorkerOptions{TaskQueue: c.Config().TaskQueue, Identity: name})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

func simulated() *executors.Set { return executors.NewSet(simulate.New(simulate.Config{})) }

// startFile starts the script at path on Temporal.
func startFile(t *testing.T, c *Client, path, args string, opts engine.Options, human bool) RunInput {
	t.Helper()
	b, script, err := BundleFile(c.hosts, path)
	if err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	in, err := c.Start(context.Background(), StartRequest{Bundle: b, Script: script, Args: raw, Options: opts,
		Cwd: filepath.Dir(path), Human: human, Heartbeat: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// wait waits for the run's current execution to end.
func wait(t *testing.T, c *Client, runID string) State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := c.Wait(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// writeScript writes a script into a temporary project and returns its path.
func writeScript(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runLocally runs a script on the local engine, for comparison, and
// returns its outcome and detail.
func runLocally(t *testing.T, path, args string, opts engine.Options) (engine.Outcome, *engine.Detail) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{Store: st, Hosts: hosts(), Executors: simulated(), Cwd: filepath.Dir(path)})
	if err != nil {
		t.Fatal(err)
	}
	script, err := rt.Hosts().LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	r, err := rt.Start(context.Background(), engine.StartRequest{Script: script, Args: raw, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d, err := rt.Inspect(r.ID())
	if err != nil {
		t.Fatal(err)
	}
	return o, d
}

// callLines lists a run's calls as what makes them the same calls with the
// same answers: path, kind, status, prompt and result.
func callLines(d *engine.Detail) []string {
	var out []string
	for _, c := range d.Calls {
		out = append(out, fmt.Sprintf("%s %s %s %q -> %s", c.Path, c.Kind, c.Status, c.Prompt, c.Result))
	}
	return out
}

// replay replays every execution of a run from its history with a fresh
// workflow replayer: Temporal's own check that the workflow code, script
// hosts included, is deterministic.
func replay(t *testing.T, c *Client, runID string) {
	t.Helper()
	ctx := context.Background()
	execs, err := c.readRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range execs {
		hist := &historypb.History{}
		it := c.sdk.GetWorkflowHistory(ctx, runID, e.runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			hist.Events = append(hist.Events, ev)
		}
		// The replay checks determinism, not speed: on a loaded machine
		// (with -race) reading a long ledger may take over the 1 s the
		// detector allows (the workers allow 10 s).
		r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{DataConverter: c.dc, DisableDeadlockDetection: true})
		if err != nil {
			t.Fatal(err)
		}
		r.RegisterWorkflowWithOptions((&workflows{hosts: hosts(), blobs: c.blobs}).run, workflow.RegisterOptions{Name: WorkflowName})
		if err := r.ReplayWorkflowHistory(nil, hist); err != nil {
			t.Errorf("replaying execution %d of %s: %v", e.input.Epoch, runID, err)
		}
	}
}
