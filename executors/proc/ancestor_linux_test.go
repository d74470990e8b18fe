package proc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The fake runtime is this test binary run again: it says who it is, then
// starts agents through Run, printing their output, as a dynworkflow
// running agents would.
const (
	fakeRuntimeEnv  = "PROC_TEST_FAKE_RUNTIME"  // the agents' shell script; $1 is the agent's number
	fakeAgentsEnv   = "PROC_TEST_FAKE_AGENTS"   // "N C": N agents, C at a time, then exit 0; unset: one, then wait
	fakeExitEnv     = "PROC_TEST_FAKE_EXIT"     // with one agent: exit with this code once it has exited
	fakeRegistryEnv = "PROC_TEST_FAKE_REGISTRY" // the registry's directory
)

// gone is how long a test waits for processes to die before failing: far
// more than they take (the tests log how long that was), so that a loaded
// machine does not fail them.
const gone = 10 * time.Second

func runFakeRuntimeIfAsked() {
	script := os.Getenv(fakeRuntimeEnv)
	if script == "" {
		return
	}
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		fmt.Printf(format+"\n", args...)
		out.Unlock()
	}
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	go func() {
		<-terms
		say("terminated")
		os.Exit(3)
	}()
	var subreaper int32
	_ = unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&subreaper)), 0, 0, 0)
	say("runtime %d %d %d", os.Getpid(), os.Getppid(), subreaper)
	reg, err := OpenRegistry(os.Getenv(fakeRegistryEnv), nil)
	if err != nil {
		os.Exit(4)
	}
	agent := func(i int) {
		ex, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", script, "sh", strconv.Itoa(i)}, Registry: reg, Name: "agent"},
			func(l []byte) { say("%s", l) })
		if err != nil {
			say("error %v", err)
		} else if ex.Signal != 0 {
			say("ended %s", ex)
		}
	}
	var n, c int
	if _, err := fmt.Sscan(os.Getenv(fakeAgentsEnv), &n, &c); err != nil {
		agent(0)
		if code, err := strconv.Atoi(os.Getenv(fakeExitEnv)); err == nil {
			os.Exit(code)
		}
		select {}
	}
	slots := make(chan struct{}, c)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			agent(i)
		})
	}
	wg.Wait()
	os.Exit(0)
}

// tree is a fake runtime running, under an ancestor or alone.
type tree struct {
	t *testing.T
	// top is the process the test started: the ancestor, or the runtime
	// when it runs alone.
	top    *exec.Cmd
	exited chan struct{}
	// runtime, its parent, and whether it is a child subreaper.
	runtime, parent int
	subreaper       bool
	lines           chan string // the rest of standard output
}

// startTree starts the fake runtime with the agent script, under an
// ancestor (in a process group of its own) unless alone.
func startTree(t *testing.T, alone bool, script string, env ...string) *tree {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fakeRuntimeEnv+"="+script, fakeRegistryEnv+"="+filepath.Join(t.TempDir(), "children"))
	if !alone {
		cmd.Env = append(cmd.Env, testAncestorEnv+"=1")
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	// Not cmd.StdoutPipe: Wait closes that once the ancestor has exited,
	// and the runtime, which shares it, would die of SIGPIPE at its next
	// line, not of its ancestor's death. Ours is read until every writer
	// is gone.
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		t.Fatal(err)
	}
	tr := &tree{t: t, top: cmd, exited: make(chan struct{}), lines: make(chan string, 1024)}
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("the fake runtime said nothing")
	}
	var sub int
	if _, err := fmt.Sscanf(sc.Text(), "runtime %d %d %d", &tr.runtime, &tr.parent, &sub); err != nil {
		t.Fatalf("the fake runtime said %q", sc.Text())
	}
	tr.subreaper = sub == 1
	go func() {
		defer out.Close()
		for sc.Scan() {
			tr.lines <- sc.Text()
		}
		close(tr.lines)
	}()
	go func() {
		_ = cmd.Wait()
		close(tr.exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = syscall.Kill(tr.runtime, syscall.SIGKILL)
		<-tr.exited
	})
	return tr
}

// roles reads lines "ROLE PID" until it has n of them.
func (tr *tree) roles(n int) map[string]int {
	tr.t.Helper()
	pids := map[string]int{}
	for len(pids) < n {
		l, ok := <-tr.lines
		if !ok {
			tr.t.Fatalf("the fake runtime's agents printed only %v", pids)
		}
		role, pid, _ := strings.Cut(l, " ")
		pids[role], _ = strconv.Atoi(pid)
	}
	return pids
}

// wait waits for the process the test started to end, and returns how.
func (tr *tree) wait() *os.ProcessState {
	tr.t.Helper()
	select {
	case <-tr.exited:
	case <-time.After(gone):
		tr.t.Fatalf("process %d did not end", tr.top.Process.Pid)
	}
	return tr.top.ProcessState
}

// launcherScript starts its real work the ways agent launchers do: a child
// in its own session (out of reach of the group kill), a child in the
// launcher's group, then it waits. Each prints its pid.
const launcherScript = `setsid sh -c 'echo session $$; exec sleep 300' &
sleep 300 &
echo group $!
echo launcher $$
wait`

// running reports whether pid is a process that still runs (a zombie has
// ended).
func running(pid int) bool { return alive(pid) && !zombie(pid) }

// waitAllGone waits until none of pids runs, and fails the test for each
// that still does after a long while.
func waitAllGone(t *testing.T, since time.Time, pids map[string]int) {
	t.Helper()
	for time.Since(since) < gone {
		left := 0
		for _, pid := range pids {
			if running(pid) {
				left++
			}
		}
		if left == 0 {
			t.Logf("every process was gone %v after the kill", time.Since(since).Round(time.Millisecond))
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	for role, pid := range pids {
		if running(pid) {
			t.Errorf("the %s process %d is running %v after the kill", role, pid, gone)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// The runtime is the ancestor's child and a child subreaper, and it starts
// its agents itself: no helper stands between them. This fails when
// supervision is off (no ancestor, or a runtime that is not a subreaper).
func TestRuntimeRunsUnderItsAncestor(t *testing.T) {
	tr := startTree(t, false, `echo parent $PPID; echo self $$`)
	if tr.parent != tr.top.Process.Pid {
		t.Errorf("the runtime's parent is %d, want the ancestor %d", tr.parent, tr.top.Process.Pid)
	}
	if !tr.subreaper {
		t.Error("the runtime is not a child subreaper")
	}
	pids := tr.roles(2)
	if pids["parent"] != tr.runtime {
		t.Errorf("the agent's parent is %d, want the runtime %d", pids["parent"], tr.runtime)
	}
	if pg, err := unix.Getpgid(tr.runtime); err != nil || pg != tr.runtime {
		t.Errorf("the runtime's process group is %d (%v), want its own", pg, err)
	}
}

// No process an agent started, in any group or session, outlives the
// runtime, however it or its ancestor is killed, without any later start.
func TestTheAgentsTreeDiesWithTheRuntime(t *testing.T) {
	kills := []struct {
		name string
		kill func(tr *tree) error
		// ancestorSignal is how the ancestor must end: the runtime's way.
		ancestorSignal syscall.Signal
	}{
		{"SIGKILL of the ancestor", func(tr *tree) error { return tr.top.Process.Kill() }, syscall.SIGKILL},
		{"SIGKILL of the ancestor's process group", func(tr *tree) error { return syscall.Kill(-tr.top.Process.Pid, syscall.SIGKILL) }, syscall.SIGKILL},
		{"SIGKILL of the runtime", func(tr *tree) error { return syscall.Kill(tr.runtime, syscall.SIGKILL) }, syscall.SIGKILL},
		{"SIGTERM of the runtime, which exits", func(tr *tree) error { return syscall.Kill(tr.runtime, syscall.SIGTERM) }, 0},
	}
	for _, k := range kills {
		t.Run(k.name, func(t *testing.T) {
			tr := startTree(t, false, launcherScript)
			pids := tr.roles(3)
			pids["runtime"] = tr.runtime
			if err := k.kill(tr); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			st := tr.wait()
			waitAllGone(t, killed, pids)
			ws := st.Sys().(syscall.WaitStatus)
			switch {
			case k.ancestorSignal != 0 && (!ws.Signaled() || ws.Signal() != k.ancestorSignal):
				t.Errorf("the ancestor ended with %v, want killed by %v", st, k.ancestorSignal)
			case k.ancestorSignal == 0 && ws.ExitStatus() != 3:
				t.Errorf("the ancestor ended with %v, want the runtime's exit status 3", st)
			}
		})
	}
}

// A runtime going down with its ancestor sees none of its agents die: it
// would take that for the agent's failure and record it (a call failed, a
// worktree settled) when a SIGKILL was all there was. The agents die with
// it instead, frozen until then.
func TestGoingDownNoAgentIsSeenToDie(t *testing.T) {
	for range 5 {
		tr := startTree(t, false, `echo started $$; exec sleep 300`, fakeAgentsEnv+"=4 4")
		pids := tr.roles(1)
		time.Sleep(20 * time.Millisecond) // the other three start too
		if err := tr.top.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		tr.wait()
		for l := range tr.lines {
			if strings.HasPrefix(l, "ended") || strings.HasPrefix(l, "error") {
				t.Errorf("the runtime saw its agent end as it went down: %s", l)
			}
		}
		waitAllGone(t, time.Now(), map[string]int{"runtime": tr.runtime, "agent": pids["started"]})
	}
}

// Without an ancestor, Pdeathsig kills the launcher but what it started in
// a session of its own survives: the case the ancestor is for.
func TestWithoutAncestorAGrandchildSurvives(t *testing.T) {
	tr := startTree(t, true, launcherScript)
	pids := tr.roles(3)
	defer func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	if tr.parent == tr.top.Process.Pid {
		t.Fatal("the fake runtime has an ancestor")
	}
	_ = tr.top.Process.Kill()
	tr.wait()
	waitGone(t, pids["launcher"])
	time.Sleep(200 * time.Millisecond)
	if !running(pids["session"]) {
		t.Error("the grandchild in its own session died without an ancestor; the tests above prove nothing")
	}
}

// The ancestor forwards the signals it gets to the runtime and ends as the
// runtime ended: with its exit code, or killed by its signal.
func TestTheAncestorEndsAsItsRuntime(t *testing.T) {
	t.Run("exit code", func(t *testing.T) {
		tr := startTree(t, false, `echo done 1`, fakeExitEnv+"=7")
		if st := tr.wait(); st.ExitCode() != 7 {
			t.Errorf("the ancestor ended with %v, want exit status 7", st)
		}
	})
	t.Run("SIGTERM forwarded", func(t *testing.T) {
		tr := startTree(t, false, `sleep 300`)
		_ = tr.top.Process.Signal(syscall.SIGTERM)
		if st := tr.wait(); st.ExitCode() != 3 {
			t.Errorf("the ancestor ended with %v, want the runtime's exit status 3 on SIGTERM", st)
		}
		if l := <-tr.lines; l != "terminated" {
			t.Errorf("the runtime said %q, want terminated", l)
		}
	})
	t.Run("SIGINT forwarded, and the death by it", func(t *testing.T) {
		tr := startTree(t, false, `sleep 300`)
		_ = tr.top.Process.Signal(syscall.SIGINT)
		st := tr.wait()
		if ws := st.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGINT {
			t.Errorf("the ancestor ended with %v, want killed by SIGINT as the runtime was", st)
		}
	})
}

// Agents start with every signal at its default and none blocked, as if
// started from a clean shell, even when dynworkflow itself was started
// with SIGHUP, SIGINT and SIGPIPE ignored (nohup, the background of a
// shell script): a shell agent can trap SIGINT and `yes | head -1` ends
// quietly. The runtime itself still ignores SIGHUP as it was asked to.
func TestAgentsStartWithDefaultSignals(t *testing.T) {
	script := `grep -E '^Sig(Ign|Blk):' /proc/self/status | tr -d '\t'
trap 'echo trapped INT' INT
kill -INT $$
{ yes | head -1; } 2>&1 | sed 's/^/yes /'
echo end 1`
	for _, tc := range []struct {
		name  string
		alone bool
	}{{"under an ancestor", false}, {"alone", true}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := startTreeIgnoring(t, tc.alone, script)
			var got []string
			for l := range tr.lines {
				got = append(got, l)
				if l == "end 1" {
					break
				}
			}
			want := []string{"SigBlk:0000000000000000", "SigIgn:0000000000000000", "trapped INT", "yes y", "end 1"}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("the agent said %q, want %q", got, want)
			}
			if err := syscall.Kill(tr.runtime, syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			if !running(tr.runtime) {
				t.Error("the runtime, started with SIGHUP ignored, died of a SIGHUP")
			}
		})
	}
}

// startTreeIgnoring is startTree with SIGHUP, SIGINT and SIGPIPE ignored
// from the start, as nohup and a non-interactive shell's & do.
func startTreeIgnoring(t *testing.T, alone bool, script string) *tree {
	t.Helper()
	// The test binary must not ignore them itself; a shell sets them
	// ignored for what it execs.
	sh := filepath.Join(t.TempDir(), "ignoring")
	if err := os.WriteFile(sh, []byte("#!/bin/sh\ntrap '' HUP INT PIPE\nexec \""+os.Args[0]+"\" \"$@\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	old := os.Args[0]
	os.Args[0] = sh
	defer func() { os.Args[0] = old }()
	return startTree(t, alone, script)
}

// After the ancestor is killed the runtime starts no agent: a runtime that
// starts agents as fast as it can loses its ancestor at various moments,
// and no agent that wrote its witness was forked after the ancestor died
// (but for one whose start was under way: inFlight), nor wrote after the
// runtime was gone, and nothing the runtime forked outlives it.
func TestNoAgentStartsOnceTheAncestorDied(t *testing.T) {
	dir := t.TempDir()
	for round := range 10 {
		witness := filepath.Join(dir, fmt.Sprintf("witness-%d", round))
		script := fmt.Sprintf(`read -r s < /proc/self/stat; set -- $s; echo "$1 ${22}" >> %s`, witness)
		tr := startTree(t, false, script, fakeAgentsEnv+"=100000 8")
		for {
			if b, _ := os.ReadFile(witness); len(b) > 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(round*7) * time.Millisecond)
		if err := tr.top.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		// The ancestor is dead once reaped: that moment, not the kill's
		// (a loaded machine may take a while to end it), is the one after
		// which the runtime must start nothing.
		tr.wait()
		killedAt := ticksNow(t)
		for running(tr.runtime) {
			time.Sleep(time.Millisecond)
		}
		goneAt := time.Now()
		time.Sleep(200 * time.Millisecond)
		fi, err := os.Stat(witness)
		if err != nil {
			t.Fatal(err)
		}
		if fi.ModTime().After(goneAt) {
			t.Errorf("round %d: an agent wrote its witness %v after the runtime was gone", round, fi.ModTime().Sub(goneAt))
		}
		b, _ := os.ReadFile(witness)
		late, lines := 0, strings.Split(strings.TrimSpace(string(b)), "\n")
		for _, l := range lines {
			var pid int
			var start uint64
			if _, err := fmt.Sscan(l, &pid, &start); err != nil {
				t.Fatalf("witness line %q", l)
			}
			if start > killedAt+inFlight {
				late++
			}
		}
		if late > 0 {
			t.Errorf("round %d: %d of %d agents were forked after the ancestor was killed", round, late, len(lines))
		}
		// Nothing the runtime started outlives it: not an agent, nor a
		// child forked but not yet exec'd, still in the runtime's group.
		left := map[string]int{}
		for _, pid := range groupMembers(tr.runtime) {
			if pid != tr.runtime {
				left[fmt.Sprintf("child %d in the runtime's group", pid)] = pid
			}
		}
		if len(left) > 0 {
			waitAllGone(t, goneAt, left)
		}
	}
}

// inFlight is how many clock ticks after its ancestor's death a runtime
// may still fork an agent: one whose start was under way, checked before
// the death and forked just after it (the spawner kills it as soon as it
// has exec'd, but it may have run a few instructions). A runtime that
// went on starting agents would fork them long after.
const inFlight = 5

// ticksNow is the time since boot in clock ticks, the unit of a process's
// start time in /proc/PID/stat.
func ticksNow(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	var up float64
	if _, err := fmt.Sscan(string(b), &up); err != nil {
		t.Fatal(err)
	}
	const userHZ = 100 // sysconf(_SC_CLK_TCK) on Linux
	return uint64(up * userHZ)
}

// An ancestor that cannot start its runtime for want of descriptors says
// so, keeps trying, and starts it, supervised, once the limit is raised:
// it never runs the command without supervision.
func TestAncestorWaitsOutADescriptorShortage(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), testAncestorEnv+"=1", testNofileEnv+"=3", fakeRuntimeEnv+"=echo agent 1",
		fakeExitEnv+"=0", fakeRegistryEnv+"="+filepath.Join(t.TempDir(), "children"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil || !strings.Contains(line, "too many open files") {
		t.Fatalf("the ancestor said %q (%v), want that it cannot start the runtime yet for want of descriptors", line, err)
	}
	lim := unix.Rlimit{Cur: 1024, Max: 1024}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the ancestor ended with %v once the limit was raised; stdout:\n%s", err, stdout.String())
	}
	var rt, parent, sub int
	if _, err := fmt.Sscanf(stdout.String(), "runtime %d %d %d", &rt, &parent, &sub); err != nil || parent != cmd.Process.Pid || sub != 1 {
		t.Errorf("the runtime said %q, want a subreaper child of the ancestor %d", stdout.String(), cmd.Process.Pid)
	}
}
