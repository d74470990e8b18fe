//go:build linux

package main_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
)

// No process an agent started survives a SIGKILL of dynworkflow by more
// than a second, without any later dynworkflow command. The real codex is
// a Node launcher with a native child; here each one also runs a shell
// tool that starts a process in a session of its own, out of reach of any
// process-group kill, as a build or a dev server would.
func TestCodexGrandchildrenDieWithTheRuntime(t *testing.T) {
	e := e2etest.NewEnv(t)
	pids := filepath.Join(e.Dir, "tool-pids")
	codexEnvWith(t, fakemodel.Options{
		ToolCommand: fmt.Sprintf(`setsid sh -c 'echo $$ >> %s; exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 300`, pids),
	})
	script := e.Write("tools.workflow.js", `export const meta = { name: 'tools', description: 'agents running tools' }
return await parallel(Array.from({ length: 8 }, (_, i) => () => agent('`+fakemodel.Marker(fakemodel.Tool)+` task ' + i)))`)

	p := e.Start("run", script, "--json", "--executor", "codex", "--concurrency", "4")
	// The tools run in codex's sandbox, in a pid namespace of its own:
	// their pids there are not ours, but their sleeps are in the tree, the
	// two of each of the four tools once they have all started.
	var tree map[int]string
	e2etest.WaitUntil(t, "four codex agents running a tool each, with their two sleeps", func() bool {
		b, _ := os.ReadFile(pids)
		tree = descendants(p.Cmd.Process.Pid)
		sleeps := 0
		for _, name := range tree {
			if name == "sleep" {
				sleeps++
			}
		}
		return bytes.Count(b, []byte("\n")) >= 4 && sleeps >= 8
	})
	p.Signal(syscall.SIGKILL)
	killed := time.Now()
	if r := p.Wait(); r.Signal != syscall.SIGKILL {
		t.Fatalf("the run ended before the kill:\n%s", r)
	}
	for time.Since(killed) < orphanGrace {
		if len(stillRunning(tree)) == 0 {
			t.Logf("all %d processes under dynworkflow were gone %v after the kill", len(tree), time.Since(killed).Round(time.Millisecond))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	for pid, name := range stillRunning(tree) {
		t.Errorf("process %d (%s), started under dynworkflow, runs %v after it was killed", pid, name, orphanGrace)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// orphanGrace is how long the processes under a killed dynworkflow may
// take to die. What is left of dynworkflow kills them at once; this only bounds the
// wait, which a loaded machine stretches: a process left behind would
// sleep its 300 s.
const orphanGrace = 30 * time.Second

// procStat is what /proc/PID/stat says of a process.
type procStat struct {
	name, State string
	ppid        int
}

// statOf reads the stat of process pid; ok is false when it is gone.
func statOf(pid int) (st procStat, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return st, false
	}
	open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return st, false
	}
	if _, err := fmt.Sscan(string(b[closing+1:]), &st.State, &st.ppid); err != nil {
		return st, false
	}
	st.name = string(b[open+1 : closing])
	return st, true
}

// processes lists every process now, zombies included, by pid.
func processes() map[int]procStat {
	out := map[int]procStat{}
	ents, _ := os.ReadDir("/proc")
	for _, de := range ents {
		p, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		if st, ok := statOf(p); ok {
			out[p] = st
		}
	}
	return out
}

// descendants maps every process under pid, at any depth, to its name.
func descendants(pid int) map[int]string {
	parent := map[int]int{}
	names := map[int]string{}
	for p, st := range processes() {
		if st.State != "Z" {
			parent[p], names[p] = st.ppid, st.name
		}
	}
	out := map[int]string{}
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out[p] = names[p]
				break
			}
		}
	}
	return out
}

// stillRunning keeps the processes of tree that run (a zombie has ended).
func stillRunning(tree map[int]string) map[int]string {
	out := map[int]string{}
	for pid, name := range tree {
		if st, ok := statOf(pid); !ok || st.State == "Z" {
			continue
		}
		out[pid] = name
	}
	return out
}

// The same through a command executor whose agent is a launcher, as the
// codex npm package is: a shell script that starts its real work as a child
// in a session of its own and waits for it. Nothing else kills that child
// when dynworkflow dies, however it is killed: the process the user
// started, its whole process group (a shell's kill -9 %1), or the runtime
// process under it.
func TestLauncherGrandchildrenDieWithTheRuntime(t *testing.T) {
	t.Parallel()
	kills := []struct {
		name string
		kill func(p *e2etest.Proc) error
	}{
		{"the process", func(p *e2etest.Proc) error { return p.Cmd.Process.Kill() }},
		{"its process group", func(p *e2etest.Proc) error { return syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL) }},
		{"the runtime under it", func(p *e2etest.Proc) error {
			kids := childrenOf(p.Cmd.Process.Pid)
			if len(kids) != 1 {
				return fmt.Errorf("dynworkflow has children %v, want one runtime", kids)
			}
			return syscall.Kill(kids[0], syscall.SIGKILL)
		}},
	}
	for _, k := range kills {
		t.Run(k.name, func(t *testing.T) {
			e := e2etest.NewEnv(t)
			e.Group = true
			pids := filepath.Join(e.Dir, "work-pids")
			launcher := e.Write("launcher.sh", fmt.Sprintf(`#!/bin/sh
setsid sh -c 'echo $$ >> %s; exec sleep 300' </dev/null >/dev/null 2>&1 &
wait
`, pids))
			script := e.Write("fan.workflow.js", fanOut)
			p := e.Start("run", script, "--json", "--command-executor", "launcher=sh "+launcher, "--executor", "launcher",
				"--concurrency", "4", "--args", `{"n":8}`)
			var work []int
			e2etest.WaitUntil(t, "four launchers with their work started", func() bool {
				b, _ := os.ReadFile(pids)
				work = work[:0]
				for _, f := range bytes.Fields(b) {
					pid, _ := strconv.Atoi(string(f))
					work = append(work, pid)
				}
				return len(work) == 4
			})
			tree := descendants(p.Cmd.Process.Pid)
			for _, pid := range work {
				if _, ok := tree[pid]; !ok {
					t.Fatalf("the work process %d is not under dynworkflow: %v", pid, tree)
				}
			}
			if err := k.kill(p); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			if r := p.Wait(); r.Signal != syscall.SIGKILL {
				t.Errorf("dynworkflow ended with %s, want killed by SIGKILL", r)
			}
			for time.Since(killed) < orphanGrace && len(stillRunning(tree)) > 0 {
				time.Sleep(10 * time.Millisecond)
			}
			t.Logf("all %d processes under dynworkflow were gone %v after the kill", len(tree), time.Since(killed).Round(time.Millisecond))
			for pid, name := range stillRunning(tree) {
				t.Errorf("process %d (%s), started under dynworkflow, runs %v after it was killed", pid, name, orphanGrace)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var kids []int
	for p, st := range processes() {
		if st.ppid == pid {
			kids = append(kids, p)
		}
	}
	return kids
}
