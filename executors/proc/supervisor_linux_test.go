package proc

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fake runtime is this test binary run again: it starts one agent
// through proc.Run, with or without a supervisor, says so, and waits to be
// killed, as a dynworkflow running an agent would be.
const (
	fakeRuntimeEnv    = "PROC_TEST_FAKE_RUNTIME"    // the agent's shell script
	fakeSupervisedEnv = "PROC_TEST_FAKE_SUPERVISED" // "1" to use a supervisor
	fakeRegistryEnv   = "PROC_TEST_FAKE_REGISTRY"   // the registry's directory
)

func runFakeRuntimeIfAsked() {
	script := os.Getenv(fakeRuntimeEnv)
	if script == "" {
		return
	}
	reg, err := OpenRegistry(os.Getenv(fakeRegistryEnv), nil)
	if err != nil {
		os.Exit(3)
	}
	if os.Getenv(fakeSupervisedEnv) == "1" {
		reg.Supervise(NewSupervisor(nil))
	}
	go func() {
		_, _ = Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", script}, Registry: reg, Name: "launcher"}, func(l []byte) {
			os.Stdout.Write(append(l, '\n'))
		})
	}()
	select {}
}

// launcherScript starts its real work the ways agent launchers do: a child
// in its own session (out of reach of the group kill), a child in the
// launcher's group, then it waits. Each prints its pid.
const launcherScript = `setsid sh -c 'echo session $$; exec sleep 300' &
sleep 300 &
echo group $!
echo launcher $$
wait`

// startFakeRuntime starts the fake runtime and returns it with the pids its
// agent printed, by role.
func startFakeRuntime(t *testing.T, supervised bool) (*exec.Cmd, map[string]int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fakeRuntimeEnv+"="+launcherScript, fakeRegistryEnv+"="+filepath.Join(t.TempDir(), "children"))
	if supervised {
		cmd.Env = append(cmd.Env, fakeSupervisedEnv+"=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	sc := bufio.NewScanner(out)
	for len(pids) < 3 && sc.Scan() {
		role, pid, _ := strings.Cut(sc.Text(), " ")
		pids[role], _ = strconv.Atoi(pid)
	}
	if len(pids) < 3 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the fake runtime's agent printed %v", pids)
	}
	return cmd, pids
}

// running reports whether pid is a process that still runs (a zombie has
// ended).
func running(pid int) bool { return alive(pid) && !zombie(pid) }

// No process an agent started, in any group or session, survives a
// SIGKILL of the runtime by more than a second, without any later
// dynworkflow command: the supervisor sees our death and kills them.
func TestSupervisorKillsEverythingWhenTheRuntimeIsKilled(t *testing.T) {
	rt, pids := startFakeRuntime(t, true)
	if err := rt.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = rt.Wait()
	for time.Since(killed) < time.Second {
		left := 0
		for _, pid := range pids {
			if running(pid) {
				left++
			}
		}
		if left == 0 {
			t.Logf("every agent process was gone %v after the kill", time.Since(killed).Round(time.Millisecond))
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	for role, pid := range pids {
		if running(pid) {
			t.Errorf("the agent's %s process %d is running 1 s after the runtime was killed", role, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// Without a supervisor, Pdeathsig kills the launcher but what it started
// in a session of its own survives: the case the supervisor is for.
func TestWithoutSupervisorAGrandchildSurvives(t *testing.T) {
	rt, pids := startFakeRuntime(t, false)
	defer func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	_ = rt.Process.Signal(syscall.SIGKILL)
	_ = rt.Wait()
	waitGone(t, pids["launcher"])
	time.Sleep(200 * time.Millisecond)
	if !running(pids["session"]) {
		t.Error("the grandchild in its own session died without a supervisor; the supervised test proves nothing")
	}
}

// The supervisor exits once its runtime closes it, and a runtime whose
// supervisor died starts a new one for its next agent.
func TestSupervisorLifecycle(t *testing.T) {
	reg, err := OpenRegistry(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sup := NewSupervisor(nil)
	reg.Supervise(sup)
	run := func() {
		t.Helper()
		var lines []string
		ex, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "echo $PPID"}, Registry: reg}, func(l []byte) {
			lines = append(lines, string(l))
		})
		if err != nil || ex.Code != 0 || len(lines) != 1 {
			t.Fatalf("Run = %+v, %v, %q", ex, err, lines)
		}
		if parent, _ := strconv.Atoi(lines[0]); parent != sup.Pid() || parent == os.Getpid() {
			t.Errorf("the agent's parent is %s, want the supervisor %d", lines[0], sup.Pid())
		}
	}
	run()
	first := sup.Pid()
	_ = syscall.Kill(first, syscall.SIGKILL)
	waitGone(t, first)
	deadline := time.Now().Add(5 * time.Second)
	for sup.Pid() == first && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	run()
	if second := sup.Pid(); second == first || second == 0 {
		t.Errorf("no new supervisor after the first died: %d", second)
	}
	second := sup.Pid()
	if err := sup.Close(); err != nil {
		t.Error(err)
	}
	if running(second) {
		t.Errorf("the supervisor %d still runs after Close", second)
	}
}
