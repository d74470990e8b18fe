package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// AddSpec says where a new worktree goes and what its branch is called.
type AddSpec struct {
	// Parent is the directory the worktree is created in (made if missing).
	Parent string
	// Name is the wanted directory name and last branch component. It must
	// be a valid single ref component; "-2", "-3", ... are appended until
	// both the directory and the branch are new.
	Name string
	// BranchPrefix goes before Name in the branch name: "dynworkflow/run/".
	BranchPrefix string
	// Base is the commit the branch starts at.
	Base string
	// Reason goes into the branch's reflog.
	Reason string
}

// maxNames bounds the search for a free name.
const maxNames = 10000

// Tree is a worktree on its own branch.
type Tree struct {
	repo   *Repo
	gitDir string // the worktree's entry in the repository, once checked
	Dir    string // the worktree's top directory
	Branch string // short branch name
	Base   string // the commit the branch was created at
}

// Add creates a branch at spec.Base and checks it out in a new worktree
// under spec.Parent. The main checkout is not touched.
func (r *Repo) Add(ctx context.Context, spec AddSpec) (*Tree, error) {
	if spec.Name == "" || spec.Base == "" {
		return nil, errors.New("worktree.Add: a name and a base commit are required")
	}
	if err := os.MkdirAll(spec.Parent, 0o700); err != nil {
		return nil, fmt.Errorf("create the worktree directory: %w", err)
	}
	reason := spec.Reason
	if reason == "" {
		reason = "worktree branch"
	}
	for n := 1; n <= maxNames; n++ {
		name := spec.Name
		if n > 1 {
			name = fmt.Sprintf("%s-%d", spec.Name, n)
		}
		// The directory is claimed first: Mkdir is atomic, so two calls of
		// this process, or of two processes, never pick the same one.
		dir := filepath.Join(spec.Parent, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return nil, fmt.Errorf("create the worktree directory: %w", err)
		}
		branch := spec.BranchPrefix + name
		// An empty old value makes update-ref create the branch only if it
		// does not exist yet, atomically.
		if _, err := r.git.run(ctx, r.at(), "update-ref", "--create-reflog", "-m", reason, "refs/heads/"+branch, spec.Base, ""); err != nil {
			_ = os.Remove(dir)
			if refExists(err) {
				continue
			}
			return nil, err
		}
		t := &Tree{repo: r, Dir: dir, Branch: branch, Base: spec.Base}
		if err := r.checkOut(ctx, t); err != nil {
			// Leave nothing behind: the branch is at base, so deleting it
			// loses nothing.
			cleanup := context.WithoutCancel(ctx)
			_ = t.Remove(cleanup, spec.Base, true)
			_ = os.RemoveAll(dir)
			return nil, err
		}
		return t, nil
	}
	return nil, fmt.Errorf("no free worktree name %s-N under %s", spec.Name, spec.Parent)
}

// checkOut registers t's directory as a worktree of its branch and checks
// the branch out there. Git does not lock its worktree administration:
// a git worktree command reading it while another creates or deletes an
// entry can die ("failed to read .git/worktrees/x/commondir"). So the
// commands that change it run one at a time in this process (and are
// retried when another process races them); the checkout, the slow part,
// runs outside the lock. No hook runs: git worktree add would run the
// post-checkout hook, which anyone who could write the repository may
// have put there.
func (r *Repo) checkOut(ctx context.Context, t *Tree) error {
	r.admin.Lock()
	_, err := r.git.run(ctx, r.at(), "worktree", "add", "--quiet", "--no-checkout", t.Dir, t.Branch)
	r.admin.Unlock()
	if err != nil {
		return err
	}
	// Nothing but git has written in the new directory yet: its .git file
	// names the worktree's entry, which is checked like any other.
	if t.gitDir, err = t.adminDir(); err != nil {
		return err
	}
	_, err = r.git.run(ctx, t.at(), "reset", "--hard", "--quiet", "--no-recurse-submodules")
	return err
}

// ErrForeignGitDir is the error of a command on a worktree whose .git no
// longer names its own entry in the repository's administration: it was
// replaced (an agent can write it: it is in the agent's directory). Git
// would follow it to whatever repository it names, with that repository's
// configuration, so dynworkflow refuses to run git there at all.
var ErrForeignGitDir = errors.New("its .git no longer points to the repository it was made in")

// adminDir is the worktree's entry in the repository's administration
// (<common>/worktrees/<name>), checked both ways: the worktree's .git is
// a regular file naming an entry directly under <common>/worktrees, and
// that entry's gitdir file names this worktree's .git. Git itself writes
// both; only a rewrite makes them disagree.
func (t *Tree) adminDir() (string, error) {
	refuse := func(why string) (string, error) {
		return "", fmt.Errorf("worktree %s: %w (%s); dynworkflow runs no git command in it. Its files are as the agent left them: look, then remove it with dynworkflow worktrees clean --force",
			t.Dir, ErrForeignGitDir, why)
	}
	dotGit := filepath.Join(t.Dir, ".git")
	fi, err := os.Lstat(dotGit)
	if err != nil {
		return refuse(err.Error())
	}
	if !fi.Mode().IsRegular() {
		return refuse(".git is not the file git wrote")
	}
	b, err := os.ReadFile(dotGit)
	if err != nil {
		return refuse(err.Error())
	}
	admin, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || !filepath.IsAbs(admin) {
		return refuse(fmt.Sprintf(".git says %q", clip(string(b))))
	}
	admin = filepath.Clean(admin)
	if filepath.Dir(admin) != filepath.Join(t.repo.common, "worktrees") {
		return refuse(fmt.Sprintf(".git names %s, not an entry of %s", admin, filepath.Join(t.repo.common, "worktrees")))
	}
	back, err := os.ReadFile(filepath.Join(admin, "gitdir"))
	if err != nil {
		return refuse(err.Error())
	}
	if !samePath(strings.TrimSpace(string(back)), dotGit) {
		return refuse(fmt.Sprintf("%s belongs to %s", admin, strings.TrimSpace(string(back))))
	}
	return admin, nil
}

// samePath compares two absolute paths, symbolic links resolved where
// they exist.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// at is where the commands on the worktree run: its checked entry and its
// directory, named explicitly.
func (t *Tree) at() where { return where{dir: t.Dir, gitDir: t.gitDir, workTree: t.Dir} }

// open checks the worktree's .git (see adminDir) before a command on it;
// a worktree that Add made has been checked once already, and is checked
// again, since its agent may have rewritten it since.
func (t *Tree) open() (where, error) {
	admin, err := t.adminDir()
	if err != nil {
		return where{}, err
	}
	t.gitDir = admin
	return t.at(), nil
}

// Attach returns the Tree of a worktree created earlier (by a process that
// died, say), to settle or remove it.
func (r *Repo) Attach(dir, branch, base string) *Tree {
	return &Tree{repo: r, Dir: dir, Branch: branch, Base: base}
}

func refExists(err error) bool {
	var ge *Error
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, "reference already exists")
}

// WorkDir is where an agent works: the project directory's place in the
// worktree (its top when the project is the repository's top). It is
// created when the base commit does not have it.
func (t *Tree) WorkDir() (string, error) {
	dir := filepath.Join(t.Dir, filepath.FromSlash(t.repo.prefix))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s in the worktree: %w", t.repo.prefix, err)
	}
	return dir, nil
}

// Outcome is what a worktree held once its agent ended.
type Outcome struct {
	// Changed is false when the agent left nothing: no commit, no edit, no
	// untracked file. Ignored files do not count.
	Changed bool
	// Committed is true when Settle committed edits the agent had not.
	Committed bool
	// Head is the branch's commit after Settle.
	Head string
	// Stat is the diff stat from Base to Head.
	Stat Stat
}

// Identity is the author and committer of the commits Settle makes when
// the user has configured none.
const (
	IdentityName  = "dynworkflow"
	IdentityEmail = "dynworkflow@localhost"
)

// Settle makes everything the agent left in the worktree reachable from
// its branch: edits and untracked files are committed with message (hooks
// and signing skipped: this commit preserves work, it does not publish it),
// and a worktree the agent moved to another branch or detached is put back
// on its own branch at the commit it was on. Settle never deletes anything.
func (t *Tree) Settle(ctx context.Context, message string) (Outcome, error) {
	g := t.repo.git
	var out Outcome
	at, err := t.open()
	if err != nil {
		return out, err
	}
	// Submodules are left out: git status would run git inside each, in a
	// repository its own configuration governs. (Add does not initialise
	// them, and git add does not stage what is inside them.)
	status, err := g.run(ctx, at, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", "--ignore-submodules=dirty")
	if err != nil {
		return out, err
	}
	st := parseStatus(status)
	out.Head = st.oid
	if st.branch != t.Branch {
		// The agent switched branches or detached HEAD. Our branch follows
		// the commit it ended on, and the worktree returns to our branch, so
		// that what is kept is always on the branch we record. The files do
		// not change: the branch points at the commit they came from.
		if _, err := g.run(ctx, at, "update-ref", "-m", "dynworkflow: follow the worktree's HEAD", "refs/heads/"+t.Branch, st.oid); err != nil {
			return out, err
		}
		if _, err := g.run(ctx, at, "symbolic-ref", "HEAD", "refs/heads/"+t.Branch); err != nil {
			return out, err
		}
	}
	if st.dirty {
		committed, err := t.commitAll(ctx, at, message)
		if err != nil {
			return out, err
		}
		if committed {
			head, err := g.run(ctx, at, "rev-parse", "--verify", "HEAD^{commit}")
			if err != nil {
				return out, err
			}
			out.Committed, out.Head = true, strings.TrimSpace(string(head))
		}
	}
	out.Changed = out.Committed || out.Head != t.Base
	if out.Changed {
		if out.Stat, err = t.repo.DiffStat(ctx, t.Base, out.Head); err != nil {
			return out, err
		}
	}
	return out, nil
}

// commitAll stages everything, untracked files included, and commits it.
// It reports false when staging left nothing to commit (a change only git
// status could see, such as a submodule's untracked files).
func (t *Tree) commitAll(ctx context.Context, at where, message string) (bool, error) {
	g := t.repo.git
	if _, err := g.run(ctx, at, "add", "--all"); err != nil {
		return false, err
	}
	if _, err := g.run(ctx, at, "diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv"); err == nil {
		return false, nil
	}
	env, err := t.identity(ctx, at)
	if err != nil {
		return false, err
	}
	_, err = g.runEnv(ctx, at, env, "commit", "--quiet", "--no-verify", "--no-gpg-sign", "--no-edit", "-m", message)
	return err == nil, err
}

// identity returns environment variables naming the fixed identity for
// whatever part of one (name, email) the user has not configured; a
// machine without one would otherwise fail the commit.
func (t *Tree) identity(ctx context.Context, at where) ([]string, error) {
	out, err := t.repo.git.run(ctx, at, "config", "--get-regexp", `^user\.(name|email)$`)
	var ge *Error
	if err != nil && !(errors.As(err, &ge) && exitCode(ge.Err) == 1) {
		return nil, err
	}
	has := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		key, val, _ := strings.Cut(strings.TrimSpace(line), " ")
		has[key] = val != ""
	}
	var env []string
	if !has["user.name"] {
		env = setIfUnset(env, "GIT_AUTHOR_NAME", IdentityName)
		env = setIfUnset(env, "GIT_COMMITTER_NAME", IdentityName)
	}
	if !has["user.email"] && os.Getenv("EMAIL") == "" {
		env = setIfUnset(env, "GIT_AUTHOR_EMAIL", IdentityEmail)
		env = setIfUnset(env, "GIT_COMMITTER_EMAIL", IdentityEmail)
	}
	return env, nil
}

func setIfUnset(env []string, name, value string) []string {
	if os.Getenv(name) != "" {
		return env
	}
	return append(env, name+"="+value)
}

// Remove deletes the worktree's directory and its registration, then its
// branch if the branch still points at head (pass the head Settle
// reported, or the commit a caller checked). force removes a worktree with
// uncommitted edits; without it git refuses them.
func (t *Tree) Remove(ctx context.Context, head string, force bool) error {
	if err := t.unregister(ctx, force); err != nil {
		return err
	}
	if t.Branch == "" {
		return nil
	}
	if _, err := t.repo.git.run(ctx, t.repo.at(), "update-ref", "-d", "refs/heads/"+t.Branch, head); err != nil {
		var ge *Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "unable to resolve reference") {
			return nil // already gone
		}
		return err
	}
	return nil
}

// unregister removes the worktree's directory and registration. Deleting
// thousands of files is the slow part, and it must not hold the lock on
// the worktree administration (see checkOut): a forced removal first moves
// the directory aside, has git forget the worktree (git accepts a missing
// directory), then deletes the files. Without force git must check the
// files itself, so it does all of it under the lock.
func (t *Tree) unregister(ctx context.Context, force bool) error {
	g, r := t.repo.git, t.repo
	if t.Dir == "" {
		return nil
	}
	if _, err := os.Stat(t.Dir); err != nil {
		force = true // nothing there to check or lose; git forgets it
	}
	if !force {
		r.admin.Lock()
		defer r.admin.Unlock()
		_, err := g.run(ctx, r.at(), "worktree", "remove", t.Dir)
		return err
	}
	aside := filepath.Join(filepath.Dir(t.Dir), RemovingPrefix+filepath.Base(t.Dir))
	moved := os.Rename(t.Dir, aside) == nil
	r.admin.Lock()
	_, err := g.run(ctx, r.at(), "worktree", "remove", "--force", t.Dir)
	r.admin.Unlock()
	var ge *Error
	if err != nil && errors.As(err, &ge) && strings.Contains(ge.Stderr, "is not a working tree") {
		err = nil // never registered, or already forgotten
	}
	if err != nil {
		if moved {
			_ = os.Rename(aside, t.Dir)
		}
		return err
	}
	if moved {
		return os.RemoveAll(aside)
	}
	return os.RemoveAll(t.Dir)
}

// RemovingPrefix starts the name of a worktree directory being deleted. A
// process that dies while deleting one leaves it; it is anyone's to delete.
const RemovingPrefix = ".removing-"

// Dirty reports whether the worktree holds edits or untracked files that
// are on no commit.
func (t *Tree) Dirty(ctx context.Context) (bool, error) {
	at, err := t.open()
	if err != nil {
		return false, err
	}
	status, err := t.repo.git.run(ctx, at, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignore-submodules=dirty")
	if err != nil {
		return false, err
	}
	return parseStatus(status).dirty, nil
}

// GitDir is the worktree's private administration directory (its index
// and HEAD live there), checked as every command on the worktree is.
func (t *Tree) GitDir() (string, error) {
	at, err := t.open()
	return at.gitDir, err
}

type status struct {
	oid    string
	branch string // "" when detached
	dirty  bool
}

// parseStatus reads `git status --porcelain=v2 --branch -z`: headers start
// with "# ", every other entry is a change.
func parseStatus(b []byte) status {
	var st status
	for entry := range strings.SplitSeq(string(b), "\x00") {
		switch {
		case entry == "":
		case strings.HasPrefix(entry, "# branch.oid "):
			st.oid = strings.TrimPrefix(entry, "# branch.oid ")
		case strings.HasPrefix(entry, "# branch.head "):
			if h := strings.TrimPrefix(entry, "# branch.head "); h != "(detached)" {
				st.branch = h
			}
		case strings.HasPrefix(entry, "# "):
		default:
			st.dirty = true
		}
	}
	return st
}
