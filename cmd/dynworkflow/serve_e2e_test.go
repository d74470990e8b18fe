package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/web"
)

// waitStarted waits until the journal of id records a started call after
// its last resume (or its start).
func waitStarted(e *e2etest.Env, id string) {
	e.T.Helper()
	e2etest.WaitUntil(e.T, id+" to start a call", func() bool {
		recs, _ := e2etest.ReadJournal(e.T, e.JournalPath(id))
		if len(recs) == 0 {
			return false
		}
		i := max(e2etest.LastResume(recs), 0)
		return len(e2etest.StartedAfter(recs, i)) > 0
	})
}

const quickWorkflow = `export const meta = { name: 'quick', description: 'a quick run' }
const r = await parallel([1, 2, 3].map(i => () => agent('quick ' + i)))
return { done: r.length }
`

// slowWorkflow's first four agents answer at once; the other twelve wait
// at the gate "slow" (see gates; the server needs its flag).
const slowWorkflow = `export const meta = { name: 'slow', description: 'a slow run' }
const r = await parallel(Array.from({ length: 16 }, (_, i) => () =>
  agent('slow ' + i + (i < 4 ? '' : ' [gate:slow]'), { executor: 'gate' })))
return r.length
`

const gateWorkflow = `export const meta = { name: 'gate', description: 'asks a human' }
const first = await agent('prepare the release')
const channel = await checkpoint('Which channel?', { kind: 'select', choices: ['beta', 'stable'] })
return await agent('ship to ' + channel)
`

func TestServeRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	for _, host := range []string{"0.0.0.0", "192.168.1.10", "example.com"} {
		r := e.DW("serve", "--host", host)
		e2etest.ExpectCode(t, r, 64)
		if !strings.Contains(r.Stderr, "ssh -L") {
			t.Errorf("--host %s: no explanation:\n%s", host, r)
		}
	}
}

// TestServeOneOwner starts two servers at once, again and again: exactly
// one owns the project and the other names it. A stale descriptor is
// replaced; Ctrl-C removes the descriptor.
func TestServeOneOwner(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	for round := range 3 {
		a, b := e.Start("serve"), e.Start("serve")
		var owner, loser *e2etest.Proc
		e2etest.WaitUntil(t, "one of two servers to give up", func() bool {
			switch {
			case !a.Alive():
				owner, loser = b, a
			case !b.Alive():
				owner, loser = a, b
			}
			return loser != nil
		})
		r := loser.Wait()
		e2etest.ExpectCode(t, r, 1)
		e2etest.WaitUntil(t, "the owner to write runtime.json", func() bool {
			d, err := web.ReadDescriptor(e2etest.RuntimePath(e))
			return err == nil && d.PID == owner.Cmd.Process.Pid
		})
		if !strings.Contains(r.Stderr, "already owns this project") && !strings.Contains(r.Stderr, "is starting") {
			t.Errorf("round %d: the refused server does not say why:\n%s", round, r)
		}
		if strings.Contains(r.Stderr, "pid") && !strings.Contains(r.Stderr, "pid "+strconv.Itoa(owner.Cmd.Process.Pid)) {
			t.Errorf("round %d: the refusal names the wrong pid:\n%s", round, r)
		}
		if !owner.Alive() {
			t.Fatalf("round %d: both servers exited:\n%s", round, owner.Res)
		}
		owner.Signal(syscall.SIGINT)
		e2etest.ExpectCode(t, owner.Wait(), 0)
		if _, err := os.Stat(e2etest.RuntimePath(e)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("round %d: runtime.json left behind after Ctrl-C: %v", round, err)
		}
	}
	// A descriptor of a dead process is replaced.
	stale := web.Descriptor{ProtocolVersion: web.ProtocolVersion, PID: 1 << 22, URL: "http://127.0.0.1:1", Token: "stale-token-stale-token"}
	if err := web.WriteDescriptor(e2etest.RuntimePath(e), stale); err != nil {
		t.Fatal(err)
	}
	// A CLI does not take it for a live owner.
	e.Write("quick.workflow.js", quickWorkflow)
	e2etest.ExpectCode(t, e.DW("run", "quick.workflow.js"), 0)
	s := e2etest.Serve(e)
	if s.Desc.Token == stale.Token {
		t.Fatal("the stale descriptor was kept")
	}
	fi, err := os.Stat(e2etest.RuntimePath(e))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("runtime.json mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	r := e.DW("serve")
	e2etest.ExpectCode(t, r, 1)
	if !strings.Contains(r.Stderr, "pid "+strconv.Itoa(s.Desc.PID)) {
		t.Errorf("a second serve does not name the owner's pid:\n%s", r)
	}
}

// TestServeKilledMidRun: SIGKILL of the server in the middle of a run; a
// new server finds it paused, and resume replays every finished call.
func TestServeKilledMidRun(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("slow.workflow.js", slowWorkflow)
	gates := e2etest.NewGates(t)
	s := e2etest.Serve(e, gates.Flag)
	r := e.DWOK("run", "slow.workflow.js", "--concurrency", "2")
	id := strings.TrimSpace(r.Stdout)
	s.WaitFinished(e.JournalPath(id), 4)
	s.Signal(syscall.SIGKILL)
	s.Wait()
	recs, _ := e2etest.ReadJournal(t, e.JournalPath(id))
	finished := e2etest.FinishedAgents(recs)
	gates.Release("slow")

	s2 := e2etest.Serve(e, gates.Flag)
	d, err := s2.Client.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Summary.Status != "paused" {
		t.Fatalf("after the kill the run is %q, want paused", d.Summary.Status)
	}
	res := e.DW("resume", id, "--attach", "--json")
	e2etest.ExpectCode(t, res, 0)
	if o := e2etest.ParseOutcome(t, res); o.Status != "completed" || o.Stats.Replayed != len(finished) {
		t.Errorf("outcome %+v; want completed with %d replayed", o, len(finished))
	}
	e2etest.NoReRun(t, e.JournalPath(id), finished)
}

// TestForwardedCommands drives a live server from other processes: run,
// --attach, pause, resume, stop, respond, delete, with local exit codes.
func TestForwardedCommands(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("quick.workflow.js", quickWorkflow)
	e.Write("slow.workflow.js", slowWorkflow) // its gate is never released
	e.Write("gate.workflow.js", gateWorkflow)
	e.Write("broken.workflow.js", "export const meta = { name: 'b', description: 'd' }\nreturn agent((\n")
	s := e2etest.Serve(e, e2etest.NewGates(t).Flag)
	ctx := context.Background()

	t.Run("run prints the id at once", func(t *testing.T) {
		r := e.DWOK("run", "quick.workflow.js")
		id := strings.TrimSpace(r.Stdout)
		if _, err := s.Client.Run(ctx, id); err != nil {
			t.Fatalf("stdout %q is not a run of the server: %v", r.Stdout, err)
		}
	})
	t.Run("run --attach", func(t *testing.T) {
		r := e.DWOK("run", "quick.workflow.js", "--attach", "--json")
		o := e2etest.ParseOutcome(t, r)
		e2etest.SameJSON(t, "result", o.Result, json.RawMessage(`{"done":3}`))
		if o.Status != "completed" || o.Stats.Live != 3 {
			t.Errorf("outcome %+v", o)
		}
	})
	t.Run("bad script", func(t *testing.T) {
		r := e.DW("run", "broken.workflow.js")
		e2etest.ExpectCode(t, r, 1)
		if !strings.Contains(r.Stderr, "broken.workflow.js:3:1: SyntaxError") {
			t.Errorf("no position:\n%s", r)
		}
	})
	t.Run("pause resume stop", func(t *testing.T) {
		before := e.JournalIDs()
		attached := e.Start("run", "slow.workflow.js", "--attach", "--concurrency", "2")
		id := attached.WaitNewJournal(before)
		waitStarted(e, id)
		e.DWOK("pause", id)
		e2etest.ExpectCode(t, attached.Wait(), 2)
		s.WaitRun(id, "paused")

		resumed := e.Start("resume", id, "--attach")
		waitStarted(e, id)
		e2etest.WaitUntil(t, "the resume to run", func() bool {
			d, _ := s.Client.Run(ctx, id)
			return d != nil && d.Summary.Epoch == 1
		})
		e.DWOK("stop", id)
		e2etest.ExpectCode(t, resumed.Wait(), 1)
		s.WaitRun(id, "stopped")
		e2etest.ExpectCode(t, e.DW("resume", id), 1) // a stopped run cannot resume
		e.DWOK("delete", id)
		e2etest.ExpectCode(t, e.DW("delete", id), 1)
		e2etest.ExpectCode(t, e.DW("pause", "no-such-run"), 1)
	})
	t.Run("respond", func(t *testing.T) {
		before := e.JournalIDs()
		attached := e.Start("run", "gate.workflow.js", "--attach", "--json")
		id := attached.WaitNewJournal(before)
		cp := s.WaitCheckpoint(id)
		attached.WaitStderr(cp.ID) // the attached view names it
		e2etest.ExpectCode(t, e.DW("respond", cp.ID, "nightly"), 1)
		e2etest.ExpectCode(t, e.DW("respond", "cp-00000000000000000000", "beta"), 1)
		e.DWOK("respond", cp.ID, "beta")
		r := attached.Wait()
		e2etest.ExpectCode(t, r, 0)
		if o := e2etest.ParseOutcome(t, r); !strings.Contains(string(o.Result), "beta") {
			t.Errorf("the result does not use the answer: %s", o.Result)
		}
	})
}

// TestServeCtrlCAndRestart: Ctrl-C of the server pauses a run waiting on
// a checkpoint; after a restart and a resume the same checkpoint is
// pending again, and answering it completes the run.
func TestServeCtrlCAndRestart(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("gate.workflow.js", gateWorkflow)
	s := e2etest.Serve(e)
	id := strings.TrimSpace(e.DWOK("run", "gate.workflow.js").Stdout)
	first := s.WaitCheckpoint(id)
	s.Signal(syscall.SIGINT)
	e2etest.ExpectCode(t, s.Wait(), 0)
	if _, err := os.Stat(e2etest.RuntimePath(e)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("runtime.json left behind: %v", err)
	}
	if got := e.Listed(id); got.Status != "paused" {
		t.Fatalf("after Ctrl-C the run is %q, want paused", got.Status)
	}

	s2 := e2etest.Serve(e)
	e.DWOK("resume", id)
	again := s2.WaitCheckpoint(id)
	if again.ID != first.ID {
		t.Fatalf("the checkpoint came back as %s, was %s", again.ID, first.ID)
	}
	e.DWOK("respond", again.ID, `"stable"`)
	s2.WaitRun(id, "completed")
	var answer json.RawMessage
	for _, c := range e.Show(id).Calls {
		if c.Kind == "checkpoint" {
			answer = c.Result
		}
	}
	if string(answer) != `"stable"` {
		t.Errorf("journaled answer %s", answer)
	}
}

// TestServeHangup: closing the server's terminal (SIGHUP) shuts it down as
// SIGTERM does: runs paused, runtime.json removed. A runtime.json left by a
// server killed without a chance to remove it is not trusted: the next
// command runs locally.
func TestServeHangup(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("gate.workflow.js", gateWorkflow)
	s := e2etest.Serve(e)
	id := strings.TrimSpace(e.DWOK("run", "gate.workflow.js").Stdout)
	s.WaitCheckpoint(id)
	s.Signal(syscall.SIGHUP)
	e2etest.ExpectCode(t, s.Wait(), 0)
	if _, err := os.Stat(e2etest.RuntimePath(e)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("runtime.json left behind after SIGHUP: %v", err)
	}
	if got := e.Listed(id); got.Status != "paused" {
		t.Fatalf("after SIGHUP the run is %q, want paused", got.Status)
	}

	killed := e2etest.Serve(e)
	killed.Signal(syscall.SIGKILL)
	killed.Wait()
	if _, err := os.Stat(e2etest.RuntimePath(e)); err != nil {
		t.Fatalf("SIGKILL should leave runtime.json behind: %v", err)
	}
	r := e.DW("run", "gate.workflow.js", "--json")
	if strings.Contains(r.Stdout, "dashboardUrl") || !strings.Contains(r.Stdout, `"durationMs"`) {
		t.Errorf("the run did not run locally:\n%s", r)
	}
}
