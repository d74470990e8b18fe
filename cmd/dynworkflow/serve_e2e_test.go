package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dynworkflow/dynworkflow/web"
)

// runtimePath is the project's runtime.json.
func (e *env) runtimePath() string { return filepath.Join(filepath.Dir(e.runsDir()), "runtime.json") }

// serving is a `dynworkflow serve` process and a client of it.
type serving struct {
	*proc
	desc   web.Descriptor
	client *web.Client
}

// serve starts `dynworkflow serve` and waits until it announced itself.
func (e *env) serve(args ...string) *serving {
	e.t.Helper()
	p := e.start(append([]string{"serve"}, args...)...)
	waitUntil(e.t, "serve to print its dashboard URL", func() bool {
		if !p.alive() {
			e.t.Fatalf("serve exited:\n%s", p.res)
		}
		return strings.Contains(p.stdout.String(), "dashboard: ")
	})
	d, err := web.ReadDescriptor(e.runtimePath())
	if err != nil {
		e.t.Fatal(err)
	}
	if d.PID != p.cmd.Process.Pid {
		e.t.Fatalf("runtime.json names pid %d, serve is pid %d", d.PID, p.cmd.Process.Pid)
	}
	return &serving{proc: p, desc: d, client: web.NewClient(d.URL, d.Token)}
}

// waitRun waits until the run's status is want, over the API.
func (s *serving) waitRun(id, want string) {
	s.e.t.Helper()
	waitUntil(s.e.t, id+" to be "+want, func() bool {
		d, err := s.client.Run(context.Background(), id)
		return err == nil && d.Summary.Status == want
	})
}

// waitCheckpoint waits for a pending checkpoint of run id.
func (s *serving) waitCheckpoint(id string) web.Checkpoint {
	s.e.t.Helper()
	var found web.Checkpoint
	waitUntil(s.e.t, "a checkpoint of "+id, func() bool {
		cps, _ := s.client.Checkpoints(context.Background())
		for _, cp := range cps {
			if cp.RunID == id {
				found = cp
				return true
			}
		}
		return false
	})
	return found
}

// waitStarted waits until the journal of id records a started call after
// its last resume (or its start).
func (e *env) waitStarted(id string) {
	e.t.Helper()
	waitUntil(e.t, id+" to start a call", func() bool {
		recs, _ := readJournal(e.t, e.journalPath(id))
		if len(recs) == 0 {
			return false
		}
		i := max(lastResume(recs), 0)
		return len(startedAfter(recs, i)) > 0
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
	e := newEnv(t)
	for _, host := range []string{"0.0.0.0", "192.168.1.10", "example.com"} {
		r := e.dw("serve", "--host", host)
		expectCode(t, r, 64)
		if !strings.Contains(r.stderr, "ssh -L") {
			t.Errorf("--host %s: no explanation:\n%s", host, r)
		}
	}
}

// TestServeOneOwner starts two servers at once, again and again: exactly
// one owns the project and the other names it. A stale descriptor is
// replaced; Ctrl-C removes the descriptor.
func TestServeOneOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for round := range 3 {
		a, b := e.start("serve"), e.start("serve")
		var owner, loser *proc
		waitUntil(t, "one of two servers to give up", func() bool {
			switch {
			case !a.alive():
				owner, loser = b, a
			case !b.alive():
				owner, loser = a, b
			}
			return loser != nil
		})
		r := loser.wait()
		expectCode(t, r, 1)
		waitUntil(t, "the owner to write runtime.json", func() bool {
			d, err := web.ReadDescriptor(e.runtimePath())
			return err == nil && d.PID == owner.cmd.Process.Pid
		})
		if !strings.Contains(r.stderr, "already owns this project") && !strings.Contains(r.stderr, "is starting") {
			t.Errorf("round %d: the refused server does not say why:\n%s", round, r)
		}
		if strings.Contains(r.stderr, "pid") && !strings.Contains(r.stderr, "pid "+strconv.Itoa(owner.cmd.Process.Pid)) {
			t.Errorf("round %d: the refusal names the wrong pid:\n%s", round, r)
		}
		if !owner.alive() {
			t.Fatalf("round %d: both servers exited:\n%s", round, owner.res)
		}
		owner.signal(syscall.SIGINT)
		expectCode(t, owner.wait(), 0)
		if _, err := os.Stat(e.runtimePath()); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("round %d: runtime.json left behind after Ctrl-C: %v", round, err)
		}
	}
	// A descriptor of a dead process is replaced.
	stale := web.Descriptor{ProtocolVersion: web.ProtocolVersion, PID: 1 << 22, URL: "http://127.0.0.1:1", Token: "stale-token-stale-token"}
	if err := web.WriteDescriptor(e.runtimePath(), stale); err != nil {
		t.Fatal(err)
	}
	// A CLI does not take it for a live owner.
	e.write("quick.workflow.js", quickWorkflow)
	expectCode(t, e.dw("run", "quick.workflow.js"), 0)
	s := e.serve()
	if s.desc.Token == stale.Token {
		t.Fatal("the stale descriptor was kept")
	}
	fi, err := os.Stat(e.runtimePath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("runtime.json mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	r := e.dw("serve")
	expectCode(t, r, 1)
	if !strings.Contains(r.stderr, "pid "+strconv.Itoa(s.desc.PID)) {
		t.Errorf("a second serve does not name the owner's pid:\n%s", r)
	}
}

// TestServeKilledMidRun: SIGKILL of the server in the middle of a run; a
// new server finds it paused, and resume replays every finished call.
func TestServeKilledMidRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("slow.workflow.js", slowWorkflow)
	gates := newGates(t)
	s := e.serve(gates.flag)
	r := e.dwOK("run", "slow.workflow.js", "--concurrency", "2")
	id := strings.TrimSpace(r.stdout)
	s.waitFinished(e.journalPath(id), 4)
	s.signal(syscall.SIGKILL)
	s.wait()
	recs, _ := readJournal(t, e.journalPath(id))
	finished := finishedAgents(recs)
	gates.release("slow")

	s2 := e.serve(gates.flag)
	d, err := s2.client.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Summary.Status != "paused" {
		t.Fatalf("after the kill the run is %q, want paused", d.Summary.Status)
	}
	res := e.dw("resume", id, "--attach", "--json")
	expectCode(t, res, 0)
	if o := parseOutcome(t, res); o.Status != "completed" || o.Stats.Replayed != len(finished) {
		t.Errorf("outcome %+v; want completed with %d replayed", o, len(finished))
	}
	noReRun(t, e.journalPath(id), finished)
}

// TestForwardedCommands drives a live server from other processes: run,
// --attach, pause, resume, stop, respond, delete, with local exit codes.
func TestForwardedCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("quick.workflow.js", quickWorkflow)
	e.write("slow.workflow.js", slowWorkflow) // its gate is never released
	e.write("gate.workflow.js", gateWorkflow)
	e.write("broken.workflow.js", "export const meta = { name: 'b', description: 'd' }\nreturn agent((\n")
	s := e.serve(newGates(t).flag)
	ctx := context.Background()

	t.Run("run prints the id at once", func(t *testing.T) {
		r := e.dwOK("run", "quick.workflow.js")
		id := strings.TrimSpace(r.stdout)
		if _, err := s.client.Run(ctx, id); err != nil {
			t.Fatalf("stdout %q is not a run of the server: %v", r.stdout, err)
		}
	})
	t.Run("run --attach", func(t *testing.T) {
		r := e.dwOK("run", "quick.workflow.js", "--attach", "--json")
		o := parseOutcome(t, r)
		sameJSON(t, "result", o.Result, json.RawMessage(`{"done":3}`))
		if o.Status != "completed" || o.Stats.Live != 3 {
			t.Errorf("outcome %+v", o)
		}
	})
	t.Run("bad script", func(t *testing.T) {
		r := e.dw("run", "broken.workflow.js")
		expectCode(t, r, 1)
		if !strings.Contains(r.stderr, "broken.workflow.js:3:1: SyntaxError") {
			t.Errorf("no position:\n%s", r)
		}
	})
	t.Run("pause resume stop", func(t *testing.T) {
		before := e.journalIDs()
		attached := e.start("run", "slow.workflow.js", "--attach", "--concurrency", "2")
		id := attached.waitNewJournal(before)
		e.waitStarted(id)
		e.dwOK("pause", id)
		expectCode(t, attached.wait(), 2)
		s.waitRun(id, "paused")

		resumed := e.start("resume", id, "--attach")
		e.waitStarted(id)
		waitUntil(t, "the resume to run", func() bool {
			d, _ := s.client.Run(ctx, id)
			return d != nil && d.Summary.Epoch == 1
		})
		e.dwOK("stop", id)
		expectCode(t, resumed.wait(), 1)
		s.waitRun(id, "stopped")
		expectCode(t, e.dw("resume", id), 1) // a stopped run cannot resume
		e.dwOK("delete", id)
		expectCode(t, e.dw("delete", id), 1)
		expectCode(t, e.dw("pause", "no-such-run"), 1)
	})
	t.Run("respond", func(t *testing.T) {
		before := e.journalIDs()
		attached := e.start("run", "gate.workflow.js", "--attach", "--json")
		id := attached.waitNewJournal(before)
		cp := s.waitCheckpoint(id)
		attached.waitStderr(cp.ID) // the attached view names it
		expectCode(t, e.dw("respond", cp.ID, "nightly"), 1)
		expectCode(t, e.dw("respond", "cp-00000000000000000000", "beta"), 1)
		e.dwOK("respond", cp.ID, "beta")
		r := attached.wait()
		expectCode(t, r, 0)
		if o := parseOutcome(t, r); !strings.Contains(string(o.Result), "beta") {
			t.Errorf("the result does not use the answer: %s", o.Result)
		}
	})
}

// TestServeCtrlCAndRestart: Ctrl-C of the server pauses a run waiting on
// a checkpoint; after a restart and a resume the same checkpoint is
// pending again, and answering it completes the run.
func TestServeCtrlCAndRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("gate.workflow.js", gateWorkflow)
	s := e.serve()
	id := strings.TrimSpace(e.dwOK("run", "gate.workflow.js").stdout)
	first := s.waitCheckpoint(id)
	s.signal(syscall.SIGINT)
	expectCode(t, s.wait(), 0)
	if _, err := os.Stat(e.runtimePath()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("runtime.json left behind: %v", err)
	}
	if got := e.listed(id); got.Status != "paused" {
		t.Fatalf("after Ctrl-C the run is %q, want paused", got.Status)
	}

	s2 := e.serve()
	e.dwOK("resume", id)
	again := s2.waitCheckpoint(id)
	if again.ID != first.ID {
		t.Fatalf("the checkpoint came back as %s, was %s", again.ID, first.ID)
	}
	e.dwOK("respond", again.ID, `"stable"`)
	s2.waitRun(id, "completed")
	var answer json.RawMessage
	for _, c := range e.show(id).Calls {
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
	e := newEnv(t)
	e.write("gate.workflow.js", gateWorkflow)
	s := e.serve()
	id := strings.TrimSpace(e.dwOK("run", "gate.workflow.js").stdout)
	s.waitCheckpoint(id)
	s.signal(syscall.SIGHUP)
	expectCode(t, s.wait(), 0)
	if _, err := os.Stat(e.runtimePath()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("runtime.json left behind after SIGHUP: %v", err)
	}
	if got := e.listed(id); got.Status != "paused" {
		t.Fatalf("after SIGHUP the run is %q, want paused", got.Status)
	}

	killed := e.serve()
	killed.signal(syscall.SIGKILL)
	killed.wait()
	if _, err := os.Stat(e.runtimePath()); err != nil {
		t.Fatalf("SIGKILL should leave runtime.json behind: %v", err)
	}
	r := e.dw("run", "gate.workflow.js", "--json")
	if strings.Contains(r.stdout, "dashboardUrl") || !strings.Contains(r.stdout, `"durationMs"`) {
		t.Errorf("the run did not run locally:\n%s", r)
	}
}
