package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/temporaltest"
)

// The end-to-end tests of --backend temporal run the real binary against a
// real Temporal server (the dev server of internal/temporaldev), with the
// workers as separate `dynworkflow worker` processes.

// temporalDev is the package's Temporal server, started on first use.
var temporalDev temporaltest.Shared

var taskQueues atomic.Int64

// temporalEnv is a project whose runs go to Temporal, on a task queue of
// its own.
type temporalEnv struct {
	*env
	address, namespace, queue string
}

func newTemporalEnv(t *testing.T) *temporalEnv {
	t.Helper()
	srv := temporalDev.Get(t)
	return &temporalEnv{env: newEnv(t), address: srv.Address, namespace: srv.Namespace,
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
	p *proc
}

// startWorker starts a worker process on the test's task queue; the
// test's cleanup stops it.
func (e *temporalEnv) startWorker(extra ...string) *worker {
	e.t.Helper()
	args := append(append([]string{"worker"}, e.flags()...), extra...)
	cmd := e.command(context.Background(), args...)
	p := &proc{e: e.env, args: args, cmd: cmd, stdout: newWatchBuffer(), stderr: newWatchBuffer(), exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		p.res, _ = resultOf(args, cmd, err, p.stdout.String(), p.stderr.String())
		close(p.exited)
	}()
	e.t.Cleanup(func() {
		if p.alive() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-p.exited
			}
		}
		e.checkRace(p.res)
	})
	p.waitStderr("polling task queue")
	return &worker{p: p}
}

// TestTemporalExamples runs the four examples in both languages on
// --backend temporal with two worker processes and the simulate executor,
// and gets what local runs get: results, agent counts, and in show the
// same calls with the same prompts and answers.
func TestTemporalExamples(t *testing.T) {
	e := newTemporalEnv(t)
	e.startWorker()
	e.startWorker()
	files, err := filepath.Glob("../../examples/*.workflow.*")
	if err != nil || len(files) != 8 {
		t.Fatalf("want the 4 examples in 2 languages, found %v (%v)", files, err)
	}
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		t.Run(filepath.Base(f), func(t *testing.T) {
			local := e.runCompleted(abs)
			remote := e.runCompleted(abs, e.runFlags()...)
			sameJSON(t, "the result on Temporal", remote.Result, local.Result)
			if remote.Stats.Agents != local.Stats.Agents || remote.Stats.Live != local.Stats.Live {
				t.Errorf("on Temporal %+v, locally %+v", remote.Stats, local.Stats)
			}
			if s := e.listed(remote.RunID); s.Status != "completed" || s.Stats.Agents != local.Stats.Agents {
				t.Errorf("list shows the Temporal run as %+v", s)
			}
			ld, rd := e.show(local.RunID), e.show(remote.RunID)
			if g, w := callsOf(rd), callsOf(ld); g != w {
				t.Errorf("show on Temporal:\n%s\nlocally:\n%s", g, w)
			}
			sameJSON(t, "show's result", rd.Result, ld.Result)
		})
	}
}

// callsOf lists show's calls as path, kind, status, prompt and answer.
func callsOf(d detail) string {
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
	e := newTemporalEnv(t)
	log := filepath.Join(e.dir, "agents.log")
	agent := e.write("agent.sh", fmt.Sprintf(`#!/bin/sh
read -r prompt
echo "start $prompt $PPID" >> %q
sleep 0.3
echo "answer to $prompt"
`, log))
	if err := os.Chmod(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	script := e.write("many.workflow.js", `export const meta = { name: 'many', description: '200 agents' }
const items = Array.from({ length: 200 }, (_, i) => 'item-' + i)
const out = await parallel(items.map(it => () => agent(it, { executor: 'sh' })))
return out.filter(x => x && x.startsWith('answer to ')).length
`)
	shFlag := "--command-executor=sh=" + agent
	doomed := e.startWorker(shFlag)
	e.startWorker(shFlag)
	run := e.start(append([]string{"run", script, "--json", shFlag}, e.runFlags("--concurrency", "40")...)...)
	waitUntil(t, "60 agents to have started", func() bool { return countLines(log) >= 60 })
	doomed.p.signal(syscall.SIGKILL)
	killedAt := time.Now()
	<-doomed.p.exited

	r := run.wait()
	expectCode(t, r, 0)
	o := parseOutcome(t, r)
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
	if err := json.Unmarshal([]byte(e.dwOK("show", o.RunID, "--json").stdout), &d); err != nil || len(d.Calls) != 200 {
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
