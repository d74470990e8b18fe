package main_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/internal/testsize"
)

const crashyWorkflow = `export const meta = { name: 'crashy', description: 'twenty calls' }
const answers = await parallel(Array.from({ length: 20 }, (_, i) => () => agent('task ' + i)))
return answers.join('|')
`

// A run killed at any moment of its first 150 ms either never appears, or
// appears with its name and resumes to the result of an uninterrupted run:
// never an empty journal, a nameless run, or one that cannot be resumed.
// 200 kills at full size (internal/testsize), 40 otherwise.
func TestKilledInItsFirstMillisecondsResumesOrNeverAppears(t *testing.T) {
	t.Parallel()
	kills, workers := testsize.Of(200, 40), 4
	want := func() string {
		e := e2etest.NewEnv(t)
		return string(e.RunCompleted(e.Write("crashy.workflow.js", crashyWorkflow)).Result)
	}()
	var mu sync.Mutex
	appeared, resumed, completedFirst := 0, 0, 0
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			e := e2etest.NewEnv(t)
			script := e.Write("crashy.workflow.js", crashyWorkflow)
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for range kills / workers {
				p := e.Start("run", script, "--json", "--simulate-latency", "5ms..30ms")
				time.Sleep(time.Duration(rng.IntN(150_001)) * time.Microsecond)
				_ = p.Cmd.Process.Signal(syscall.SIGKILL)
				<-p.Exited
			}
			// What the kills left: every run listed has its name, and
			// every journal on disk is a listed run.
			sums := e.List()
			listed := map[string]bool{}
			for _, s := range sums {
				listed[s.RunID] = true
				if s.Name != "crashy" || s.StartedAt.IsZero() || s.Status == "damaged" {
					t.Errorf("a killed run is listed as %+v", s)
				}
			}
			for id := range e.JournalIDs() {
				if !listed[id] {
					t.Errorf("journal %s is not listed", id)
				}
			}
			for _, s := range sums {
				if s.Status == "completed" {
					mu.Lock()
					completedFirst++
					mu.Unlock()
					continue
				}
				r := e.DW("resume", s.RunID, "--json")
				if r.Code != 0 || !strings.Contains(r.Stdout, `"status": "completed"`) {
					t.Errorf("resume of %s (listed %s):\n%s", s.RunID, s.Status, r)
					continue
				}
				if o := e2etest.ParseOutcome(t, r); string(o.Result) != want {
					t.Errorf("resumed %s gave %s, want %s", s.RunID, o.Result, want)
				}
				mu.Lock()
				resumed++
				mu.Unlock()
			}
			mu.Lock()
			appeared += len(sums)
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("%d kills at 0-150 ms: %d runs appeared (%d had completed, %d resumed to the right result), %d never appeared",
		kills, appeared, completedFirst, resumed, kills-appeared)
}

// The crash fuzz: a run of agents that take 20-100 ms is SIGKILLed again
// and again at random moments and resumed, until it completes. An agent
// notes in a witness file when it has its answer, just before it exits: a
// witnessed call with no durable finished record at the kill had finished
// but ran again. The result must equal an uninterrupted run's; the test
// reports how many finished calls ran again per kill. Up to 30 kills at
// full size (internal/testsize), 10 otherwise.
func TestCrashFuzzReportsRerunsPerKill(t *testing.T) {
	t.Parallel()
	maxKills := testsize.Of(30, 10)
	e := e2etest.NewEnv(t)
	witness := filepath.Join(e.Dir, "witness")
	agent := e.Write("agent.sh", fmt.Sprintf(`#!/bin/sh
sleep 0.0$(od -An -N1 -tu1 /dev/urandom | tr -d ' ' | cut -c1)
echo "$1" >> %s
echo "answer to $1"
`, witness))
	flags := []string{"--json", "--command-executor", "sh=sh " + agent + " {prompt}", "--executor", "sh", "--concurrency", "16"}
	reruns, maxReruns := 0, 0
	kills := killAndResume(e, 7, maxKills, flags, func(p *e2etest.Proc, id string) {
		_ = p.Cmd.Process.Signal(syscall.SIGKILL)
		<-p.Exited
		// Witnessed but not durable: ran to its answer, will run again.
		recs, _ := e2etest.ReadJournal(t, e.JournalPath(id))
		durable := e2etest.FinishedAgents(recs)
		w, _ := os.ReadFile(witness)
		lost := 0
		seen := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(w)), "\n") {
			seen[line] = true
		}
		byPrompt := promptsOf(recs)
		for prompt := range seen {
			if path, ok := byPrompt[prompt]; !ok || !durable[path] {
				lost++
			}
		}
		reruns += lost
		maxReruns = max(maxReruns, lost)
		_ = os.Remove(witness) // the next execution's witnesses start afresh
	})
	if kills > 0 {
		t.Logf("%d kills: %d finished calls ran again in all, %.2f per kill, at most %d", kills, reruns, float64(reruns)/float64(kills), maxReruns)
	}
}

// killAndResume runs a fan-out to 400 agents with flags and, up to
// maxKills times, at a random moment 50-250 ms in (from seed and the
// clock), has kill end the running process, then resumes the run. It fails
// the test unless the last execution returns what an uninterrupted run
// does, and returns how many kills there were.
func killAndResume(e *e2etest.Env, seed uint64, maxKills int, flags []string, kill func(p *e2etest.Proc, id string)) int {
	e.T.Helper()
	script := e.Write("fan.workflow.js", `export const meta = { name: 'fan', description: 'd' }
const answers = await parallel(Array.from({ length: 400 }, (_, i) => () => agent('task ' + i)))
return answers.join('|')
`)
	var want strings.Builder
	for i := range 400 {
		if i > 0 {
			want.WriteByte('|')
		}
		fmt.Fprintf(&want, "answer to task %d", i)
	}

	rng := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	before := e.JournalIDs()
	p := e.Start(append([]string{"run", script}, flags...)...)
	id := p.WaitNewJournal(before)
	kills := 0
	for ; kills < maxKills; kills++ {
		time.Sleep(time.Duration(50+rng.IntN(200)) * time.Millisecond)
		if !p.Alive() {
			break
		}
		kill(p, id)
		p = e.Start(append([]string{"resume", id}, flags...)...)
	}
	r := p.Wait()
	if r.Code != 0 {
		e.T.Fatalf("the last execution did not complete:\n%s", r)
	}
	if o := e2etest.ParseOutcome(e.T, r); string(o.Result) != fmt.Sprintf("%q", want.String()) {
		e.T.Errorf("result %s, want the uninterrupted run's", o.Result)
	}
	return kills
}

// promptsOf maps the prompt of every started agent call to its path.
func promptsOf(recs []e2etest.Record) map[string]string {
	out := map[string]string{}
	for _, r := range recs {
		if r.Type == "call.started" && r.Call != nil {
			out[r.Call.Prompt] = r.Path
		}
	}
	return out
}
