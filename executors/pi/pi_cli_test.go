package pi_test

import (
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/pi"
	"github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/internal/clitest"
)

// TestRealPi runs the real pi binary against the fake model server over
// chat completions. Pi offers its shell only under full-access.
func TestRealPi(t *testing.T) {
	clitest.RunScenarios(t, clitest.Suite{
		CLI:              clitest.Pi,
		Model:            clitest.PiModel,
		ShellPermissions: executors.FullAccess,
		New: func(env []string, reg *proc.Registry) executors.Executor {
			return pi.New(agentcli.Config{Env: env, Registry: reg})
		},
	})
}

// TestRealPiPermissions is Must-show 1 for pi.
func TestRealPiPermissions(t *testing.T) {
	clitest.RunPermissions(t, clitest.Suite{
		CLI:   clitest.Pi,
		Model: clitest.PiModel,
		New: func(env []string, reg *proc.Registry) executors.Executor {
			return pi.New(agentcli.Config{Env: env, Registry: reg})
		},
	})
}
