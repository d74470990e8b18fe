//go:build !linux

package proc

import (
	"errors"
	"io"
	"log/slog"
	"time"
)

// SupervisorEnv names the variable that makes the program a supervisor.
const SupervisorEnv = "DYNWORKFLOW_SUPERVISOR_FD"

// A Supervisor needs Linux's child subreapers; elsewhere it is always
// disabled and children start as before.
type Supervisor struct{}

// NewSupervisor returns nil: children are not supervised here.
func NewSupervisor(*slog.Logger) *Supervisor { return nil }

// Pid is always 0: no helper runs.
func (s *Supervisor) Pid() int { return 0 }

// Close does nothing.
func (s *Supervisor) Close() error { return nil }

// RunSupervisorIfAsked returns at once.
func RunSupervisorIfAsked() {}

func startSupervised(*Supervisor, Spec, io.Writer, io.Writer, time.Duration) (child, error) {
	return nil, errors.New("agent supervision needs Linux")
}
