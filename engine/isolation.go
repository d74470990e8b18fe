package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/internal/worktree"
)

// Worktree is the git worktree of a call made with isolation: 'worktree':
// where the agent worked, the branch that keeps what it did, and what that
// was. The script sees the agent's answer as without isolation; this is
// the call's metadata, in the journal, in show and in the API.
type Worktree struct {
	// Status is "active" while the agent runs, then "kept" (the branch
	// holds changes) or "removed" (the agent changed nothing, and the
	// worktree and branch are gone).
	Status string `json:"status"`
	Dir    string `json:"dir"`
	Branch string `json:"branch"`
	// Base is the commit the branch started at: the project's HEAD when
	// the call began.
	Base string `json:"base"`
	// Head is the branch's commit once the agent ended.
	Head string `json:"head,omitempty"`
	// Committed says dynworkflow committed edits the agent left
	// uncommitted (untracked files included).
	Committed bool `json:"committed,omitempty"`
	// Interrupted says the call did not finish (pause, stop, crash): the
	// branch holds its partial edits, and the call runs again in a new
	// worktree.
	Interrupted bool `json:"interrupted,omitempty"`
	Files       int  `json:"files,omitempty"`
	Insertions  int  `json:"insertions,omitempty"`
	Deletions   int  `json:"deletions,omitempty"`
	// Error says why the edits could not be committed; the worktree is
	// then kept exactly as the agent left it.
	Error string `json:"error,omitempty"`
}

// Worktree statuses.
const (
	worktreeActive  = "active"
	worktreeKept    = "kept"
	worktreeRemoved = "removed"
)

// Kept says the branch holds the agent's edits, and Removed that the agent
// changed nothing and the worktree is gone.
func (w *Worktree) Kept() bool    { return w.Status == worktreeKept }
func (w *Worktree) Removed() bool { return w.Status == worktreeRemoved }

// Stat is the diff stat in words.
func (w *Worktree) Stat() worktree.Stat {
	return worktree.Stat{Files: w.Files, Insertions: w.Insertions, Deletions: w.Deletions}
}

// KeptWorktree is a worktree a run kept, and the call it belongs to.
type KeptWorktree struct {
	Path  string `json:"path"`
	Label string `json:"label,omitempty"`
	Epoch int    `json:"epoch"`
	Worktree
}

// ErrIsolationUnavailable is the cause of a pause when a call asks for a
// worktree in a project where there can be none: git is missing, the
// project is not a git working tree, or it has no commit yet.
var ErrIsolationUnavailable = callpolicy.ErrIsolationUnavailable

// CodeIsolationUnavailable is the code of ErrIsolationUnavailable.
const CodeIsolationUnavailable = callpolicy.CodeIsolationUnavailable

const (
	// settleTimeout bounds committing an agent's edits; it runs even when
	// the run is being paused or stopped.
	settleTimeout = 2 * time.Minute
	// maxRemovals bounds how many unchanged worktrees are deleted at once
	// in the background.
	maxRemovals = 2
	// branchRoot is the namespace of worker branches.
	branchRoot = "dynworkflow/"
)

// isolation is a runtime's side of isolated calls.
type isolation struct {
	mu   sync.Mutex
	repo *worktree.Repo // opened on first use; a failure is retried next time
	// removals bounds background removals across the runtime's runs.
	removals chan struct{}
}

func newIsolation() *isolation {
	return &isolation{removals: make(chan struct{}, maxRemovals)}
}

// repo opens the git repository of the project once.
func (rt *Runtime) repo(ctx context.Context) (*worktree.Repo, error) {
	rt.iso.mu.Lock()
	defer rt.iso.mu.Unlock()
	if rt.iso.repo != nil {
		return rt.iso.repo, nil
	}
	repo, err := worktree.Open(ctx, rt.cfg.Cwd)
	if err != nil {
		return nil, err
	}
	rt.iso.repo = repo
	return repo, nil
}

// IsolationUnavailable turns the errors that mean "no worktree can ever
// be made in project directory cwd" into what the user must do about
// them; other errors pass.
func IsolationUnavailable(err error, cwd string) (string, bool) {
	switch {
	case errors.Is(err, worktree.ErrGitMissing):
		return "agent(): isolation: 'worktree' needs git, and there is no git binary on PATH; install git (or drop the isolation option) and resume", true
	case errors.Is(err, worktree.ErrNotRepository):
		return fmt.Sprintf("agent(): isolation: 'worktree' needs a git project, and %s is not in a git working tree; run git init and commit (or drop the isolation option) and resume", cwd), true
	case errors.Is(err, worktree.ErrNoCommit):
		return fmt.Sprintf("agent(): isolation: 'worktree' starts each agent from the commit you are on, and the repository of %s has no commit yet; commit and resume", cwd), true
	}
	return "", false
}

// Isolated is the git worktree an isolated agent call runs in, from its
// making to what became of it. The local engine makes one per call; a
// Temporal worker makes one per attempt, since each attempt may run on
// another worker.
type Isolated struct {
	tree *worktree.Tree
	dir  string // where the agent works
	info Worktree
	// leftover: a process that died while the agent ran left it, so a
	// stale index.lock in it is the dead agent's.
	leftover bool
}

// AttemptRecord is where a Temporal worker records the worktree dir of an
// isolated attempt under way, beside it, until the attempt settles it: a
// worktree with a record is never cleaned, and the call's next attempt
// settles one whose worker died.
func AttemptRecord(dir string) string { return dir + ".json" }

// IsolationSpec says where a call's worktree goes and what its commits
// say.
type IsolationSpec struct {
	// Parent is the directory the worktree is made in.
	Parent string
	RunID  string
	Path   string
	Label  string
}

// Isolate makes a call's worktree, on a branch of its own, at the commit
// the project's checkout is on.
func Isolate(ctx context.Context, repo *worktree.Repo, spec IsolationSpec) (*Isolated, error) {
	base, err := repo.Head(ctx)
	if err != nil {
		return nil, err
	}
	tree, err := repo.Add(ctx, worktree.AddSpec{
		Parent:       spec.Parent,
		Name:         worktreeName(spec.Label, spec.Path),
		BranchPrefix: branchRoot + spec.RunID + "/",
		Base:         base,
		Reason:       fmt.Sprintf("dynworkflow: run %s, call %s", spec.RunID, spec.Path),
	})
	if err != nil {
		return nil, err
	}
	dir, err := tree.WorkDir()
	if err != nil {
		_ = tree.Remove(context.WithoutCancel(ctx), base, true)
		return nil, err
	}
	return &Isolated{tree: tree, dir: dir, info: Worktree{Status: worktreeActive, Dir: tree.Dir, Branch: tree.Branch, Base: base}}, nil
}

// Leftover attaches to the worktree, described by info, that an agent was
// running in when its process died, so that it can be settled.
func Leftover(repo *worktree.Repo, info Worktree) *Isolated {
	return &Isolated{tree: repo.Attach(info.Dir, info.Branch, info.Base), dir: info.Dir, info: info, leftover: true}
}

// WorkDir is where the agent works: the project directory's place in the
// worktree.
func (iso *Isolated) WorkDir() string { return iso.dir }

// Info is the worktree while its agent runs.
func (iso *Isolated) Info() Worktree { return iso.info }

// Settle commits what the agent left in the worktree and says what became
// of it; interrupted says the agent did not finish. It runs whatever the
// state of ctx, within settleTimeout: a pause or a stop must not leave
// edits only in a directory. A worktree whose edits could not be
// committed is kept as it is, and the error says why.
func (iso *Isolated) Settle(ctx context.Context, spec IsolationSpec, interrupted bool, log *slog.Logger) (*Worktree, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	info := iso.info
	info.Interrupted = interrupted
	if iso.leftover {
		clearStaleIndexLock(iso.tree, log)
	}
	out, err := iso.tree.Settle(ctx, commitMessage(spec.RunID, spec.Path, spec.Label, info.Base, interrupted))
	return settledInfo(info, out, err), err
}

// Remove deletes the worktree and its branch, which must be at head: the
// worktree of an agent that changed nothing.
func (iso *Isolated) Remove(ctx context.Context, head string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	// Forced: Settle just found it clean, and a second check by git would
	// read every file again.
	return iso.tree.Remove(ctx, head, true)
}

// isolate makes the call's worktree in the run's worktree directory.
func (c *agentCall) isolate(ctx context.Context) (*Isolated, error) {
	r := c.run
	repo, err := r.rt.repo(ctx)
	if err != nil {
		return nil, err
	}
	return Isolate(ctx, repo, c.isolationSpec())
}

func (c *agentCall) isolationSpec() IsolationSpec {
	return IsolationSpec{Parent: c.run.rt.store.WorktreesDir(c.run.id), RunID: c.run.id, Path: c.Path, Label: c.Opts.Label}
}

// IsolationError is what becomes of a call whose worktree could not be
// made in project directory cwd: the run pauses (a callpolicy error with
// ErrIsolationUnavailable) when no worktree can be made there at all, and
// the call fails otherwise. The agent never runs in the shared checkout
// instead.
func IsolationError(err error, cwd string) error {
	if msg, ok := IsolationUnavailable(err, cwd); ok {
		return callpolicy.IsolationUnavailableError(msg)
	}
	return &executors.Error{Class: executors.Terminal, Message: "agent(): could not create its git worktree (isolation: 'worktree')", Err: err}
}

// isolationFailed settles a call whose worktree could not be made, as
// IsolationError says.
func (c *agentCall) isolationFailed(err error, started time.Time) {
	r := c.run
	if c.ctx.Err() != nil {
		c.settle(nil, context.Cause(c.ctx))
		return
	}
	ierr := IsolationError(err, r.rt.cfg.Cwd)
	if errors.Is(ierr, ErrIsolationUnavailable) {
		// The pause says it, with what to do, wherever the run's end is
		// shown; the journal notes once where it happened. A log line and
		// an event on top said it three times over, once as a raw Go log
		// line, and again for each isolated call of a fan-out.
		msg := ierr.Error()
		r.rt.log.Debug("isolation unavailable: pausing the run", "run", r.id, "call", c.Path, "err", err)
		if r.isolationLost.CompareAndSwap(false, true) {
			r.append(&record{Type: recLog, Path: c.Path, Level: "error", Message: msg})
		}
		r.pauseFor(msg)
		c.settle(nil, ierr)
		return
	}
	r.rt.log.Error("could not create the worktree of an isolated call", "run", r.id, "call", c.Path, "err", err)
	c.fail(callpolicy.Outcome{Kind: callpolicy.GaveUp, Err: ierr}, started, nil)
}

// settleWorktree commits what the agent left in its worktree and says
// what became of it.
func (c *agentCall) settleWorktree(iso *Isolated, interrupted bool) *Worktree {
	r := c.run
	info, err := iso.Settle(c.ctx, c.isolationSpec(), interrupted, r.rt.log)
	if err != nil {
		r.rt.log.Error("could not commit an isolated agent's edits; its worktree is kept as the agent left it",
			"run", r.id, "worktree", info.Dir, "err", err)
	}
	return info
}

// settledInfo fills in info from a Settle outcome. A worktree whose edits
// could not be committed is kept as it is, with the reason.
func settledInfo(info Worktree, out worktree.Outcome, err error) *Worktree {
	if err != nil {
		info.Status, info.Error = worktreeKept, err.Error()
		return &info
	}
	info.Head, info.Committed = out.Head, out.Committed
	info.Files, info.Insertions, info.Deletions = out.Stat.Files, out.Stat.Insertions, out.Stat.Deletions
	info.Status = worktreeKept
	if !out.Changed {
		info.Status = worktreeRemoved
	}
	return &info
}

// journalWorktree records what became of a call's worktree. A worktree to
// remove is removed in the background once the record is durable, so that
// a crash in the middle of the removal is finished by recovery, not taken
// for an agent's deletions.
func (c *agentCall) journalWorktree(iso *Isolated, info *Worktree) {
	r := c.run
	rec := &record{Type: recWorktree, Path: c.Path, Kind: "agent", Fingerprint: c.FP, Worktree: info}
	if info.Status != worktreeRemoved {
		r.kept.Add(1)
		r.append(rec)
		return
	}
	r.teardown.Add(1)
	r.appendThen(rec, func(err error) {
		if err != nil {
			r.teardown.Done()
			return
		}
		go func() {
			defer r.teardown.Done()
			r.rt.iso.removals <- struct{}{}
			defer func() { <-r.rt.iso.removals }()
			if err := iso.Remove(context.Background(), info.Head); err != nil {
				r.rt.log.Warn("remove an unchanged worktree", "run", r.id, "worktree", info.Dir, "err", err)
			}
		}()
	})
}

// KeptWorktrees is how many worktrees this execution kept: branches that
// hold its isolated agents' edits (see Runtime.Worktrees).
func (r *Run) KeptWorktrees() int { return int(r.kept.Load()) }

// removeEmptyWorktreesDir drops the run's worktree directory once nothing
// is left in it.
func (r *Run) removeEmptyWorktreesDir() {
	if dir := r.rt.store.WorktreesDir(r.id); dir != "" {
		_ = os.Remove(dir) // fails, as it should, while it holds worktrees
	}
}

func commitMessage(runID, path, label, base string, interrupted bool) string {
	who := path
	if label != "" {
		who = fmt.Sprintf("%q", label)
	}
	subject := "dynworkflow: edits of agent " + who + " it left uncommitted"
	if interrupted {
		subject = "dynworkflow: partial edits of agent " + who + ", interrupted before it finished"
	}
	return fmt.Sprintf("%s\n\nRun: %s\nCall: %s\nBase: %s\n", subject, runID, path, base)
}

// worktreeName is the directory and last branch component of a call's
// worktree: its label as a slug, else its call path's.
func worktreeName(label, path string) string {
	return store.Slug(label, store.Slug(path, "agent"))
}

// worktreeTrail is what the journal says of one worktree directory.
type worktreeTrail struct {
	path    string
	fp      string
	started *Worktree // from call.started: the worktree exists, the agent may have run
	settled *Worktree // from call.worktree
}

// salvage settles the worktrees an earlier execution left behind: those of
// calls a crash interrupted get their edits committed and are kept (or
// removed when the agent changed nothing), removals a crash cut short are
// finished, and directories whose call never started are removed. It runs
// before anything else of a resume, a recovery or a stop, and runs to its
// end even when ctx is cancelled: git must not be killed halfway through a
// commit. add journals a record and waits until it is durable.
func (rt *Runtime) salvage(ctx context.Context, runID string, trails map[string]*worktreeTrail, add func(context.Context, *record) error) error {
	root := rt.store.WorktreesDir(runID)
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) && !hasUnsettled(trails) {
		return nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	repo, err := rt.repo(ctx)
	if err != nil {
		return fmt.Errorf("settle the worktrees of run %s: %w", runID, err)
	}
	var errs []error
	seen := map[string]bool{}
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if strings.HasPrefix(e.Name(), worktree.RemovingPrefix) {
			// A removal a crash cut short: the worktree is forgotten
			// already, only its files are left.
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		seen[dir] = true
		if err := rt.salvageDir(ctx, repo, runID, dir, trails[dir], add); err != nil {
			errs = append(errs, err)
		}
	}
	// A started call whose directory is gone may still have committed.
	for dir, tr := range trails {
		if seen[dir] || tr.settled != nil || tr.started == nil {
			continue
		}
		if err := rt.salvageDir(ctx, repo, runID, dir, tr, add); err != nil {
			errs = append(errs, err)
		}
	}
	_ = os.Remove(root)
	return errors.Join(errs...)
}

func hasUnsettled(trails map[string]*worktreeTrail) bool {
	for _, tr := range trails {
		if tr.started != nil && tr.settled == nil {
			return true
		}
	}
	return false
}

func (rt *Runtime) salvageDir(ctx context.Context, repo *worktree.Repo, runID, dir string, tr *worktreeTrail, add func(context.Context, *record) error) error {
	switch {
	case tr != nil && tr.settled != nil:
		if tr.settled.Status == worktreeRemoved {
			// The removal was cut short.
			return repo.Attach(dir, tr.settled.Branch, tr.settled.Base).Remove(ctx, tr.settled.Head, true)
		}
		return nil
	case tr != nil && tr.started != nil:
		return rt.salvageInterrupted(ctx, repo, runID, dir, tr, add)
	}
	// No call started in it: the process died while creating it, before
	// any agent could run there. Nothing in it is anyone's work.
	rt.log.Warn("removing a worktree whose creation was interrupted", "run", runID, "worktree", dir)
	list, err := repo.Worktrees(ctx)
	if err != nil {
		return err
	}
	for _, e := range list {
		if e.Dir == filepath.Clean(dir) {
			branch := e.Branch
			if !strings.HasPrefix(branch, branchRoot+runID+"/") {
				branch = ""
			}
			return repo.Attach(dir, branch, e.Head).Remove(ctx, e.Head, true)
		}
	}
	return os.RemoveAll(dir)
}

// salvageInterrupted commits what an interrupted call left in its
// worktree, journals it, and removes the worktree if it holds nothing.
func (rt *Runtime) salvageInterrupted(ctx context.Context, repo *worktree.Repo, runID, dir string, tr *worktreeTrail, add func(context.Context, *record) error) error {
	info := *tr.started
	info.Interrupted = true
	var out worktree.Outcome
	var err error
	var settled *Worktree
	if _, serr := os.Stat(dir); serr != nil {
		// Only the branch is left; the agent may have committed on it.
		heads, herr := repo.BranchHeads(ctx, info.Branch)
		if herr != nil {
			return herr
		}
		out.Head = heads[info.Branch]
		if out.Head == "" {
			return nil // nothing left at all
		}
		out.Changed = out.Head != info.Base
		if out.Changed {
			out.Stat, err = repo.DiffStat(ctx, info.Base, out.Head)
		}
		settled = settledInfo(info, out, err)
	} else {
		info.Dir = dir
		settled, err = Leftover(repo, info).Settle(ctx, IsolationSpec{RunID: runID, Path: tr.path}, true, rt.log)
	}
	if err != nil {
		rt.log.Error("could not commit the edits of an interrupted isolated call; its worktree is kept as the agent left it",
			"run", runID, "worktree", dir, "err", err)
	}
	if err := add(ctx, &record{Type: recWorktree, Path: tr.path, Kind: "agent", Fingerprint: tr.fp, Worktree: settled}); err != nil {
		return err
	}
	tr.settled = settled
	if settled.Status == worktreeRemoved {
		return repo.Attach(dir, info.Branch, info.Base).Remove(ctx, settled.Head, true)
	}
	rt.log.Warn("kept the partial edits of an interrupted isolated call", "run", runID, "call", tr.path, "branch", settled.Branch)
	return nil
}

// clearStaleIndexLock removes an index.lock an agent's git left in its
// worktree when it was killed with it: nothing else uses that worktree,
// and the lock would make committing its edits fail.
func clearStaleIndexLock(tree *worktree.Tree, log *slog.Logger) {
	gitDir, err := tree.GitDir()
	if err != nil {
		return
	}
	lock := filepath.Join(gitDir, "index.lock")
	if err := os.Remove(lock); err == nil {
		log.Warn("removed a stale index.lock from an interrupted agent's worktree", "lock", lock)
	}
}

// checkKeptBranches checks the kept branches of the calls a resume may replay:
// a branch that moved or vanished since the call finished gets a note,
// logged when the call is replayed.
func (rt *Runtime) checkKeptBranches(runID string, kept map[string]*Worktree) map[string]string {
	if len(kept) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	notes := map[string]string{}
	repo, err := rt.repo(ctx)
	var heads map[string]string
	if err == nil {
		heads, err = repo.BranchHeads(ctx, branchRoot+runID+"/")
	}
	if err != nil {
		rt.log.Warn("cannot check the kept branches of the calls to replay", "run", runID, "err", err)
		return nil
	}
	for _, w := range kept {
		head, ok := heads[w.Branch]
		switch {
		case !ok:
			merged, _ := repo.IsAncestor(ctx, w.Head, "HEAD")
			if merged {
				notes[w.Branch] = fmt.Sprintf("its kept branch %s is gone; its head %.12s is merged into HEAD", w.Branch, w.Head)
			} else {
				notes[w.Branch] = fmt.Sprintf("its kept branch %s is gone, and its head %.12s is not merged into HEAD: the edits are reachable only by that commit id", w.Branch, w.Head)
			}
		case head != w.Head:
			notes[w.Branch] = fmt.Sprintf("its kept branch %s moved from %.12s to %.12s since the call finished; the replayed answer does not know of the new commits", w.Branch, w.Head, head)
		}
	}
	return notes
}

// noteReplayedWorktree warns, when a replayed call's kept branch moved or
// vanished, that the answer being replayed may no longer match it.
func (r *Run) noteReplayedWorktree(sc *scope, path, label string, w *Worktree) {
	note, ok := r.branchNotes[w.Branch]
	if !ok {
		return
	}
	who := path
	if label != "" {
		who = fmt.Sprintf("%s (%s)", path, label)
	}
	r.rt.log.Warn("replayed an isolated call whose kept branch changed", "run", r.id, "call", path, "branch", w.Branch)
	r.logLine(sc, "warn", "replayed call "+who+": "+note)
}

// keptWorktrees returns the kept worktrees of the answers a resume may
// replay, by branch.
func keptWorktrees(l *callpolicy.Ledger) map[string]*Worktree {
	kept := map[string]*Worktree{}
	l.Answers(func(a *callpolicy.Answer) {
		if w, ok := a.Kept.(*Worktree); ok {
			kept[w.Branch] = w
		}
	})
	return kept
}
