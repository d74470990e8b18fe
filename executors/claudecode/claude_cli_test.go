package claudecode_test

import (
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/claudecode"
	"github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/internal/clitest"
)

// TestRealClaudeCode runs the real claude binary against the fake model
// server. A cut stream is not an error here: Claude Code retries the
// request without streaming by itself, and reports the retry's usage plus,
// when it read it before the cut, the cut attempt's.
func TestRealClaudeCode(t *testing.T) {
	clitest.RunScenarios(t, clitest.Suite{
		CLI:         clitest.Claude,
		Model:       clitest.Model,
		CutRecovers: true,
		WantCost:    true,
		New: func(env []string, reg *proc.Registry) executors.Executor {
			return claudecode.New(agentcli.Config{Env: env, Registry: reg})
		},
	})
}

// TestRealClaudeCodePermissions is Must-show 1 for claude-code.
func TestRealClaudeCodePermissions(t *testing.T) {
	clitest.RunPermissions(t, clitest.Suite{
		CLI:   clitest.Claude,
		Model: clitest.Model,
		New: func(env []string, reg *proc.Registry) executors.Executor {
			return claudecode.New(agentcli.Config{Env: env, Registry: reg})
		},
	})
}
