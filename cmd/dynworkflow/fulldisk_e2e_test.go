//go:build linux

package main_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// On a full disk a run pauses, says why, leaves no temp file, and the
// listing shows it as the journal holds it; once there is room again, it
// resumes to its result.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small file system")
	}
	e := e2etest.NewEnv(t)
	if err := syscall.Mount("tmpfs", e.State, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(e.State, syscall.MNT_DETACH) })
	// Every answer is 50 KB: a 1 MiB state fills after a few calls.
	agent := e.Write("agent.sh", "#!/bin/sh\nhead -c 50000 /dev/zero | tr '\\000' x\n")
	script := e.Write("big.workflow.js", `export const meta = { name: 'big', description: 'big answers' }
let n = 0
for (let i = 0; i < 40; i++) { n += (await agent('task ' + i)).length }
return n
`)
	flags := []string{"--json", "--command-executor", "big=sh " + agent, "--executor", "big"}
	r := e.DW(append([]string{"run", script}, flags...)...)
	e2etest.ExpectCode(t, r, 2)
	o := e2etest.ParseOutcome(t, r)
	if o.Status != "paused" || !strings.Contains(o.PauseReason, "no space left on device") || !strings.Contains(o.PauseReason, "resume") {
		t.Fatalf("a run on a full disk ended %s (%q):\n%s", o.Status, o.PauseReason, r)
	}
	tmp, _ := filepath.Glob(filepath.Join(e.RunsDir(), "*.tmp"))
	if len(tmp) != 0 {
		t.Errorf("temp files left behind: %v", tmp)
	}
	s := e.Listed(o.RunID)
	recs, torn := e2etest.ReadJournal(t, e.JournalPath(o.RunID))
	if done := len(e2etest.FinishedAgents(recs)); s.Status != "paused" || s.Stats.Agents != done || done == 0 {
		t.Errorf("listed as %s with %d agents; the journal holds %d finished calls", s.Status, s.Stats.Agents, done)
	}
	// The write that did not fit was undone, and the end record, which
	// says why, fit: list and show keep the reason, not "the process
	// running it exited".
	if len(torn) != 0 || recs[len(recs)-1].Type != "end" {
		t.Errorf("the journal ends with %d torn bytes, its last record is %s", len(torn), recs[len(recs)-1].Type)
	}
	for what, reason := range map[string]string{"list": s.PauseReason, "show": e.Show(o.RunID).Summary.PauseReason} {
		if !strings.HasPrefix(reason, "the disk is full") || strings.Contains(reason, "exited") {
			t.Errorf("%s says it paused because %q", what, reason)
		}
	}

	if err := syscall.Mount("tmpfs", e.State, "tmpfs", syscall.MS_REMOUNT, "size=64m,mode=0700"); err != nil {
		t.Fatalf("make room: %v", err)
	}
	r = e.DW(append([]string{"resume", o.RunID}, flags...)...)
	e2etest.ExpectCode(t, r, 0)
	if o := e2etest.ParseOutcome(t, r); string(o.Result) != fmt.Sprint(40*50000) {
		t.Errorf("resumed to %s, want %d", o.Result, 40*50000)
	}
}

// A run that fills the disk to the last byte still says why it paused
// (the journal keeps room for its last record), and it stops starting
// agents. On the state directory made read-only, list and show still work
// (they failed, writing .node-view-v1), to see why.
func TestUnwritableState(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a file system, fill it and make it read-only")
	}
	e := e2etest.NewEnv(t)
	if err := syscall.Mount("tmpfs", e.State, "tmpfs", 0, "size=16m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(e.State, syscall.MNT_DETACH) })
	gate := filepath.Join(e.Dir, "gate")
	started := filepath.Join(e.Dir, "started")
	// Each answer is 100 KB, more than the room the journal keeps.
	agent := e.Write("agent.sh", "#!/bin/sh\necho x >> "+started+"\nwhile [ ! -e "+gate+" ]; do sleep 0.02; done\nhead -c 100000 /dev/zero | tr '\\000' x\n")
	script := e.Write("fan.workflow.js", `export const meta = { name: 'fan', description: '20 agents, 2 at a time' }
const r = await parallel(Array.from({ length: 20 }, (_, i) => () => agent('task ' + i)))
return r.map(a => a.length).reduce((a, b) => a + b, 0)
`)
	flags := []string{"--json", "--command-executor", "gate=sh " + agent, "--executor", "gate", "--concurrency", "2"}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	first := e.RunCompleted(script, flags...)
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	p := e.Start(append([]string{"run", script}, flags...)...)
	lines := func() int { b, _ := os.ReadFile(started); return strings.Count(string(b), "\n") }
	e2etest.WaitUntil(t, "two agents to run", func() bool { return lines() >= 20+2 })
	fill(t, filepath.Join(e.State, "ballast"))
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := p.Wait()
	e2etest.ExpectCode(t, r, 2)
	o := e2etest.ParseOutcome(t, r)
	if o.Status != "paused" || !strings.HasPrefix(o.PauseReason, "the disk is full") {
		t.Errorf("the run ended %s (%q)", o.Status, o.PauseReason)
	}
	if n := lines() - 20; n >= 20 {
		t.Errorf("%d agents started: the run went on after its journal could not be written", n)
	}

	if err := syscall.Mount("tmpfs", e.State, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, "size=16m,mode=0700"); err != nil {
		t.Fatalf("make the state read-only: %v", err)
	}
	if sums := e.List(); len(sums) != 2 {
		t.Fatalf("list shows %d runs", len(sums))
	}
	if d := e.Show(first.RunID); d.Summary.Status != "completed" || string(d.Result) != "2000000" {
		t.Errorf("show of the completed run: %s %s", d.Summary.Status, d.Result)
	}
	if d := e.Show(o.RunID); d.Summary.Status != "paused" || !strings.HasPrefix(d.Summary.PauseReason, "the disk is full") {
		t.Errorf("show of the paused run: %s (%q)", d.Summary.Status, d.Summary.PauseReason)
	}
}

// fill writes path until its file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for _, err := f.Write(chunk[:1]); err == nil; _, err = f.Write(chunk[:1]) {
	}
}
