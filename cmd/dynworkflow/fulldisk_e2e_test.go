//go:build linux

package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// On a full disk a run pauses, says why, leaves no temp file, and the
// listing shows it as the journal holds it; once there is room again, it
// resumes to its result.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small file system")
	}
	e := newEnv(t)
	if err := syscall.Mount("tmpfs", e.state, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(e.state, syscall.MNT_DETACH) })
	// Every answer is 50 KB: a 1 MiB state fills after a few calls.
	agent := e.write("agent.sh", "#!/bin/sh\nhead -c 50000 /dev/zero | tr '\\000' x\n")
	script := e.write("big.workflow.js", `export const meta = { name: 'big', description: 'big answers' }
let n = 0
for (let i = 0; i < 40; i++) { n += (await agent('task ' + i)).length }
return n
`)
	flags := []string{"--json", "--command-executor", "big=sh " + agent, "--executor", "big"}
	r := e.dw(append([]string{"run", script}, flags...)...)
	expectCode(t, r, 2)
	o := parseOutcome(t, r)
	if o.Status != "paused" || !strings.Contains(o.PauseReason, "no space left on device") || !strings.Contains(o.PauseReason, "resume") {
		t.Fatalf("a run on a full disk ended %s (%q):\n%s", o.Status, o.PauseReason, r)
	}
	tmp, _ := filepath.Glob(filepath.Join(e.runsDir(), "*.tmp"))
	if len(tmp) != 0 {
		t.Errorf("temp files left behind: %v", tmp)
	}
	s := e.listed(o.RunID)
	recs, _ := readJournal(t, e.journalPath(o.RunID))
	if done := len(finishedAgents(recs)); s.Status != "paused" || s.Stats.Agents != done || done == 0 {
		t.Errorf("listed as %s with %d agents; the journal holds %d finished calls", s.Status, s.Stats.Agents, done)
	}

	if err := syscall.Mount("tmpfs", e.state, "tmpfs", syscall.MS_REMOUNT, "size=64m,mode=0700"); err != nil {
		t.Fatalf("make room: %v", err)
	}
	r = e.dw(append([]string{"resume", o.RunID}, flags...)...)
	expectCode(t, r, 0)
	if o := parseOutcome(t, r); string(o.Result) != fmt.Sprint(40*50000) {
		t.Errorf("resumed to %s, want %d", o.Result, 40*50000)
	}
}
