//go:build !linux

package proc

import (
	"errors"
	"os"
	"runtime"
)

// Elsewhere than on Linux there are no child subreapers, so no ancestor:
// a command runs as one process, its agents in process groups of their
// own, and the registry's reap is the only line against what a killed
// dynworkflow leaves running.

// WantsAncestor is always false here.
func WantsAncestor() bool { return false }

// RunAncestor is never called here.
func RunAncestor() (int, error) {
	return 0, errors.New("running under an ancestor process needs Linux")
}

// Main unlocks the main thread and runs body.
func Main(body func() int) int {
	runtime.UnlockOSThread()
	return body()
}

// downErr is always nil: without an ancestor, nothing takes us down but
// our own death.
func downErr() error { return nil }

// Pid is our pid.
func Pid() int { return os.Getpid() }

// ExecEnv is nil: there is no runtime to go on as.
func ExecEnv() []string { return nil }

// noteAgent has nothing to note: there is no runtime to go down.
func noteAgent(int, bool) {}
