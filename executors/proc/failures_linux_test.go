package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/executors"
)

// inChildEnv runs a test's body in a child test process, for a test that
// changes what the whole process may do (its limits).
const inChildEnv = "PROC_TEST_IN_CHILD"

// inChild runs the test named by t in a child test process and reports
// whether the caller is that child, which then runs the body.
func inChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(inChildEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), inChildEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in a child process: %v\n%s", err, out)
	}
	t.Logf("in a child process:\n%s", out)
	return false
}

// A start that fails for want of descriptors is an infrastructure failure,
// ours and not the agent's, with a message that says what ran out and
// what to do; and the next start, once descriptors are free again, runs
// as any other.
func TestDescriptorShortageIsInfrastructure(t *testing.T) {
	if !inChild(t) {
		return
	}
	reg := openRegistry(t)
	run := func() (Exit, error) {
		return Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "cat; echo ok"}, Stdin: []byte("in "), Registry: reg}, nil)
	}
	if _, err := run(); err != nil { // the spawner and poller start outside the limit
		t.Fatal(err)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = uint64(openDescriptors(t)) + 1
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	_, err := run()
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	var ee *executors.Error
	if !errors.As(err, &ee) || ee.Class != executors.Infrastructure {
		t.Fatalf("a start out of descriptors = %v, want an infrastructure failure", err)
	}
	if msg := ee.Error(); !strings.Contains(msg, "too many open files") || !strings.Contains(ee.Fix, "ulimit -n") {
		t.Errorf("message %q, fix %q: want what ran out and what to do", msg, ee.Fix)
	}
	if ex, err := run(); err != nil || ex.Code != 0 {
		t.Errorf("the start after the shortage = %+v, %v; want it to run", ex, err)
	}
}

// openDescriptors counts our open descriptors.
func openDescriptors(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents) - 1 // the directory's own
}

// A runtime going down starts nothing, and the agents it killed on its way
// down did not fail: both are infrastructure failures.
func TestGoingDownIsInfrastructure(t *testing.T) {
	reg := openRegistry(t)
	var down error = errAncestorDied{pid: 1}
	us.down.Store(&down)
	t.Cleanup(func() { us.down.Store(nil) })
	_, err := Run(context.Background(), Spec{Path: "/bin/true", Registry: reg}, nil)
	if executors.ClassOf(err) != executors.Infrastructure || !strings.Contains(err.Error(), "was killed") {
		t.Errorf("a start going down = %v, want an infrastructure failure that says why", err)
	}
}

// An agent that exits while a process that escaped its group holds its
// standard input and output, never reading the one nor closing the other,
// costs Run no more than the grace period, and leaves no goroutine nor
// descriptor of ours behind, whether its input fits in a pipe or not.
func TestEscapedHolderOfStdinLeaksNothing(t *testing.T) {
	script := `setsid sh -c 'echo $$; exec sleep 300' &
sleep 0.1`
	for _, size := range []int{10, 4 << 20} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			reg := openRegistry(t)
			warm, err := Run(context.Background(), Spec{Path: "/bin/true", Registry: reg}, nil)
			if err != nil || warm.Code != 0 {
				t.Fatal(warm, err)
			}
			fds, goroutines := openDescriptors(t), goleak.IgnoreCurrent()
			var escaped int
			started := time.Now()
			ex, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", script}, Stdin: make([]byte, size),
				Grace: 200 * time.Millisecond, Registry: reg}, func(l []byte) { escaped, _ = strconv.Atoi(string(l)) })
			took := time.Since(started)
			if escaped > 0 {
				defer syscall.Kill(escaped, syscall.SIGKILL)
			}
			if err != nil || escaped == 0 {
				t.Fatalf("Run = %+v, %v; the escaped process said %d", ex, err, escaped)
			}
			if !running(escaped) {
				t.Fatal("the escaped process is gone: the test proves nothing")
			}
			t.Logf("Run returned after %v (grace 200ms)", took.Round(time.Millisecond))
			goleak.VerifyNone(t, goroutines, goleak.IgnoreTopFunction("github.com/dynworkflow/dynworkflow/executors/proc.spawnLoop"),
				goleak.IgnoreTopFunction("github.com/dynworkflow/dynworkflow/executors/proc.sinkIgnoredSignals.func1"))
			if now := openDescriptors(t); now != fds {
				t.Errorf("%d descriptors open after Run, %d before", now, fds)
			}
		})
	}
}
