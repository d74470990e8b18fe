package worktree_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/gittest"
	"github.com/dynworkflow/dynworkflow/internal/worktree"
)

// planted is a command that leaves a mark when it runs: the proof that git
// ran a program the repository named.
func planted(t *testing.T, marks, name string) string {
	t.Helper()
	return fmt.Sprintf("echo %s >> %s; cat", name, filepath.Join(marks, name))
}

// marksLeft lists the programs that ran.
func marksLeft(t *testing.T, marks string) []string {
	t.Helper()
	entries, err := os.ReadDir(marks)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// plantHook writes an executable hook that leaves a mark.
func plantHook(t *testing.T, hooks, marks, name string) {
	t.Helper()
	path := filepath.Join(hooks, name)
	writeFile(t, path, "#!/bin/sh\n"+planted(t, marks, "hook-"+name)+" </dev/null >/dev/null\n")
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// An agent working in the shared checkout (no isolation) can write the
// repository's .git: its configuration, the files it includes, its hooks.
// None of what it names may run when dynworkflow's own git makes, settles,
// inspects or removes a worktree. The user's own settings (identity) still
// apply.
func TestRepositoryConfigRunsNothing(t *testing.T) {
	isolateGit(t)
	ctx := context.Background()
	marks := t.TempDir()
	repo := newRepo(t, map[string]string{"a.txt": "a\n", "b.bin": "b\n", ".gitattributes": "*.txt filter=evil diff=evil merge=evil\n*.bin filter=inc\n"})
	gittest.Git(t, repo, "config", "core.fsmonitor", planted(t, marks, "fsmonitor"))
	gittest.Git(t, repo, "config", "filter.evil.clean", planted(t, marks, "clean"))
	gittest.Git(t, repo, "config", "filter.evil.smudge", planted(t, marks, "smudge"))
	gittest.Git(t, repo, "config", "filter.evil.required", "true")
	gittest.Git(t, repo, "config", "diff.evil.textconv", planted(t, marks, "textconv"))
	gittest.Git(t, repo, "config", "diff.evil.command", planted(t, marks, "diffcommand"))
	gittest.Git(t, repo, "config", "merge.evil.driver", planted(t, marks, "mergedriver"))
	gittest.Git(t, repo, "config", "diff.external", planted(t, marks, "extdiff"))
	gittest.Git(t, repo, "config", "credential.helper", "!"+planted(t, marks, "credential"))
	gittest.Git(t, repo, "config", "core.sshCommand", planted(t, marks, "ssh"))
	gittest.Git(t, repo, "config", "core.pager", planted(t, marks, "pager"))
	gittest.Git(t, repo, "config", "core.editor", planted(t, marks, "editor"))
	gittest.Git(t, repo, "config", "gpg.program", planted(t, marks, "gpg"))
	gittest.Git(t, repo, "config", "commit.gpgSign", "true")
	// A configuration file the repository's includes: read as its own.
	inc := filepath.Join(repo, ".git", "more.cfg")
	writeFile(t, inc, "[filter \"inc\"]\n\tclean = "+planted(t, marks, "included-clean")+"\n\tprocess = "+planted(t, marks, "included-process")+"\n")
	gittest.Git(t, repo, "config", "include.path", inc)
	for _, h := range []string{"post-checkout", "reference-transaction", "pre-commit", "commit-msg", "post-commit", "pre-auto-gc", "post-index-change"} {
		plantHook(t, filepath.Join(repo, ".git", "hooks"), marks, h)
	}
	// Even the hooks directory the repository names is not used.
	gittest.Git(t, repo, "config", "core.hooksPath", filepath.Join(repo, ".githooks"))
	plantHook(t, filepath.Join(repo, ".githooks"), marks, "post-checkout")

	r := open(t, repo)
	tr := add(t, r, t.TempDir(), "w")
	// The agent edits tracked files of both drivers and adds one.
	writeFile(t, filepath.Join(tr.Dir, "a.txt"), "changed\n")
	writeFile(t, filepath.Join(tr.Dir, "b.bin"), "changed\n")
	writeFile(t, filepath.Join(tr.Dir, "new.txt"), "new\n")
	if dirty, err := tr.Dirty(ctx); err != nil || !dirty {
		t.Fatalf("Dirty = %v, %v; want true", dirty, err)
	}
	out, err := tr.Settle(ctx, "edits")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.Stat.Files != 3 {
		t.Errorf("Settle = %+v, want the three files committed", out)
	}
	if author := gittest.Git(t, tr.Dir, "log", "-1", "--format=%an"); author != "Tester" {
		t.Errorf("the commit's author is %q, want the user's own Tester", author)
	}
	if _, err := r.IsAncestor(ctx, out.Head, out.Head); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DiffStat(ctx, tr.Base, out.Head); err != nil {
		t.Fatal(err)
	}
	if err := tr.Remove(ctx, out.Head, false); err != nil {
		t.Fatal(err)
	}
	if ran := marksLeft(t, marks); len(ran) > 0 {
		t.Errorf("dynworkflow's git ran what the repository's configuration names: %v", ran)
	}
}

// The user's own filters (git-lfs is one, configured in the global file)
// still run in the worktrees, as they do for the user's own git.
func TestUsersOwnFilterStillRuns(t *testing.T) {
	isolateGit(t)
	marks := t.TempDir()
	global := os.Getenv("GIT_CONFIG_GLOBAL")
	gittest.Git(t, t.TempDir(), "config", "--file", global, "filter.mine.smudge", planted(t, marks, "smudge"))
	gittest.Git(t, t.TempDir(), "config", "--file", global, "filter.mine.clean", "cat")
	repo := newRepo(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=mine\n"})
	// The repository's attempt to take the user's filter over is ignored.
	gittest.Git(t, repo, "config", "filter.mine.smudge", planted(t, marks, "repo-smudge"))
	tr := add(t, open(t, repo), t.TempDir(), "w")
	if got := readFile(t, filepath.Join(tr.Dir, "a.txt")); got != "a\n" {
		t.Errorf("a.txt = %q", got)
	}
	if ran := marksLeft(t, marks); len(ran) != 1 || ran[0] != "smudge" {
		t.Errorf("filters that ran: %v, want the user's smudge only", ran)
	}
}

// An agent in an isolated worktree can rewrite the worktree's .git file to
// point at a git directory of its own making, with its own configuration.
// Git would follow it: dynworkflow refuses to run git there at all, and
// says why.
func TestForeignGitDirIsRefused(t *testing.T) {
	isolateGit(t)
	ctx := context.Background()
	marks := t.TempDir()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	r := open(t, repo)
	for name, rewrite := range map[string]func(dir string){
		"gitdir to its own repository": func(dir string) {
			evil := filepath.Join(dir, ".evil")
			writeFile(t, filepath.Join(evil, "HEAD"), "ref: refs/heads/main\n")
			writeFile(t, filepath.Join(evil, "config"), "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \""+planted(t, marks, "fsmonitor")+"\"\n")
			writeFile(t, filepath.Join(evil, "objects", "info", "packs"), "")
			writeFile(t, filepath.Join(evil, "refs", "tags", "keep"), "")
			writeFile(t, filepath.Join(dir, ".git"), "gitdir: .evil\n")
		},
		"gitdir to another worktree's entry": func(dir string) {
			other := add(t, r, t.TempDir(), "other")
			gd, err := other.GitDir()
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, ".git"), "gitdir: "+gd+"\n")
		},
		".git a directory": func(dir string) {
			if err := os.Remove(filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
			writeFile(t, filepath.Join(dir, ".git", "config"), "[core]\n\tfsmonitor = \""+planted(t, marks, "fsmonitor2")+"\"\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			tr := add(t, r, t.TempDir(), "w")
			writeFile(t, filepath.Join(tr.Dir, "a.txt"), "edited\n")
			rewrite(tr.Dir)
			_, err := tr.Settle(ctx, "m")
			if !errors.Is(err, worktree.ErrForeignGitDir) {
				t.Fatalf("Settle: %v, want ErrForeignGitDir", err)
			}
			if !strings.Contains(err.Error(), tr.Dir) {
				t.Errorf("the error does not name the worktree: %v", err)
			}
			if _, err := tr.Dirty(ctx); !errors.Is(err, worktree.ErrForeignGitDir) {
				t.Errorf("Dirty: %v, want ErrForeignGitDir", err)
			}
			if _, err := tr.GitDir(); !errors.Is(err, worktree.ErrForeignGitDir) {
				t.Errorf("GitDir: %v, want ErrForeignGitDir", err)
			}
			if ran := marksLeft(t, marks); len(ran) > 0 {
				t.Errorf("git followed the rewritten .git and ran %v", ran)
			}
			// Its removal, asked for with force, still works and forgets it.
			if err := tr.Remove(ctx, tr.Base, true); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(tr.Dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the worktree is still there: %v", err)
			}
		})
	}
}
