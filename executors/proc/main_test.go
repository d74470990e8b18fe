package proc

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// As in dynworkflow's main: a runtime reaps orphans on the main thread.
func init() { runtime.LockOSThread() }

// testAncestorEnv makes the test binary an ancestor (RunAncestor), whose
// runtime child is the test binary again, a fake runtime.
const testAncestorEnv = "PROC_TEST_ANCESTOR"

// testNofileEnv lowers the ancestor's limit of open files before it starts
// its runtime, to the value it holds.
const testNofileEnv = "PROC_TEST_NOFILE"

// TestMain lets the test binary be an ancestor and a fake runtime, as the
// dynworkflow binary is.
func TestMain(m *testing.M) {
	os.Exit(Main(func() int {
		if os.Getenv(testAncestorEnv) != "" {
			_ = os.Unsetenv(testAncestorEnv)
			var n uint64
			if _, err := fmt.Sscan(os.Getenv(testNofileEnv), &n); err == nil {
				var lim unix.Rlimit
				_ = unix.Getrlimit(unix.RLIMIT_NOFILE, &lim)
				lim.Cur = n
				if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
					fmt.Fprintln(os.Stderr, "setrlimit:", err)
					return 125
				}
			}
			code, err := RunAncestor()
			if err != nil {
				fmt.Fprintln(os.Stderr, "ancestor:", err)
				return 125
			}
			return code
		}
		runFakeRuntimeIfAsked()
		return m.Run()
	}))
}
