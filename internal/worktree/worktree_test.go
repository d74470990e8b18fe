package worktree_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/gittest"
	"github.com/dynworkflow/dynworkflow/internal/worktree"
)

// isolateGit keeps the user's and the system's git configuration out of
// the test, so it runs as on a machine with no identity configured.
func isolateGit(t *testing.T) {
	t.Helper()
	gittest.Isolate(t)
	for _, v := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
}

// newRepo makes a repository with one commit holding files, as its own
// user (name "Tester").
func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	gittest.Git(t, dir, "config", "user.name", "Tester")
	gittest.Git(t, dir, "config", "user.email", "tester@example.com")
	for name, text := range files {
		writeFile(t, filepath.Join(dir, name), text)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func open(t *testing.T, dir string) *worktree.Repo {
	t.Helper()
	r, err := worktree.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func add(t *testing.T, r *worktree.Repo, parent, name string) *worktree.Tree {
	t.Helper()
	ctx := context.Background()
	base, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := r.Add(ctx, worktree.AddSpec{Parent: parent, Name: name, BranchPrefix: "dynworkflow/run1/", Base: base})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// mainState is what must not change in the main checkout.
func mainState(t *testing.T, dir string) string {
	t.Helper()
	return gittest.Git(t, dir, "rev-parse", "HEAD") + "\n" + gittest.Git(t, dir, "symbolic-ref", "-q", "--short", "HEAD") + "\n" +
		gittest.Git(t, dir, "status", "--porcelain", "--untracked-files=all")
}

func TestUnchangedWorktreeIsRemovedWithItsBranch(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	r := open(t, repo)
	parent := filepath.Join(t.TempDir(), "worktrees", "run1")
	tr := add(t, r, parent, "reader")
	if tr.Branch != "dynworkflow/run1/reader" || tr.Dir != filepath.Join(parent, "reader") {
		t.Fatalf("branch %q dir %q", tr.Branch, tr.Dir)
	}
	wd, err := tr.WorkDir()
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(wd, "sub", "b.txt")); got != "b\n" {
		t.Fatalf("the worktree does not hold the base commit's files: sub/b.txt = %q", got)
	}
	// Ignored files are not work.
	writeFile(t, filepath.Join(repo, ".git", "info", "exclude"), "*.log\n")
	writeFile(t, filepath.Join(wd, "build.log"), "noise")

	ctx := context.Background()
	out, err := tr.Settle(ctx, "unused")
	if err != nil {
		t.Fatal(err)
	}
	if out.Changed || out.Committed || out.Head != tr.Base {
		t.Fatalf("Settle = %+v, want unchanged at %s", out, tr.Base)
	}
	if err := tr.Remove(ctx, out.Head, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tr.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the worktree directory is still there: %v", err)
	}
	if got := gittest.Git(t, repo, "branch", "--list", "dynworkflow/*"); got != "" {
		t.Fatalf("branches left behind: %s", got)
	}
	if got := gittest.Git(t, repo, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Fatalf("worktrees left behind:\n%s", got)
	}
}

func TestSettleCommitsEditsAndUntrackedFiles(t *testing.T) {
	isolateGit(t)
	// The user has no identity at all: not in the repository either.
	repo := newRepo(t, map[string]string{"a.txt": "a\n", "c.txt": "c\n"})
	gittest.Git(t, repo, "config", "--unset", "user.name")
	gittest.Git(t, repo, "config", "--unset", "user.email")
	before := mainState(t, repo)
	r := open(t, repo)
	tr := add(t, r, filepath.Join(t.TempDir(), "run1"), "writer")

	writeFile(t, filepath.Join(tr.Dir, "a.txt"), "a\nmore\n")
	writeFile(t, filepath.Join(tr.Dir, "new", "n.txt"), "new\n")
	if err := os.Remove(filepath.Join(tr.Dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	out, err := tr.Settle(context.Background(), "dynworkflow: edits of writer")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Changed || !out.Committed || out.Head == tr.Base {
		t.Fatalf("Settle = %+v, want a new commit", out)
	}
	want := worktree.Stat{Files: 3, Insertions: 2, Deletions: 1}
	if out.Stat != want {
		t.Errorf("stat %+v, want %+v", out.Stat, want)
	}
	if got := gittest.Git(t, repo, "rev-parse", "refs/heads/"+tr.Branch); got != out.Head {
		t.Errorf("branch at %s, want the new commit %s", got, out.Head)
	}
	if got := gittest.Git(t, repo, "rev-parse", out.Head+"^"); got != tr.Base {
		t.Errorf("the commit's parent is %s, want the base %s", got, tr.Base)
	}
	if got := gittest.Git(t, repo, "show", out.Head+":new/n.txt"); got != "new" {
		t.Errorf("the untracked file was not committed: %q", got)
	}
	if got := gittest.Git(t, repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", out.Head); got !=
		"dynworkflow <dynworkflow@localhost>|dynworkflow <dynworkflow@localhost>|dynworkflow: edits of writer" {
		t.Errorf("commit identity and message: %s", got)
	}
	if dirty, err := tr.Dirty(context.Background()); err != nil || dirty {
		t.Errorf("Dirty after Settle = %v, %v", dirty, err)
	}
	if after := mainState(t, repo); after != before {
		t.Fatalf("the main checkout changed:\nbefore %s\nafter  %s", before, after)
	}
}

func TestSettleUsesTheUsersIdentity(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	tr := add(t, open(t, repo), t.TempDir(), "w")
	writeFile(t, filepath.Join(tr.Dir, "a.txt"), "b\n")
	out, err := tr.Settle(context.Background(), "m")
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, repo, "log", "-1", "--format=%an <%ae>", out.Head); got != "Tester <tester@example.com>" {
		t.Errorf("author %s, want the configured user", got)
	}
}

func TestSettleKeepsWhatTheAgentCommittedAndWhereItWent(t *testing.T) {
	isolateGit(t)
	tests := []struct {
		name  string
		agent func(t *testing.T, dir string)
	}{
		{"committed on its branch", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "x.txt"), "x\n")
			gittest.Git(t, dir, "add", "x.txt")
			gittest.Git(t, dir, "commit", "-q", "-m", "agent commit")
		}},
		{"detached and committed", func(t *testing.T, dir string) {
			gittest.Git(t, dir, "checkout", "-q", "--detach")
			writeFile(t, filepath.Join(dir, "x.txt"), "x\n")
			gittest.Git(t, dir, "add", "x.txt")
			gittest.Git(t, dir, "commit", "-q", "-m", "agent commit")
		}},
		{"switched to its own branch and left edits", func(t *testing.T, dir string) {
			gittest.Git(t, dir, "checkout", "-q", "-b", "agent-branch")
			writeFile(t, filepath.Join(dir, "x.txt"), "x\n")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t, map[string]string{"a.txt": "a\n"})
			tr := add(t, open(t, repo), t.TempDir(), "w")
			tc.agent(t, tr.Dir)
			out, err := tr.Settle(context.Background(), "m")
			if err != nil {
				t.Fatal(err)
			}
			if !out.Changed || out.Stat.Files != 1 {
				t.Fatalf("Settle = %+v, want one changed file", out)
			}
			if got := gittest.Git(t, repo, "show", tr.Branch+":x.txt"); got != "x" {
				t.Fatalf("x.txt on %s = %q", tr.Branch, got)
			}
			if got := gittest.Git(t, tr.Dir, "symbolic-ref", "--short", "HEAD"); got != tr.Branch {
				t.Fatalf("the worktree is on %q, want %q", got, tr.Branch)
			}
		})
	}
}

func TestParallelAddsGetDistinctNames(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	r := open(t, repo)
	base, err := r.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	const n = 8
	trees := make([]*worktree.Tree, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			trees[i], errs[i] = r.Add(context.Background(), worktree.AddSpec{Parent: parent, Name: "same", BranchPrefix: "dynworkflow/r/", Base: base})
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("add %d: %v", i, errs[i])
		}
		if seen[trees[i].Branch] || seen[trees[i].Dir] {
			t.Fatalf("two worktrees share %s / %s", trees[i].Branch, trees[i].Dir)
		}
		seen[trees[i].Branch], seen[trees[i].Dir] = true, true
	}
	if !seen["dynworkflow/r/same"] || !seen["dynworkflow/r/same-8"] {
		t.Errorf("names are not same, same-2, ... same-8: %v", seen)
	}
}

func TestAddSkipsABranchThatExists(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	gittest.Git(t, repo, "branch", "dynworkflow/run1/w")
	tr := add(t, open(t, repo), t.TempDir(), "w")
	if tr.Branch != "dynworkflow/run1/w-2" || filepath.Base(tr.Dir) != "w-2" {
		t.Fatalf("branch %s dir %s, want w-2 for both", tr.Branch, tr.Dir)
	}
}

func TestWorkDirFollowsTheProjectSubdirectory(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t, map[string]string{"pkg/app/main.txt": "m\n"})
	r := open(t, filepath.Join(repo, "pkg", "app"))
	tr := add(t, r, t.TempDir(), "w")
	wd, err := tr.WorkDir()
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(wd, "main.txt")); got != "m\n" || wd != filepath.Join(tr.Dir, "pkg", "app") {
		t.Fatalf("work dir %s holds main.txt = %q", wd, got)
	}
}

func TestOpenAndHeadErrors(t *testing.T) {
	isolateGit(t)
	ctx := context.Background()
	if _, err := worktree.Open(ctx, t.TempDir()); !errors.Is(err, worktree.ErrNotRepository) {
		t.Errorf("Open outside a repository: %v, want ErrNotRepository", err)
	}
	empty := t.TempDir()
	gittest.Git(t, empty, "init", "-q")
	if _, err := open(t, empty).Head(ctx); !errors.Is(err, worktree.ErrNoCommit) {
		t.Errorf("Head of an empty repository: %v, want ErrNoCommit", err)
	}
	bare := t.TempDir()
	gittest.Git(t, bare, "init", "-q", "--bare")
	if _, err := worktree.Open(ctx, bare); !errors.Is(err, worktree.ErrNotRepository) {
		t.Errorf("Open in a bare repository: %v, want ErrNotRepository", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := worktree.Open(ctx, empty); !errors.Is(err, worktree.ErrGitMissing) {
		t.Errorf("Open without git: %v, want ErrGitMissing", err)
	}
}

func TestLockContentionIsWaitedOut(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	tr := add(t, open(t, repo), t.TempDir(), "w")
	writeFile(t, filepath.Join(tr.Dir, "a.txt"), "b\n")
	gitDir, err := tr.GitDir()
	if err != nil {
		t.Fatal(err)
	}
	// Another git process holds the worktree's index for a moment.
	lock := filepath.Join(gitDir, "index.lock")
	writeFile(t, lock, "")
	done := make(chan error, 1)
	go func() {
		_, err := tr.Settle(context.Background(), "m")
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // well inside the ~3 s retry window
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Settle did not wait out the lock: %v", err)
	}
}

func TestLockHeldTooLongIsReported(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	tr := add(t, open(t, repo), t.TempDir(), "w")
	writeFile(t, filepath.Join(tr.Dir, "a.txt"), "b\n")
	gitDir, err := tr.GitDir()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(gitDir, "index.lock"), "")
	_, err = tr.Settle(context.Background(), "m")
	var ge *worktree.Error
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "index.lock") {
		t.Fatalf("Settle with a stuck lock: %v, want a git error naming the lock", err)
	}
}

func TestBranchHeadsAndAncestry(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	r := open(t, repo)
	tr := add(t, r, t.TempDir(), "w")
	writeFile(t, filepath.Join(tr.Dir, "a.txt"), "b\n")
	ctx := context.Background()
	out, err := tr.Settle(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	heads, err := r.BranchHeads(ctx, "dynworkflow/run1/")
	if err != nil || heads[tr.Branch] != out.Head || len(heads) != 1 {
		t.Fatalf("BranchHeads = %v, %v; want %s at %s", heads, err, tr.Branch, out.Head)
	}
	if ok, err := r.IsAncestor(ctx, out.Head, "HEAD"); err != nil || ok {
		t.Fatalf("unmerged branch: IsAncestor = %v, %v", ok, err)
	}
	gittest.Git(t, repo, "merge", "-q", "--no-edit", tr.Branch)
	if ok, err := r.IsAncestor(ctx, out.Head, "HEAD"); err != nil || !ok {
		t.Fatalf("merged branch: IsAncestor = %v, %v", ok, err)
	}
	list, err := r.Worktrees(ctx)
	if err != nil || len(list) != 2 || list[1].Dir != tr.Dir || list[1].Branch != tr.Branch {
		t.Fatalf("Worktrees = %+v, %v", list, err)
	}
	if err := tr.Remove(ctx, out.Head, false); err != nil {
		t.Fatal(err)
	}
	if err := tr.Remove(ctx, out.Head, false); err != nil {
		t.Fatalf("a second Remove: %v", err)
	}
}

func ExampleStat_String() {
	fmt.Println(worktree.Stat{Files: 3, Insertions: 10, Deletions: 2})
	// Output: 3 files, +10 -2
}

// Git does not lock its worktree administration: concurrent worktree
// commands used to die reading a half-made entry ("failed to read
// .git/worktrees/x/commondir"). Adds and removals of one Repo must not.
func TestConcurrentAddsAndRemovals(t *testing.T) {
	isolateGit(t)
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("d%d/f%d.txt", i%10, i)] = fmt.Sprintf("%d\n", i)
	}
	repo := newRepo(t, files)
	r := open(t, repo)
	ctx := context.Background()
	base, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	const workers, rounds = 12, 3
	errs := make(chan error, workers*rounds)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range rounds {
				tr, err := r.Add(ctx, worktree.AddSpec{Parent: parent, Name: fmt.Sprintf("w%d", w), BranchPrefix: "dynworkflow/r/", Base: base})
				if err != nil {
					errs <- err
					return
				}
				out, err := tr.Settle(ctx, "m")
				if err == nil {
					err = tr.Remove(ctx, out.Head, true)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := gittest.Git(t, repo, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", got)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("directories left: %v", entries)
	}
}
