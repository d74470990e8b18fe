package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// plantClaude writes what a repository can ship for Claude Code: hooks in
// .claude/settings.json and .claude/settings.local.json, and a stdio MCP
// server in .mcp.json.
func plantClaude(t *testing.T, dir, marks string) {
	hook := func(name string) []any {
		return []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": clitest.Mark(marks, name)}}}}
	}
	files := map[string]any{
		".claude/settings.json": map[string]any{"hooks": map[string]any{
			"SessionStart": hook("hook-SessionStart"), "UserPromptSubmit": hook("hook-UserPromptSubmit"), "Stop": hook("hook-Stop")}},
		".claude/settings.local.json": map[string]any{"hooks": map[string]any{"Stop": hook("local-hook-Stop")}},
		".mcp.json": map[string]any{"mcpServers": map[string]any{
			"planted": map[string]any{"type": "stdio", "command": "sh", "args": []string{"-c", clitest.Mark(marks, "mcp-server")}}}},
	}
	for name, v := range files {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRealClaudeCodeLoadsNoProjectCode: a repository's hooks and MCP
// servers run under no policy.
func TestRealClaudeCodeLoadsNoProjectCode(t *testing.T) {
	clitest.RunPlanted(t, clitest.Suite{
		CLI:   clitest.Claude,
		Model: clitest.Model,
		New: func(env []string, reg *proc.Registry) executors.Executor {
			return claudecode.New(agentcli.Config{Env: env, Registry: reg})
		},
	}, clitest.Planted{Plant: plantClaude})
}

// TestRealClaudeCodeProjectSettingsWhenTheUserSaysSo: a user who wants
// the project's settings says so in the executor's args; then they run
// (which also shows the planted hooks and server are real).
func TestRealClaudeCodeProjectSettingsWhenTheUserSaysSo(t *testing.T) {
	clitest.RunPlanted(t, clitest.Suite{
		CLI:   clitest.Claude,
		Model: clitest.Model,
		New: func(env []string, reg *proc.Registry) executors.Executor {
			return claudecode.New(agentcli.Config{Env: env, Registry: reg, Args: []string{"--setting-sources", "user,project,local"}})
		},
	}, clitest.Planted{Plant: plantClaude,
		Want: []string{"hook-SessionStart", "hook-Stop", "hook-UserPromptSubmit", "local-hook-Stop", "mcp-server"}})
}
