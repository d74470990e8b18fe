package codex_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/codex"
	"github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/internal/clitest"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
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

// TestRealCodexLoadsNoProjectCode: in a directory the user trusted in
// their own Codex configuration, the repository's .codex/config.toml
// would start its MCP server and notify program outside the sandbox; they
// run under no policy.
func TestRealCodexLoadsNoProjectCode(t *testing.T) {
	clitest.RunPlanted(t, clitest.Suite{
		CLI:   clitest.Codex,
		Model: clitest.Model,
		New: func(env []string, reg *proc.Registry) executors.Executor {
			return codex.New(agentcli.Config{Env: env, Registry: reg})
		},
	}, clitest.Planted{
		Plant: func(t *testing.T, dir, marks string) {
			config := fmt.Sprintf("notify = [\"sh\", \"-c\", %q]\n\n[mcp_servers.planted]\ncommand = \"sh\"\nargs = [\"-c\", %q]\n",
				clitest.Mark(marks, "notify"), clitest.Mark(marks, "mcp-server"))
			if err := os.MkdirAll(filepath.Join(dir, ".codex"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".codex", "config.toml"), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		Env: trustInUserConfig,
	})
}

// trustInUserConfig marks dir trusted in the CODEX_HOME of env, as Codex
// does when its user trusts a folder.
func trustInUserConfig(t *testing.T, env []string, dir string) []string {
	t.Helper()
	for _, kv := range env {
		if home, ok := strings.CutPrefix(kv, "CODEX_HOME="); ok {
			f, err := os.OpenFile(filepath.Join(home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := fmt.Fprintf(f, "\n[projects.%q]\ntrust_level = \"trusted\"\n", dir); err != nil {
				t.Fatal(err)
			}
		}
	}
	return env
}

// TestRealCodexShadowHomeKeepsTheUsersOwn: the call runs with the user's
// login and configuration (the fake provider is only in the user's
// config.toml), the user's CODEX_HOME is left as it was but for Codex's
// own databases, and no shadow is left behind.
func TestRealCodexShadowHomeKeepsTheUsersOwn(t *testing.T) {
	clitest.Binary(t, clitest.Codex)
	srv, reg := clitest.Serve(t)
	dir := t.TempDir()
	env := trustInUserConfig(t, clitest.Setup(t, clitest.Codex, srv.URL()), dir)
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CODEX_HOME="); ok {
			home = v
		}
	}
	before, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	ex := codex.New(agentcli.Config{Env: env, Registry: reg, Scratch: scratch})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := ex.Run(ctx, executors.Request{RunID: "test", Path: "/0:agent", Prompt: "say hi", Model: clitest.Model, Dir: dir, Attempt: 1}, nil)
	if err != nil || res.Text != fakemodel.TextAnswer {
		t.Fatalf("run: %q, %v", res.Text, err)
	}
	after, _ := os.ReadFile(filepath.Join(home, "config.toml"))
	if string(after) != string(before) {
		t.Errorf("the user's config.toml changed:\n%s", after)
	}
	if entries, _ := os.ReadDir(scratch); len(entries) > 0 {
		t.Errorf("shadow homes left behind: %v", entries)
	}
	if dbs, _ := filepath.Glob(filepath.Join(home, "*.sqlite")); len(dbs) == 0 {
		t.Error("Codex's databases are not in the user's CODEX_HOME")
	}
}
