package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/internal/gate"
)

// fanOut is a script of n agents in parallel: the first free answer at
// once, the others wait at the gate "rest" (see gated) until the test
// releases it, so the run is still going when the test acts on it.
func fanOut(n, free int) string {
	return fmt.Sprintf(`export const meta = { name: 'fan', description: 'n agents' }
const items = Array.from({ length: %d }, (_, i) => i)
const out = await parallel(items.map(i => () => agent('item ' + i + (i < %d ? '' : ' [gate:rest]'), { label: 'item-' + i })))
return out.length
`, n, free)
}

// gated is the simulated executor behind gates.
func gated() (*executors.Set, *gate.Gates) {
	g := &gate.Gates{}
	return executors.NewSet(g.Wrap(simulate.New(simulate.Config{}))), g
}

// waitFor polls the run's state until cond holds.
func waitFor(t *testing.T, c *Client, runID string, what string, cond func(State) bool) State {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := c.State(context.Background(), runID)
		if err == nil && cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: state %+v, error %v", what, st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPauseResume pauses a run mid-way with the pause signal, then resumes
// it: the resumed execution replays every call the first one finished,
// runs only the rest, and returns what an uninterrupted run returns.
func TestPauseResume(t *testing.T) {
	c := newClient(t)
	set, gates := gated()
	startWorker(t, c, "w1", set)
	opts := engine.DefaultOptions()
	opts.Concurrency = 4
	path := writeScript(t, "fan.workflow.js", fanOut(24, 4))
	in := startFile(t, c, path, "", opts, false)
	waitFor(t, c, in.RunID, "four finished calls", func(st State) bool { return st.Stats.Live >= 4 })
	if err := c.Pause(context.Background(), in.RunID, "a test asked"); err != nil {
		t.Fatal(err)
	}
	st := wait(t, c, in.RunID)
	if st.Status != engine.StatusPaused || st.PauseReason != "a test asked" {
		t.Fatalf("after pause: %s (%s) %s", st.Status, st.PauseReason, st.Error)
	}
	gates.Release("rest")
	if _, err := c.Resume(context.Background(), in.RunID, ResumeRequest{}); err != nil {
		t.Fatal(err)
	}
	final := wait(t, c, in.RunID)
	if final.Status != engine.StatusCompleted || string(final.Result) != "24" || final.Epoch != 1 {
		t.Fatalf("after resume: %s %s epoch %d (%s)", final.Status, final.Result, final.Epoch, final.Error)
	}
	if final.Stats.Replayed != st.Stats.Live || final.Stats.Replayed+final.Stats.Live != 24 {
		t.Errorf("resume replayed %d and ran %d; the paused execution had finished %d", final.Stats.Replayed, final.Stats.Live, st.Stats.Live)
	}
	execs, err := c.readRun(context.Background(), in.RunID)
	if err != nil {
		t.Fatal(err)
	}
	finished := map[string]bool{}
	for _, r := range execs[0].calls {
		if r.status == "done" {
			finished[r.input.Path] = true
		}
	}
	for _, r := range execs[1].calls {
		if finished[r.input.Path] {
			t.Errorf("%s finished before the pause and ran again", r.input.Path)
		}
	}
	d, err := c.Detail(context.Background(), in.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Executions) != 2 || d.Executions[0].End == nil || d.Executions[0].End.Status != "paused" || d.Executions[1].Rule != "crash" {
		t.Errorf("executions: %+v", d.Executions)
	}
	if n := len(d.Calls); n != 24 {
		t.Errorf("show lists %d calls, want 24", n)
	}
	replay(t, c, in.RunID)
}

// TestStop cancels a run: it ends stopped, and cannot be resumed.
func TestStop(t *testing.T) {
	c := newClient(t)
	set, _ := gated() // never released
	startWorker(t, c, "w1", set)
	opts := engine.DefaultOptions()
	opts.Concurrency = 2
	in := startFile(t, c, writeScript(t, "fan.workflow.js", fanOut(20, 1)), "", opts, false)
	waitFor(t, c, in.RunID, "a finished call", func(st State) bool { return st.Stats.Live >= 1 })
	if err := c.Stop(context.Background(), in.RunID); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, c, in.RunID); st.Status != engine.StatusStopped {
		t.Fatalf("after stop: %s %s", st.Status, st.Error)
	}
	if _, err := c.Resume(context.Background(), in.RunID, ResumeRequest{}); !errors.Is(err, engine.ErrNotResumable) {
		t.Errorf("resume of a stopped run: %v", err)
	}
	replay(t, c, in.RunID)
}

// TestCheckpointRespond answers a checkpoint of a run started with a
// human: a bad answer is refused without reaching the run, a good one
// lets it go on. A second checkpoint with a timeout takes its default.
func TestCheckpointRespond(t *testing.T) {
	c := newClient(t)
	startWorker(t, c, "w1", simulated())
	script := `export const meta = { name: 'gate', description: 'asks' }
const channel = await checkpoint('Which channel?', { kind: 'select', choices: ['beta', 'stable'] })
const late = await checkpoint('Anyone there?', { kind: 'confirm', default: false, timeoutMs: 300 })
return { channel, late }
`
	in := startFile(t, c, writeScript(t, "gate.workflow.js", script), "", engine.DefaultOptions(), true)
	st := waitFor(t, c, in.RunID, "a waiting checkpoint", func(st State) bool {
		return len(st.Checkpoints) == 1 && st.Checkpoints[0].Pending
	})
	cp := st.Checkpoints[0]
	if cp.Path != "/checkpoint.0" || cp.Request.Prompt != "Which channel?" {
		t.Fatalf("checkpoint %+v", cp)
	}
	err := c.Respond(context.Background(), in.RunID, cp.Path, json.RawMessage(`"nightly"`))
	if err == nil || !strings.Contains(err.Error(), "nightly") {
		t.Fatalf("a bad answer gave %v", err)
	}
	if err := c.Respond(context.Background(), in.RunID, "/checkpoint.9", json.RawMessage(`"beta"`)); err == nil {
		t.Fatal("an answer to no checkpoint was accepted")
	}
	if err := c.Respond(context.Background(), in.RunID, cp.Path, json.RawMessage(`"stable"`)); err != nil {
		t.Fatal(err)
	}
	final := wait(t, c, in.RunID)
	if final.Status != engine.StatusCompleted || string(final.Result) != `{"channel":"stable","late":false}` {
		t.Fatalf("%s %s %s", final.Status, final.Result, final.Error)
	}
	if got := final.Checkpoints; len(got) != 2 || got[0].Source != "human" || got[1].Source != "timeout-default" {
		t.Errorf("checkpoints %+v", got)
	}
	replay(t, c, in.RunID)
}

// TestStopPaused stops a run that is paused: it keeps its figures and can
// no longer be resumed, as a local run stopped on disk.
func TestStopPaused(t *testing.T) {
	c := newClient(t)
	set, _ := gated() // never released
	startWorker(t, c, "w1", set)
	opts := engine.DefaultOptions()
	opts.Concurrency = 2
	in := startFile(t, c, writeScript(t, "fan.workflow.js", fanOut(12, 2)), "", opts, false)
	waitFor(t, c, in.RunID, "a finished call", func(st State) bool { return st.Stats.Live >= 2 })
	if err := c.Pause(context.Background(), in.RunID, "first"); err != nil {
		t.Fatal(err)
	}
	paused := wait(t, c, in.RunID)
	if err := c.Stop(context.Background(), in.RunID); err != nil {
		t.Fatal(err)
	}
	st := wait(t, c, in.RunID)
	if st.Status != engine.StatusStopped || st.Stats.Live != paused.Stats.Live || st.Stats.InputTokens != paused.Stats.InputTokens {
		t.Fatalf("stopped %+v after paused %+v", st, paused)
	}
	if _, err := c.Resume(context.Background(), in.RunID, ResumeRequest{}); !errors.Is(err, engine.ErrNotResumable) {
		t.Errorf("resume of a stopped run: %v", err)
	}
	if err := c.Stop(context.Background(), in.RunID); err != nil {
		t.Errorf("a second stop: %v", err)
	}
	d, err := c.Detail(context.Background(), in.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(d.Executions); n != 2 || d.Executions[1].Rule != "stop" || d.Summary.Status != "stopped" || len(d.Calls) == 0 {
		t.Errorf("detail: %+v calls %d", d.Executions, len(d.Calls))
	}
	replay(t, c, in.RunID)
}
