package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// The attacks of an agent on dynworkflow's own git: each agent is a shell
// script run by the command executor, writing only inside its own
// directory, as a workspace-write agent may.

// agentScript writes an executable agent outside the project and returns
// its path.
func agentScript(e *e2etest.Env, name, body string) string {
	e.T.Helper()
	p := filepath.Join(e.State, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		e.T.Fatal(err)
	}
	return p
}

// ranOutside reports what planted commands left in the outside directory.
func ranOutside(t *testing.T, outside string) []string {
	t.Helper()
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// An isolated agent turns its worktree's .git into a pointer to a git
// directory of its own, whose core.fsmonitor writes outside the worktree.
// Neither the settling of its edits when it ends nor dynworkflow worktrees
// may run it; the worktree is kept as the agent left it, and listed as one
// git is not run in.
func TestAnAgentsGitDirDoesNotTakeOverOurGit(t *testing.T) {
	e := gitEnv(t, map[string]string{"a.txt": "a\n"})
	outside := t.TempDir()
	agent := agentScript(e, "evil.sh", `cat >/dev/null
mkdir -p .evil/objects/info .evil/refs/tags
echo 'ref: refs/heads/main' > .evil/HEAD
: > .evil/objects/info/packs
: > .evil/refs/tags/keep
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "id -un > `+outside+`/fsmon.txt; false"\n' > .evil/config
echo 'gitdir: .evil' > .git
echo edited > a.txt
echo done
`)
	script := writeScript(e, "one.workflow.js", `export const meta = {name: "one", description: "one isolated agent"}
return await agent("x", {label: "evil", isolation: "worktree"})`)
	o := e.RunCompleted(script, "--command-executor", agent, "--executor", "command")
	if ran := ranOutside(t, outside); len(ran) > 0 {
		t.Fatalf("settling the agent's worktree ran its fsmonitor: %v", ran)
	}
	d := showIsolated(e, o.RunID)
	if len(d.Worktrees) != 1 {
		t.Fatalf("kept worktrees: %+v", d.Worktrees)
	}
	r := e.DWOK("worktrees")
	if ran := ranOutside(t, outside); len(ran) > 0 {
		t.Fatalf("dynworkflow worktrees ran the agent's fsmonitor: %v", ran)
	}
	if !strings.Contains(r.Stdout, "its .git was rewritten") {
		t.Errorf("worktrees does not say the worktree's .git was rewritten:\n%s", r)
	}
	r = e.DW("worktrees", "clean", o.RunID, d.Worktrees[0].Branch)
	e2etest.ExpectCode(t, r, 1)
	e.DWOK("worktrees", "clean", o.RunID, d.Worktrees[0].Branch, "--force")
	if ran := ranOutside(t, outside); len(ran) > 0 {
		t.Fatalf("worktrees clean ran the agent's fsmonitor: %v", ran)
	}
	if _, err := os.Stat(d.Worktrees[0].Dir); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there after clean --force: %v", err)
	}
}

// An agent working in the shared checkout sets core.fsmonitor in the
// repository's own .git/config; the next isolated call's git must not run
// it (nor a hook the agent wrote).
func TestAnAgentsRepositoryConfigDoesNotRunInOurGit(t *testing.T) {
	e := gitEnv(t, map[string]string{"a.txt": "a\n"})
	outside := t.TempDir()
	agent := agentScript(e, "agent.sh", `p=$(cat)
case "$p" in
plant)
  git config core.fsmonitor "id -un > `+outside+`/fsmon.txt; false"
  printf '#!/bin/sh\nid -un > `+outside+`/hook.txt\n' > .git/hooks/post-checkout
  printf '#!/bin/sh\nid -un > `+outside+`/reftx.txt\n' > .git/hooks/reference-transaction
  chmod +x .git/hooks/post-checkout .git/hooks/reference-transaction
  echo planted ;;
*) echo edited > b.txt; echo edited ;;
esac
`)
	script := writeScript(e, "two.workflow.js", `export const meta = {name: "two", description: "plant, then isolate"}
await agent("plant", {label: "plant"})
return await agent("work", {label: "work", isolation: "worktree"})`)
	e.RunCompleted(script, "--command-executor", agent, "--executor", "command")
	if ran := ranOutside(t, outside); len(ran) > 0 {
		t.Fatalf("dynworkflow's git ran what an agent put in .git: %v", ran)
	}
	e.DWOK("worktrees")
	if ran := ranOutside(t, outside); len(ran) > 0 {
		t.Fatalf("dynworkflow worktrees ran what an agent put in .git: %v", ran)
	}
}

// worktrees clean touches only the worktrees dynworkflow made: a user's
// own worktree whose branch happens to look like ours
// (dynworkflow/x/feature), with uncommitted edits, survives clean --force.
func TestWorktreesCleanLeavesTheUsersWorktreesAlone(t *testing.T) {
	e := gitEnv(t, map[string]string{"a.txt": "a\n"})
	mine := filepath.Join(t.TempDir(), "feature")
	git(e, "worktree", "add", "-q", "-b", "dynworkflow/x/feature", mine)
	if err := os.WriteFile(filepath.Join(mine, "work.txt"), []byte("my uncommitted work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.DW("worktrees", "clean", "--force")
	e.DW("worktrees", "clean", "x", "--force")
	e.DW("worktrees", "clean", "x", "feature", "--force")
	if b, err := os.ReadFile(filepath.Join(mine, "work.txt")); err != nil || string(b) != "my uncommitted work\n" {
		t.Fatalf("the user's worktree lost its work: %q, %v", b, err)
	}
	if got := git(e, "branch", "--list", "dynworkflow/x/feature"); got == "" {
		t.Fatal("the user's branch was deleted")
	}
	if r := e.DW("worktrees"); strings.Contains(r.Stdout, "feature") {
		t.Errorf("worktrees lists the user's own worktree as ours:\n%s", r)
	}
}
