package clitest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
)

// Planted describes code a repository ships for an agent CLI to load:
// hooks, extensions, MCP servers. Plant writes it into the project
// directory dir (a git repository); each piece, if it runs, writes a file
// named after itself into marks.
type Planted struct {
	Plant func(t *testing.T, dir, marks string)
	// Env changes the CLI's environment (from Setup) before the calls:
	// to trust the directory in the user's own configuration, say.
	Env func(t *testing.T, env []string, dir string) []string
	// Want lists the marks that must be left, sorted: what runs because
	// the user's own configuration turned it on. Empty: nothing runs.
	Want []string
}

// Mark is a shell command that records, in marks, that name ran.
func Mark(marks, name string) string {
	return fmt.Sprintf("echo ran >> %s", filepath.Join(marks, name))
}

// RunPlanted runs one plain call of the real CLI in a repository that
// plants code for it, under each permission policy, and fails if any of
// that code ran (beyond p.Want): a repository's files must not make the
// CLI run a program under any of dynworkflow's policies.
func RunPlanted(t *testing.T, s Suite, p Planted) {
	Binary(t, s.CLI)
	for _, perm := range []executors.Permissions{executors.ReadOnly, executors.WorkspaceWrite, executors.FullAccess} {
		t.Run(string(perm), func(t *testing.T) {
			t.Parallel()
			srv, reg := Serve(t)
			dir, marks := filepath.Join(t.TempDir(), "repo"), t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			p.Plant(t, dir, marks)
			env := Setup(t, s.CLI, srv.URL())
			if p.Env != nil {
				env = p.Env(t, env, dir)
			}
			ex := s.New(env, reg)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, runErr := ex.Run(ctx, executors.Request{RunID: "test", Path: "/0:agent", Prompt: "say hi", Model: s.Model,
				Dir: dir, Permissions: perm, Attempt: 1}, nil)
			// What the CLI started (a hook, an MCP server) wrote its mark
			// at start-up, before the model answered.
			entries, err := os.ReadDir(marks)
			if err != nil {
				t.Fatal(err)
			}
			var ran []string
			for _, e := range entries {
				ran = append(ran, e.Name())
			}
			if !slices.Equal(ran, p.Want) {
				t.Errorf("%s ran the repository's [%s] under %s, want [%s]", s.CLI, strings.Join(ran, ", "), perm, strings.Join(p.Want, ", "))
			}
			if runErr != nil {
				t.Fatalf("run: %v", runErr)
			}
			if res.Text != fakemodel.TextAnswer {
				t.Errorf("answer %q, want %q", res.Text, fakemodel.TextAnswer)
			}
		})
	}
}
