//go:build linux

package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// After dynworkflow is killed, no agent starts: a 400-agent fan-out at
// concurrency 64 is SIGKILLed at random moments 30 times, and resumed each
// time. Every agent notes in a witness file, first thing, its pid and its
// start time (the kernel's, in clock ticks since boot). No agent may have
// been forked after the killed process was dead (but for a start already
// under way: inFlight), nor have written its witness after every process
// of ours was gone: an agent that starts later is one a dead runtime
// started.
func TestNoAgentStartsAfterTheRuntimeDies(t *testing.T) {
	e := e2etest.NewEnv(t)
	witness := filepath.Join(e.Dir, "witness")
	agent := e.Write("agent.sh", fmt.Sprintf(`#!/bin/sh
prompt=$1
read -r s < /proc/self/stat; set -- $s; echo "$1 ${22}" >> %s
sleep 0.$(( $(od -An -N1 -tu1 /dev/urandom) %% 25 + 10 ))
echo "answer to $prompt"
`, witness))
	flags := []string{"--json", "--command-executor", "sh=sh " + agent + " {prompt}", "--executor", "sh", "--concurrency", "64"}
	kill, agents := 0, 0
	kills := killAndResume(e, 11, 30, flags, func(p *e2etest.Proc, _ string) {
		kill++
		// Ours: the process we started and its children (the runtime),
		// not the agents under them.
		ours := append(childrenOf(p.Cmd.Process.Pid), p.Cmd.Process.Pid)
		_ = p.Cmd.Process.Signal(syscall.SIGKILL)
		<-p.Exited
		dead := ticksSinceBoot(t)
		e2etest.WaitUntil(t, "every process of ours to be gone", func() bool {
			for _, pid := range ours {
				if processRuns(pid) {
					return false
				}
			}
			return true
		})
		gone := time.Now()
		// Give a dead runtime's stragglers time to show up.
		time.Sleep(300 * time.Millisecond)
		if fi, err := os.Stat(witness); err == nil && fi.ModTime().After(gone) {
			t.Errorf("kill %d: an agent wrote its witness %v after every process of ours was gone", kill, fi.ModTime().Sub(gone))
		}
		b, _ := os.ReadFile(witness)
		late := 0
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			agents++
			var pid int
			var start uint64
			if _, err := fmt.Sscan(l, &pid, &start); err != nil {
				t.Fatalf("witness line %q", l)
			}
			if start > dead+inFlight {
				late++
			}
		}
		if late > 0 {
			t.Errorf("kill %d: %d agents were started after dynworkflow was dead", kill, late)
		}
		_ = os.Remove(witness)
	})
	t.Logf("%d kills, %d agents started before them", kills, agents)
}

// inFlight is how many clock ticks after dynworkflow's death its runtime
// may still fork an agent: one whose start was under way, checked before
// the death and forked just after it, which is killed as soon as it has
// exec'd. A runtime that went on starting agents forks them long after.
const inFlight = 5

// ticksSinceBoot is the time since boot in clock ticks, the unit of a
// process's start time in /proc/PID/stat (USER_HZ, 100 on Linux).
func ticksSinceBoot(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	var up float64
	if _, err := fmt.Sscan(string(b), &up); err != nil {
		t.Fatal(err)
	}
	return uint64(up * 100)
}

// processRuns reports whether pid is a process that has not ended (a
// zombie has).
func processRuns(pid int) bool {
	return len(stillRunning(map[int]string{pid: ""})) > 0
}

// Agents start with every signal at its default and none blocked, as if
// started from a clean shell, even when dynworkflow was started with
// SIGHUP, SIGINT and SIGPIPE ignored (under nohup, or in the background of
// a shell script): a shell agent's trap fires, and `yes | head -1` ends
// quietly instead of complaining of a broken pipe.
func TestAgentsStartWithDefaultSignals(t *testing.T) {
	e := e2etest.NewEnv(t)
	e.Bin = e.Write("ignoring.sh", "#!/bin/sh\ntrap '' HUP INT PIPE\nexec \""+e2etest.Binary()+"\" \"$@\"\n")
	if err := os.Chmod(e.Bin, 0o755); err != nil {
		t.Fatal(err)
	}
	agent := e.Write("agent.sh", `#!/bin/sh
grep -E '^Sig(Blk|Ign):' /proc/self/status | tr -d '\t' | tr '\n' ' '
trap 'printf "trapped "' INT
kill -INT $$
{ yes | head -1; } 2>&1 | tr '\n' ' '
`)
	script := e.Write("one.workflow.js", `export const meta = { name: 'one', description: 'd' }
return await agent('signals')
`)
	r := e.DW("run", script, "--json", "--command-executor", "sh=sh "+agent, "--executor", "sh")
	e2etest.ExpectCode(t, r, 0)
	want := `"SigBlk:0000000000000000 SigIgn:0000000000000000 trapped y"`
	if got := string(e2etest.ParseOutcome(t, r).Result); got != want {
		t.Errorf("the agent said %s, want %s", got, want)
	}
}
