package temporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/internal/temporaltest"
	"github.com/dynworkflow/dynworkflow/internal/testsize"
	"github.com/dynworkflow/dynworkflow/web"
)

// The end-to-end tests of --backend temporal run the real binary against a
// real Temporal server (the dev server of internal/temporaldev), with the
// workers as separate `dynworkflow worker` processes. The binary is the
// default build, without the Temporal SDK; every command of these tests that
// involves Temporal goes through it to its companion, dynworkflow-temporal
// (the build with -tags temporal), built next to it on first use.

// temporalDev is the package's Temporal server, started on first use.
var temporalDev temporaltest.Shared

var taskQueues atomic.Int64

// temporalEnv is a project whose runs go to Temporal, on a task queue of
// its own.
type temporalEnv struct {
	*e2etest.Env
	address, namespace, queue string
}

func newTemporalEnv(t *testing.T) *temporalEnv {
	t.Helper()
	srv := temporalDev.Get(t)
	e2etest.NeedCompanion(t)
	return &temporalEnv{Env: e2etest.NewEnv(t), address: srv.Address, namespace: srv.Namespace,
		queue: fmt.Sprintf("e2e-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), taskQueues.Add(1))}
}

// flags are the flags that point a command at the test's Temporal.
func (e *temporalEnv) flags() []string {
	return []string{"--temporal-address", e.address, "--temporal-namespace", e.namespace, "--task-queue", e.queue}
}

// runFlags are flags for a run on the test's Temporal.
func (e *temporalEnv) runFlags(extra ...string) []string {
	return append(append([]string{"--backend", "temporal", "--heartbeat-timeout", "3s"}, e.flags()...), extra...)
}

// worker is a `dynworkflow worker` process.
type worker struct {
	p *e2etest.Proc
}

// startWorker starts a worker process on the test's task queue; the
// test's cleanup stops it.
func (e *temporalEnv) startWorker(extra ...string) *worker {
	e.T.Helper()
	args := append(append([]string{"worker"}, e.flags()...), extra...)
	cmd := e.Command(context.Background(), args...)
	p := &e2etest.Proc{Env: e.Env, Args: args, Cmd: cmd, Stdout: e2etest.NewWatchBuffer(), Stderr: e2etest.NewWatchBuffer(), Exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Stdout, p.Stderr
	if err := cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		p.Res, _ = e2etest.ResultOf(args, cmd, err, p.Stdout.String(), p.Stderr.String())
		close(p.Exited)
	}()
	e.T.Cleanup(func() {
		if p.Alive() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.Exited:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-p.Exited
			}
		}
		e.CheckRace(p.Res)
	})
	p.WaitStderr("polling task queue")
	return &worker{p: p}
}

// TestTemporalExamples runs the four examples in both languages on
// --backend temporal with two worker processes and the simulate executor,
// and gets what local runs get: results, agent counts, and in show the
// same calls with the same prompts and answers. All eight at full size
// (internal/testsize); otherwise one in each language, drawn afresh each
// run (engine/temporal's TestExamples runs all eight in process).
func TestTemporalExamples(t *testing.T) {
	t.Parallel()
	e := newTemporalEnv(t)
	e.startWorker()
	e.startWorker()
	files, err := filepath.Glob("../../../../examples/*.workflow.*")
	if err != nil || len(files) != 8 {
		t.Fatalf("want the 4 examples in 2 languages, found %v (%v)", files, err)
	}
	if !testsize.Full() {
		rand.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
		js := slices.IndexFunc(files, func(f string) bool { return strings.HasSuffix(f, ".js") })
		star := slices.IndexFunc(files, func(f string) bool { return strings.HasSuffix(f, ".star") })
		files = []string{files[js], files[star]}
	}
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		t.Run(filepath.Base(f), func(t *testing.T) {
			local := e.RunCompleted(abs)
			remote := e.RunCompleted(abs, e.runFlags()...)
			e2etest.SameJSON(t, "the result on Temporal", remote.Result, local.Result)
			if remote.Stats.Agents != local.Stats.Agents || remote.Stats.Live != local.Stats.Live {
				t.Errorf("on Temporal %+v, locally %+v", remote.Stats, local.Stats)
			}
			if s := e.Listed(remote.RunID); s.Status != "completed" || s.Stats.Agents != local.Stats.Agents {
				t.Errorf("list shows the Temporal run as %+v", s)
			}
			if last := e.Show("last"); last.Summary.RunID != remote.RunID {
				t.Errorf("show last is %s, not the newest run %s", last.Summary.RunID, remote.RunID)
			}
			ld, rd := e.Show(local.RunID), e.Show(remote.RunID[:len(remote.RunID)-2])
			if g, w := callsOf(rd), callsOf(ld); g != w {
				t.Errorf("show on Temporal:\n%s\nlocally:\n%s", g, w)
			}
			e2etest.SameJSON(t, "show's result", rd.Result, ld.Result)
		})
	}
}

// callsOf lists show's calls as path, kind, status, prompt and answer.
func callsOf(d e2etest.Detail) string {
	var b strings.Builder
	for _, c := range d.Calls {
		fmt.Fprintf(&b, "%s %s %s %q %s\n", c.Path, c.Kind, c.Status, c.Prompt, c.Result)
	}
	return b.String()
}

// TestTemporalWorkerKilled runs 200 agents on two workers and SIGKILLs one
// of them mid-run: the run completes on the other, and no agent that had
// finished before the kill runs again, as the executor's own log shows.
func TestTemporalWorkerKilled(t *testing.T) {
	t.Parallel()
	e := newTemporalEnv(t)
	log := filepath.Join(e.Dir, "agents.log")
	agent := e.Write("agent.sh", fmt.Sprintf(`#!/bin/sh
read -r prompt
echo "start $prompt $PPID" >> %q
sleep 1
echo "answer to $prompt"
`, log))
	if err := os.Chmod(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	script := e.Write("many.workflow.js", `export const meta = { name: 'many', description: '200 agents' }
const items = Array.from({ length: 200 }, (_, i) => 'item-' + i)
const out = await parallel(items.map(it => () => agent(it, { executor: 'sh' })))
return out.filter(x => x && x.startsWith('answer to ')).length
`)
	shFlag := "--command-executor=sh=" + agent
	doomed := e.startWorker(shFlag)
	e.startWorker(shFlag)
	run := e.Start(append([]string{"run", script, "--json"}, e.runFlags("--concurrency", "40")...)...)
	e2etest.WaitUntil(t, "60 agents to have started", func() bool { return countLines(log) >= 60 })
	doomed.p.Signal(syscall.SIGKILL)
	killedAt := time.Now()
	<-doomed.p.Exited

	r := run.Wait()
	e2etest.ExpectCode(t, r, 0)
	o := e2etest.ParseOutcome(t, r)
	if string(o.Result) != "200" || o.Stats.Agents != 200 || o.Stats.Failed != 0 {
		t.Fatalf("after losing a worker: %s", r)
	}
	starts := map[string]int{}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		starts[f[1]]++
	}
	var d struct {
		Calls []struct {
			Path    string    `json:"path"`
			Prompt  string    `json:"prompt"`
			EndedAt time.Time `json:"endedAt"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(e.DWOK("show", o.RunID, "--json").Stdout), &d); err != nil || len(d.Calls) != 200 {
		t.Fatalf("show --json: %d calls, %v", len(d.Calls), err)
	}
	var before, rerun int
	for _, c := range d.Calls {
		if c.EndedAt.Before(killedAt) {
			before++
			if n := starts[c.Prompt]; n != 1 {
				t.Errorf("%s (%s) finished before the kill and started %d times", c.Path, c.Prompt, n)
			}
		} else if starts[c.Prompt] > 1 {
			rerun++
		}
	}
	if before == 0 || before == 200 {
		t.Fatalf("%d agents finished before the kill; the kill came too early or too late", before)
	}
	t.Logf("%d agents finished before the kill and ran once; %d in flight on the killed worker ran again", before, rerun)
}

// countLines counts the lines of a file that may not exist yet.
func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// slowFanOut is a script of n agents of 300ms each.
const slowFanOut = `export const meta = { name: 'slow', description: 'agents that take a while' }
const items = Array.from({ length: %d }, (_, i) => i)
const out = await parallel(items.map(i => () => agent('item ' + i + ' [simulate:sleep=300ms]')))
return out.length
`

// TestTemporalClientKilled SIGKILLs the `run` process mid-run: the run
// goes on in Temporal, show and list see it progress, and resume --attach
// follows it to its end, from another machine's state too.
func TestTemporalClientKilled(t *testing.T) {
	t.Parallel()
	e := newTemporalEnv(t)
	gates := e2etest.NewGates(t)
	e.startWorker(gates.Flag)
	// The run cannot end before the test lets it: its agents after the
	// first five wait at a gate, and it waits on a checkpoint after them.
	script := e.Write("gated.workflow.js", `export const meta = { name: 'gated', description: 'agents, then a question' }
const items = Array.from({ length: 40 }, (_, i) => i)
const out = await parallel(items.map(i => () => agent('item ' + i + (i < 5 ? '' : ' [gate:rest]'), { executor: 'gate' })))
const go = await checkpoint('Done?', { kind: 'confirm' })
return go ? out.length : -1
`)
	run := e.Start(append([]string{"run", script, "--await-checkpoints"}, e.runFlags("--concurrency", "4")...)...)
	run.WaitStderr("started on Temporal")
	id := strings.Fields(run.Stderr.String())[0]
	e2etest.WaitUntil(t, "5 finished agents", func() bool { return doneCalls(e.Show(id)) >= 5 })
	run.Signal(syscall.SIGKILL)
	if r := run.Wait(); r.Signal != syscall.SIGKILL {
		t.Fatalf("the client was not killed: %s", r)
	}
	d := e.Show(id)
	if d.Summary.Status != "running" && d.Summary.Status != "waiting" {
		t.Fatalf("after the client died the run is %q", d.Summary.Status)
	}
	n := doneCalls(d)
	gates.Release("rest")
	e2etest.WaitUntil(t, "the run to go on without its client", func() bool { return doneCalls(e.Show(id)) > n })
	if s := e.Listed(id); s.Status != "running" && s.Status != "waiting" {
		t.Errorf("list shows %+v", s)
	}
	// Another machine, with the project's backend file and a state of its
	// own, picks the run up by its id, attaches to it and answers it.
	e.WriteAllowed(".dynworkflow/backend.json", fmt.Sprintf(`{"backend": "temporal", "temporal": {"address": %q, "namespace": %q, "taskQueue": %q}}`,
		e.address, e.namespace, e.queue))
	other := &e2etest.Env{T: t, Dir: e.Dir, State: t.TempDir(), Config: t.TempDir()}
	// Its user allows the project's backend file there too.
	other.DWOK("allow")
	if d := other.Show(id); (d.Summary.Status != "running" && d.Summary.Status != "waiting") || len(d.Calls) < n {
		t.Fatalf("show on another machine: %+v", d.Summary)
	}
	attached := other.Start("resume", id, "--attach", "--json")
	attached.WaitStderr("attached")
	e2etest.WaitUntil(t, "every agent and the checkpoint", func() bool { return other.Show(id).Summary.Status == "waiting" })
	other.DWOK("respond", id, "yes")
	r := attached.Wait()
	e2etest.ExpectCode(t, r, 0)
	if o := e2etest.ParseOutcome(t, r); o.Status != "completed" || string(o.Result) != "40" || o.Stats.Live != 40 || o.Epoch != 0 {
		t.Fatalf("resume --attach: %s", r)
	}
}

// doneCalls counts the finished calls in show's detail.
func doneCalls(d e2etest.Detail) int {
	n := 0
	for _, c := range d.Calls {
		if c.Status == "done" {
			n++
		}
	}
	return n
}

// TestTemporalCheckpointPauseStop answers a checkpoint with respond, pauses
// and resumes a run, and stops one, all through the CLI.
func TestTemporalCheckpointPauseStop(t *testing.T) {
	t.Parallel()
	e := newTemporalEnv(t)
	e.startWorker()

	t.Run("respond", func(t *testing.T) {
		script := e.Write("gate.workflow.star", `meta = {"name": "gate", "description": "asks a human"}

def main(args):
    channel = checkpoint("Which channel?", kind="select", choices=["beta", "stable"])
    return agent("publish to " + channel)
`)
		run := e.Start(append([]string{"run", script, "--json", "--await-checkpoints"}, e.runFlags()...)...)
		run.WaitStderr("dynworkflow respond cp-")
		line := run.Stderr.String()
		i := strings.Index(line, "respond cp-")
		cp := strings.Fields(line[i+len("respond "):])[0]
		if r := e.DW("respond", cp, "nightly"); r.Code != 1 || !strings.Contains(r.Stderr, "nightly") {
			t.Fatalf("a bad answer: %s", r)
		}
		e.DWOK("respond", cp, "stable")
		r := run.Wait()
		e2etest.ExpectCode(t, r, 0)
		o := e2etest.ParseOutcome(t, r)
		if !strings.Contains(string(o.Result), "publish to stable") {
			t.Fatalf("after respond: %s", r)
		}
		d := e.Show(o.RunID)
		if len(d.Calls) != 2 || d.Calls[1].Path != "/checkpoint.0" || d.Calls[1].Kind != "checkpoint" || string(d.Calls[1].Result) != `"stable"` {
			t.Errorf("show: %+v", d.Calls)
		}
	})

	t.Run("pause and resume", func(t *testing.T) {
		script := e.Write("slow.workflow.js", fmt.Sprintf(slowFanOut, 60))
		run := e.Start(append([]string{"run", script, "--json"}, e.runFlags("--concurrency", "2")...)...)
		run.WaitStderr("started on Temporal")
		id := strings.Fields(run.Stderr.String())[0]
		e2etest.WaitUntil(t, "3 finished agents", func() bool { return doneCalls(e.Show(id)) >= 3 })
		e.DWOK("pause", id)
		r := run.Wait()
		e2etest.ExpectCode(t, r, 2)
		paused := e2etest.ParseOutcome(t, r)
		if paused.Status != "paused" || e.Listed(id).Status != "paused" {
			t.Fatalf("after pause: %s", r)
		}
		r = e.DW("resume", id, "--json")
		e2etest.ExpectCode(t, r, 0)
		o := e2etest.ParseOutcome(t, r)
		if o.Status != "completed" || string(o.Result) != "60" || o.Epoch != 1 || o.Stats.Replayed != paused.Stats.Live || o.Stats.Replayed+o.Stats.Live != 60 {
			t.Fatalf("resume after %+v: %s", paused.Stats, r)
		}
	})

	t.Run("stop", func(t *testing.T) {
		script := e.Write("slow.workflow.js", fmt.Sprintf(slowFanOut, 60))
		run := e.Start(append([]string{"run", script, "--json"}, e.runFlags("--concurrency", "2")...)...)
		run.WaitStderr("started on Temporal")
		id := strings.Fields(run.Stderr.String())[0]
		e2etest.WaitUntil(t, "a finished agent", func() bool { return doneCalls(e.Show(id)) >= 1 })
		e.DWOK("stop", id)
		r := run.Wait()
		e2etest.ExpectCode(t, r, 1)
		if o := e2etest.ParseOutcome(t, r); o.Status != "stopped" {
			t.Fatalf("after stop: %s", r)
		}
		if r := e.DW("resume", id); r.Code != 1 || !strings.Contains(r.Stderr, "stopped") {
			t.Fatalf("resume of a stopped run: %s", r)
		}
		if s := e.Listed(id); s.Status != "stopped" {
			t.Errorf("list: %+v", s)
		}
	})
}

// TestTemporalRunsInServeAPI shows that the API of `serve` lists a run on
// Temporal and gives its detail, as it does a local one.
func TestTemporalRunsInServeAPI(t *testing.T) {
	t.Parallel()
	e := newTemporalEnv(t)
	e.startWorker()
	script := e.Write("slow.workflow.js", fmt.Sprintf(slowFanOut, 3))
	o := e.RunCompleted(script, e.runFlags()...)
	s := e2etest.Serve(e.Env)
	runs, err := s.Client.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].RunID != o.RunID || runs[0].Status != "completed" || runs[0].Stats.Live != 3 {
		t.Fatalf("GET /api/runs: %+v", runs)
	}
	d, err := s.Client.Run(context.Background(), o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Calls) != 3 || string(d.Result) != "3" {
		t.Fatalf("GET /api/runs/%s: %+v", o.RunID, d)
	}
}

// TestTemporalServeBackend runs `serve --backend temporal`: a run started
// from the API runs on Temporal (a worker process answers its agent), its
// checkpoints wait in the API and are answered there, it follows live on
// the event stream, and it pauses, resumes and stops from the API.
func TestTemporalServeBackend(t *testing.T) {
	e := newTemporalEnv(t)
	e.startWorker()
	s := e2etest.Serve(e.Env, e.runFlags()...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan web.StreamEvent, 256)
	go func() {
		_ = s.Client.Stream(ctx, 0, "", func(ev web.StreamEvent) error {
			select {
			case events <- ev:
			case <-ctx.Done():
			}
			return nil
		})
	}()
	// see waits for an event of the run of type typ on the stream.
	see := func(runID, typ string, match func(json.RawMessage) bool) {
		t.Helper()
		timeout := time.After(2 * time.Minute)
		for {
			select {
			case ev := <-events:
				if ev.RunID == runID && ev.Type == typ && (match == nil || match(ev.Payload)) {
					return
				}
			case <-timeout:
				t.Fatalf("no %s event of %s on the stream", typ, runID)
			}
		}
	}
	status := func(want string) func(json.RawMessage) bool {
		return func(p json.RawMessage) bool {
			var sp struct{ Status string }
			return json.Unmarshal(p, &sp) == nil && sp.Status == want
		}
	}

	resp, err := s.Client.Start(ctx, web.StartRequest{Filename: "twice.workflow.js", Script: `export const meta = { name: 'twice', description: 'asks twice' }
const go = await checkpoint('Go on?', { kind: 'confirm' })
const a = await agent('first ' + go)
const channel = await checkpoint('Which channel?', { kind: 'select', choices: ['beta', 'stable'] })
return [a, channel]
`})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.RunID
	see(id, "checkpoint.pending", nil)
	cp := s.WaitCheckpoint(id)
	if cp.Prompt != "Go on?" {
		t.Fatalf("the first checkpoint: %+v", cp)
	}
	if err := s.Client.Respond(ctx, cp.ID, json.RawMessage(`"not a boolean"`)); err == nil {
		t.Fatal("a bad answer was taken")
	}
	if err := s.Client.Respond(ctx, cp.ID, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	see(id, "checkpoint.answered", nil)
	// The agent ran on the worker; the second checkpoint waits.
	var second web.Checkpoint
	e2etest.WaitUntil(t, "the second checkpoint", func() bool {
		cps, _ := s.Client.Checkpoints(ctx)
		for _, c := range cps {
			if c.RunID == id && c.Prompt == "Which channel?" {
				second = c
				return true
			}
		}
		return false
	})
	see(id, "run.status", func(p json.RawMessage) bool {
		var sp struct{ Live int }
		return json.Unmarshal(p, &sp) == nil && sp.Live == 1
	})

	// Paused while it waits, then resumed: the answered checkpoint and
	// the agent replay, the second one asks again.
	if err := s.Client.Pause(ctx, id); err != nil {
		t.Fatal(err)
	}
	see(id, "run.status", status("paused"))
	s.WaitRun(id, "paused")
	if _, err := s.Client.Resume(ctx, id, web.ResumeRequest{}); err != nil {
		t.Fatal(err)
	}
	see(id, "run.resumed", nil)
	e2etest.WaitUntil(t, "the second checkpoint asked again", func() bool {
		cps, _ := s.Client.Checkpoints(ctx)
		for _, c := range cps {
			if c.ID == second.ID {
				return true
			}
		}
		return false
	})
	if err := s.Client.Respond(ctx, second.ID, json.RawMessage(`"stable"`)); err != nil {
		t.Fatal(err)
	}
	see(id, "run.status", status("completed"))
	d, err := s.Client.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Summary.Status != "completed" || !strings.Contains(string(d.Result), "stable") || d.Summary.Stats.Replayed < 1 {
		t.Fatalf("the run on Temporal: %s %s %+v", d.Summary.Status, d.Result, d.Summary.Stats)
	}

	// A second run, stopped from the API while it waits.
	resp, err = s.Client.Start(ctx, web.StartRequest{Filename: "stopme.workflow.js", Script: `export const meta = { name: 'stopme', description: 'waits' }
return await checkpoint('Wait?', { kind: 'confirm' })
`})
	if err != nil {
		t.Fatal(err)
	}
	s.WaitCheckpoint(resp.RunID)
	if err := s.Client.Stop(ctx, resp.RunID); err != nil {
		t.Fatal(err)
	}
	see(resp.RunID, "run.status", status("stopped"))
	see(resp.RunID, "checkpoint.withdrawn", nil)
	if _, err := s.Client.Resume(ctx, resp.RunID, web.ResumeRequest{}); err == nil {
		t.Error("a stopped run resumed")
	}
}
