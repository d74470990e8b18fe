//go:build !temporal

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/dynworkflow/dynworkflow/executors/proc"
)

// companionName is the build of dynworkflow with the Temporal client
// (-tags temporal) that this build hands Temporal's commands to.
const companionName = "dynworkflow-temporal"

// installCompanion is how to install the companion, for the messages
// that need it.
const installCompanion = `go build -tags temporal -o "$(go env GOPATH)/bin/` + companionName + `" ./cmd/dynworkflow (in a checkout)`

// handOver replaces this process with the companion, run with the same
// arguments, environment and standard streams, so that the command goes on
// there as if typed to it: its output, exit code and signals are the
// companion's. It returns only when it could not: an exit-64 error that
// says how to install the companion (wrapping errNoCompanion) when it is
// missing. why says what needs Temporal.
func (a *app) handOver(why string) error {
	self, _ := os.Executable()
	if a.handedOver != "" {
		// The companion found was a build without Temporal too: going on
		// would hand the command back and forth for ever.
		return &exitError{code: exitUsage, kind: codeNoTemporal, err: fmt.Errorf("%s: %w: %s handed this command to %s as its companion %s, which is a build without Temporal too; install the companion with: %s",
			why, errNoCompanion, a.handedOver, self, companionName, installCompanion)}
	}
	path, err := companionPath(self)
	if err != nil {
		return &exitError{code: exitUsage, kind: codeNoTemporal, err: fmt.Errorf("%s: %w, and its companion %s (the build with it) is neither next to %s nor on PATH; install it with: %s",
			why, errNoCompanion, companionName, self, installCompanion)}
	}
	argv := append([]string{path}, os.Args[1:]...)
	// A runtime hands over its place under its ancestor.
	env := append(append(os.Environ(), handedOverEnv+"="+self), proc.ExecEnv()...)
	err = syscall.Exec(path, argv, env)
	return &exitError{code: exitFailed, err: fmt.Errorf("%s: start %s: %w", why, path, err)}
}

// companionPath finds the companion: next to this executable first (the
// two are installed together), then on PATH.
func companionPath(self string) (string, error) {
	if self != "" {
		if p, err := exec.LookPath(filepath.Join(filepath.Dir(self), companionName)); err == nil {
			return p, nil
		}
	}
	return exec.LookPath(companionName)
}
