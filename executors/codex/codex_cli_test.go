package codex_test

import (
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/codex"
	"github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/internal/clitest"
)

// TestRealCodex runs the real codex binary against the fake model server.
func TestRealCodex(t *testing.T) {
	clitest.RunScenarios(t, clitest.Suite{
		CLI:   clitest.Codex,
		Model: clitest.Model,
		New: func(env []string, reg *proc.Registry) executors.Executor {
			return codex.New(agentcli.Config{Env: env, Registry: reg})
		},
	})
}

// TestRealCodexPermissions is Must-show 1 for codex: workspace-write lets
// the agent write its directory; read-only refuses, and says so.
func TestRealCodexPermissions(t *testing.T) {
	clitest.RunPermissions(t, clitest.Suite{
		CLI:         clitest.Codex,
		Model:       clitest.Model,
		TmpWritable: true,
		New: func(env []string, reg *proc.Registry) executors.Executor {
			return codex.New(agentcli.Config{Env: env, Registry: reg})
		},
	})
}
