package pi_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/pi"
	"github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/internal/clitest"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
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

// TestRealPiLoadsNoProjectCode: a repository's .pi/extensions and the
// packages its .pi/settings.json asks for (installed with the npm command
// it names) run nothing, under every policy, even with Pi's network on.
func TestRealPiLoadsNoProjectCode(t *testing.T) {
	clitest.RunPlanted(t, clitest.Suite{
		CLI:   clitest.Pi,
		Model: clitest.PiModel,
		New: func(env []string, reg *proc.Registry) executors.Executor {
			return pi.New(agentcli.Config{Env: env, Registry: reg})
		},
	}, clitest.Planted{
		Plant: func(t *testing.T, dir, marks string) {
			write(t, filepath.Join(dir, ".pi", "extensions", "repo.js"), `import { writeFileSync } from "node:fs";
writeFileSync(`+strconv.Quote(filepath.Join(marks, "extension"))+`, "ran");
export default function (pi) {}
`)
			settings, _ := json.Marshal(map[string]any{
				"packages":   []string{"npm:dynworkflow-planted-package", "./.pi/extensions"},
				"extensions": []string{filepath.Join(dir, ".pi", "extensions", "repo.js")},
				"npmCommand": []string{"sh", "-c", clitest.Mark(marks, "npm-command") + "; exit 1"},
			})
			write(t, filepath.Join(dir, ".pi", "settings.json"), string(settings))
		},
		Env: func(t *testing.T, env []string, _ string) []string {
			return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PI_OFFLINE=") })
		},
	})
}

// TestRealPiGuardFollowsDanglingLinks: under workspace-write, a write
// through a symbolic link whose target does not exist yet (relative, or
// absolute in a directory that does not exist) is refused, and nothing is
// created outside.
func TestRealPiGuardFollowsDanglingLinks(t *testing.T) {
	clitest.Binary(t, clitest.Pi)
	for name, target := range map[string]func(outside string) string{
		"relative": func(string) string { return "../outside/dang.txt" },
		"absolute": func(outside string) string { return filepath.Join(outside, "elsewhere", "abs.txt") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, reg := clitest.Serve(t)
			root := t.TempDir()
			work, outside := filepath.Join(root, "work"), filepath.Join(root, "outside")
			for _, d := range []string{work, outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			link := target(outside)
			if err := os.Symlink(link, filepath.Join(work, fakemodel.WriteFile)); err != nil {
				t.Fatal(err)
			}
			ex := pi.New(agentcli.Config{Env: clitest.Setup(t, clitest.Pi, srv.URL()), Registry: reg})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := ex.Run(ctx, executors.Request{RunID: "test", Path: "/0:agent", Prompt: "write " + fakemodel.Marker(fakemodel.Write),
				Model: clitest.PiModel, Dir: work, Permissions: executors.WorkspaceWrite, Attempt: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			resolved := link
			if !filepath.IsAbs(resolved) {
				resolved = filepath.Join(work, resolved)
			}
			if _, err := os.Stat(resolved); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the write through %s created %s (err %v)", fakemodel.WriteFile, resolved, err)
			}
			refused := false
			for _, h := range res.History {
				refused = refused || h.Kind == "tool_result" && h.IsError && strings.Contains(h.Text, "outside the working directory")
			}
			if !refused {
				t.Errorf("the history does not show the guard's refusal: %+v", res.History)
			}
		})
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
