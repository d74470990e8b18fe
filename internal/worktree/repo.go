package worktree

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Repo is the git repository a project directory belongs to. It is safe
// for concurrent use: it holds no state that git commands change.
type Repo struct {
	git    *git
	dir    string // the project directory
	top    string // the top of the working tree the project is in
	prefix string // dir relative to top: "" or "a/b/"
	// gitDir is the git directory of the project's checkout and common
	// the repository's shared one (they differ when the project is itself
	// a linked worktree). Every command names gitDir explicitly.
	gitDir, common string
	// admin serializes the git commands that change the worktree
	// administration (see checkOut).
	admin sync.Mutex
}

// Open finds the git working tree of dir. It fails with ErrGitMissing when
// there is no git binary and ErrNotRepository when dir is not inside a
// working tree (a bare repository is not one).
func Open(ctx context.Context, dir string) (*Repo, error) {
	g, err := newGit()
	if err != nil {
		return nil, err
	}
	// The only command that finds the repository from the directory: the
	// rest name the git directory it reports.
	out, err := g.run(ctx, where{dir: dir}, "rev-parse", "--show-toplevel", "--show-prefix", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && exitCode(ge.Err) == 128 {
			return nil, fmt.Errorf("%w: %s (%s)", ErrNotRepository, dir, firstLine(ge.Stderr))
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 4 || lines[0] == "" || !filepath.IsAbs(lines[2]) {
		return nil, fmt.Errorf("git rev-parse in %s printed %q, want the top of the working tree, a prefix and the git directories", dir, out)
	}
	common := lines[3]
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	return &Repo{git: g, dir: dir, top: lines[0], prefix: lines[1], gitDir: lines[2], common: filepath.Clean(common)}, nil
}

// at is where the commands on the project's own checkout run.
func (r *Repo) at() where { return where{dir: r.top, gitDir: r.gitDir, workTree: r.top} }

// Top is the top directory of the main checkout's working tree.
func (r *Repo) Top() string { return r.top }

// Prefix is the project directory relative to Top, "" or ending in "/".
func (r *Repo) Prefix() string { return r.prefix }

// Head resolves the project's HEAD to a commit id: the commit the user is
// on, whether on a branch or detached. A repository without a commit
// fails with ErrNoCommit.
func (r *Repo) Head(ctx context.Context) (string, error) {
	out, err := r.git.run(ctx, r.at(), "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && exitCode(ge.Err) == 1 {
			return "", fmt.Errorf("%w: HEAD of %s does not name a commit", ErrNoCommit, r.top)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// BranchHeads maps every branch whose name starts with prefix to the
// commit it points at.
func (r *Repo) BranchHeads(ctx context.Context, prefix string) (map[string]string, error) {
	out, err := r.git.run(ctx, r.at(), "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/"+prefix)
	if err != nil {
		return nil, err
	}
	heads := map[string]string{}
	for line := range strings.Lines(string(out)) {
		sha, ref, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if ok {
			heads[strings.TrimPrefix(ref, "refs/heads/")] = sha
		}
	}
	return heads, nil
}

// IsAncestor reports whether commit is reachable from (or is) of.
func (r *Repo) IsAncestor(ctx context.Context, commit, of string) (bool, error) {
	_, err := r.git.run(ctx, r.at(), "merge-base", "--is-ancestor", commit, of)
	var ge *Error
	if errors.As(err, &ge) && exitCode(ge.Err) == 1 {
		return false, nil
	}
	return err == nil, err
}

// MergeBase is the best common ancestor of commits a and b, "" when they
// have none.
func (r *Repo) MergeBase(ctx context.Context, a, b string) (string, error) {
	out, err := r.git.run(ctx, r.at(), "merge-base", a, b)
	var ge *Error
	if errors.As(err, &ge) && exitCode(ge.Err) == 1 {
		return "", nil
	}
	return strings.TrimSpace(string(out)), err
}

// Stat is a diff stat: files changed, lines inserted and deleted. Binary
// files count as changed files without lines.
type Stat struct {
	Files      int `json:"files"`
	Insertions int `json:"insertions"`
	Deletions  int `json:"deletions"`
}

func (s Stat) String() string {
	files := "files"
	if s.Files == 1 {
		files = "file"
	}
	return fmt.Sprintf("%d %s, +%d -%d", s.Files, files, s.Insertions, s.Deletions)
}

// DiffStat is the diff stat between two commits.
func (r *Repo) DiffStat(ctx context.Context, from, to string) (Stat, error) {
	out, err := r.git.run(ctx, r.at(), "diff", "--shortstat", "--no-ext-diff", "--no-textconv", from, to, "--")
	if err != nil {
		return Stat{}, err
	}
	return parseShortstat(string(out)), nil
}

// parseShortstat reads " 3 files changed, 10 insertions(+), 2 deletions(-)".
func parseShortstat(s string) Stat {
	var st Stat
	for part := range strings.SplitSeq(strings.TrimSpace(s), ", ") {
		num, what, _ := strings.Cut(part, " ")
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(what, "file"):
			st.Files = n
		case strings.HasPrefix(what, "insertion"):
			st.Insertions = n
		case strings.HasPrefix(what, "deletion"):
			st.Deletions = n
		}
	}
	return st
}

// Entry is one worktree git knows of.
type Entry struct {
	Dir    string
	Head   string
	Branch string // short name; "" when detached
}

// Worktrees lists every worktree of the repository, the main one first.
func (r *Repo) Worktrees(ctx context.Context) ([]Entry, error) {
	// Not -z: that needs git 2.36, and the paths that matter here are
	// the state directory's, which hold no newline.
	out, err := r.git.run(ctx, r.at(), "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	var list []Entry
	var cur *Entry
	for line := range strings.Lines(string(out)) {
		key, val, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		switch key {
		case "worktree":
			list = append(list, Entry{Dir: filepath.Clean(val)})
			cur = &list[len(list)-1]
		case "HEAD":
			if cur != nil {
				cur.Head = val
			}
		case "branch":
			if cur != nil {
				cur.Branch = strings.TrimPrefix(val, "refs/heads/")
			}
		}
	}
	return list, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimPrefix(line, "fatal: ")
}
