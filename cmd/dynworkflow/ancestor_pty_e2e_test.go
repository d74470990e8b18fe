//go:build linux

package main_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// slowAgents is a workflow of agents that take a while, one at a time,
// each noting its start in the file its prompt names, args.mark-N.
const slowAgents = `export const meta = { name: 'slow', description: 'slow agents one at a time' }
const out = []
for (let i = 0; i < 6; i++) out.push(await agent(args.mark + '-' + i))
return out.length
`

// Ctrl-C typed on the terminal reaches the runtime (its process group has
// the terminal's foreground), which pauses the run: exit 2, resumable.
func TestCtrlCOnTheTerminalPausesTheRun(t *testing.T) {
	e := e2etest.NewEnv(t)
	mark := filepath.Join(e.Dir, "started")
	first := mark + "-0"
	e.Write("slow.workflow.js", slowAgents)
	p := startPTY(e, 100, 30, true, "run", "slow.workflow.js", "--command-executor", "slow=sh -c 'echo > \"$0\"; sleep 0.5; echo ok' {prompt}",
		"--executor", "slow", "--args", `{"mark":"`+mark+`"}`)
	e2etest.WaitUntil(t, "the first agent to start", func() bool { _, err := os.Stat(first); return err == nil })
	if _, err := p.terminal.Write([]byte{0x03}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited:
	case <-time.After(e2etest.WaitTimeout):
		t.Fatalf("no exit after Ctrl-C; output:\n%s", p.out.String())
	}
	var ee *exec.ExitError
	if p.err == nil || !errors.As(p.err, &ee) || ee.ExitCode() != exitPausedCode {
		t.Errorf("dynworkflow ended with %v after Ctrl-C, want exit %d (paused); output:\n%s", p.err, exitPausedCode, p.out.String())
	}
	if !strings.Contains(p.out.String(), "pausing") {
		t.Errorf("no pausing note after Ctrl-C:\n%s", p.out.String())
	}
}

// exitPausedCode is the CLI's exit code for a paused run.
const exitPausedCode = 2

// Ctrl-Z stops dynworkflow as a job of an interactive shell, in a
// pipeline: the shell reports it stopped and gets the terminal back, and
// fg continues the run to its end, with its exit code.
func TestCtrlZStopsTheJobAndFgContinuesIt(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash for an interactive shell with job control")
	}
	e := e2etest.NewEnv(t)
	mark := filepath.Join(e.Dir, "started")
	first := mark + "-0"
	e.Write("slow.workflow.js", slowAgents)
	ctx, cancel := context.WithTimeout(context.Background(), e2etest.CmdTimeout)
	defer cancel()
	shell := exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "-i")
	shell.Dir = e.Dir
	shell.Env = append(e.Command(ctx).Env, "PS1=shell$ ", "TERM=dumb")
	f, err := pty.StartWithSize(shell, &pty.Winsize{Cols: 200, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := e2etest.NewWatchBuffer()
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			_, _ = out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { _ = shell.Process.Kill(); _ = shell.Wait() })
	expect := func(re string) {
		t.Helper()
		rx := regexp.MustCompile(re)
		deadline := time.Now().Add(e2etest.WaitTimeout)
		for !rx.MatchString(out.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("the terminal does not show %s after %v:\n%s", re, e2etest.WaitTimeout, out.String())
			}
			time.Sleep(e2etest.Tick)
		}
	}
	expect(`shell\$ $`)
	cmdline := strings.Join([]string{e2etest.Binary(), "--state-dir", e.State, "--cwd", e.Dir, "run", "slow.workflow.js",
		"--command-executor", `"slow=sh -c 'echo > \"\$0\"; sleep 0.5; echo ok' {prompt}"`, "--executor", "slow", "--json",
		"--args", `'{"mark":"` + mark + `"}'`}, " ")
	// In a pipeline, as "dynworkflow run ... | tee log" would be: the
	// whole job stops, or the shell would wait on the command after it.
	if _, err := f.Write([]byte("set -o pipefail; " + cmdline + " | cat\n")); err != nil {
		t.Fatal(err)
	}
	e2etest.WaitUntil(t, "the first agent to start", func() bool { _, err := os.Stat(first); return err == nil })
	if _, err := f.Write([]byte{0x1a}); err != nil {
		t.Fatal(err)
	}
	// Bash says "Stopped" for SIGTSTP, "Stopped (signal)" for SIGSTOP.
	expect(`\[1\]\+\s+Stopped\s+\S*dynworkflow`)
	expect(`shell\$ $`)
	if _, err := f.Write([]byte("fg; echo exit=$?\n")); err != nil {
		t.Fatal(err)
	}
	expect(`exit=0`)
	if !strings.Contains(out.String(), `"status": "completed"`) {
		t.Errorf("the run did not complete after fg:\n%s", out.String())
	}
}
