package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/internal/worktree"
)

// WorktreeState is a kept worktree as the journal recorded it and as git
// has it now.
type WorktreeState struct {
	RunID string `json:"runId"`
	KeptWorktree
	// Active: the call is running in it now. Never cleaned.
	Active bool `json:"active,omitempty"`
	// Unsettled: a process died while the call ran in it; its edits are
	// committed by the next resume (or run, or serve) of the project.
	Unsettled bool `json:"unsettled,omitempty"`
	// Orphan: the worktree's run was deleted; only git knows of it.
	Orphan bool `json:"orphan,omitempty"`
	// Worker: a Temporal worker made it, for a run on Temporal; its call
	// counts as active while the worker's record of it is there.
	Worker bool `json:"worker,omitempty"`
	// Leftover: its agent changed nothing and it was to be removed, but
	// the removal failed.
	Leftover bool `json:"leftover,omitempty"`
	// Exists: its directory is still there.
	Exists bool `json:"exists"`
	// BranchHead is where its branch is now, "" when the branch is gone.
	BranchHead string `json:"branchHead,omitempty"`
	// Dirty: the directory holds edits that are on no commit.
	Dirty bool `json:"dirty,omitempty"`
	// Refused says why dynworkflow runs no git command in the directory:
	// its .git was rewritten to point elsewhere. It counts as dirty.
	Refused string `json:"refused,omitempty"`
	// Merged: the branch's work is in the project's HEAD (or the branch
	// is gone and nothing is left uncommitted).
	Merged bool `json:"merged"`
	// Now is the diff stat from the base to the branch as it is now.
	Now worktree.Stat `json:"now"`
}

// Moved reports a branch that is not where the call left it.
func (w *WorktreeState) Moved() bool {
	return w.BranchHead != "" && w.Head != "" && w.BranchHead != w.Head
}

// Worktrees lists the kept worktrees of run id, or of every run when id
// is empty, with their state in git now. Worktrees whose directory and
// branch are both gone are left out.
func (rt *Runtime) Worktrees(ctx context.Context, id string) ([]WorktreeState, error) {
	if id != "" {
		if err := store.ValidRunID(id); err != nil {
			return nil, err
		}
		if _, err := os.Stat(rt.store.RunPaths(id).Journal); err != nil && !rt.hasWorktreeDirs(id) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
	}
	repo, err := rt.repo(ctx)
	if err != nil {
		if _, ok := IsolationUnavailable(err, rt.cfg.Cwd); ok && !rt.hasWorktreeDirs(id) {
			return nil, nil // no git, and nothing was ever kept here
		}
		return nil, err
	}
	head, err := repo.Head(ctx)
	if err != nil && !errors.Is(err, worktree.ErrNoCommit) {
		return nil, err
	}
	heads, err := repo.BranchHeads(ctx, branchRoot)
	if err != nil {
		return nil, err
	}
	ids := []string{id}
	if id == "" {
		ids = rt.runsWithWorktrees(heads)
	}
	var out []WorktreeState
	for _, id := range ids {
		states, err := rt.runWorktrees(ctx, repo, id, heads)
		if err != nil {
			return nil, err
		}
		out = append(out, states...)
	}
	kept := out[:0]
	for _, w := range out {
		if err := fillLiveState(ctx, repo, head, heads, &w); err != nil {
			return nil, err
		}
		if w.Exists || w.BranchHead != "" || w.Active {
			kept = append(kept, w)
		}
	}
	return kept, nil
}

// hasWorktreeDirs reports whether run id (any run when empty) has
// worktree directories.
func (rt *Runtime) hasWorktreeDirs(id string) bool {
	dirs := []string{rt.store.WorktreesRoot()}
	if id != "" {
		dirs = []string{rt.store.WorktreesDir(id), rt.workerWorktreesDir(id)}
	}
	for _, dir := range dirs {
		if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
			return true
		}
	}
	return false
}

// workerWorktreesDir is where a Temporal worker sharing this state root
// makes the worktrees of run id.
func (rt *Runtime) workerWorktreesDir(id string) string {
	return store.WorkerWorktreesDir(rt.store.Root(), rt.store.ProjectID(), id)
}

// runsWithWorktrees lists, sorted, the runs that have worktree directories
// or branches: the only runs that can have kept worktrees.
func (rt *Runtime) runsWithWorktrees(heads map[string]string) []string {
	set := map[string]bool{}
	if entries, err := os.ReadDir(rt.store.WorktreesRoot()); err == nil {
		for _, e := range entries {
			if e.IsDir() && store.ValidRunID(e.Name()) == nil {
				set[e.Name()] = true
			}
		}
	}
	for branch := range heads {
		run, _, _ := strings.Cut(strings.TrimPrefix(branch, branchRoot), "/")
		if store.ValidRunID(run) == nil {
			set[run] = true
		}
	}
	ids := make([]string, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// runWorktrees returns run id's kept, active and unsettled worktrees from
// its journal, and the directories and branches of a deleted run.
func (rt *Runtime) runWorktrees(ctx context.Context, repo *worktree.Repo, id string, heads map[string]string) ([]WorktreeState, error) {
	d, err := rt.Inspect(id)
	if errors.Is(err, ErrNotFound) {
		return rt.orphanWorktrees(ctx, repo, id, heads)
	}
	if err != nil {
		return nil, err
	}
	_, held, _ := rt.store.LeaseHolder(id)
	_, live := rt.Live(id)
	running := held || live
	var out []WorktreeState
	for _, k := range d.Worktrees {
		out = append(out, WorktreeState{RunID: id, KeptWorktree: k})
	}
	for _, c := range d.Calls {
		w := c.Worktree
		if w == nil {
			continue
		}
		k := KeptWorktree{Path: c.Path, Label: c.Label, Epoch: c.Epoch, Worktree: *w}
		switch w.Status {
		case worktreeActive:
			out = append(out, WorktreeState{RunID: id, KeptWorktree: k, Active: running, Unsettled: !running})
		case worktreeRemoved:
			// Listed only if the removal left something behind.
			out = append(out, WorktreeState{RunID: id, KeptWorktree: k, Leftover: true})
		}
	}
	return out, nil
}

// orphanWorktrees are the worktrees of a run with no journal here: a
// deleted run's, or those a Temporal worker sharing this state made for a
// run on Temporal. They are those git knows whose directory is in the
// run's worktree directory of the state, where only dynworkflow makes
// worktrees. A branch named like ours (dynworkflow/<run>/...) is not
// enough: it may be the user's, with a worktree of the user's elsewhere,
// and is left alone.
func (rt *Runtime) orphanWorktrees(ctx context.Context, repo *worktree.Repo, id string, heads map[string]string) ([]WorktreeState, error) {
	list, err := repo.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	ours, workers := rt.store.WorktreesDir(id), rt.workerWorktreesDir(id)
	var out []WorktreeState
	for _, e := range list {
		if e.Branch == "" {
			continue
		}
		w := WorktreeState{RunID: id, KeptWorktree: KeptWorktree{
			Worktree: Worktree{Status: worktreeKept, Dir: e.Dir, Branch: e.Branch, Head: heads[e.Branch]}}}
		switch {
		case within(ours, e.Dir):
			w.Orphan = true
		case within(workers, e.Dir):
			// An attempt under way, or one whose worker died and which the
			// call's next attempt settles: never cleaned from here.
			_, err := os.Stat(AttemptRecord(e.Dir))
			w.Worker, w.Active = true, err == nil
		default:
			continue
		}
		// No record says where the branch started: the diff stat is from
		// where it left the project's history.
		if w.Head != "" {
			w.Base, _ = repo.MergeBase(ctx, w.Head, "HEAD") // none: no stat
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b WorktreeState) int { return strings.Compare(a.Branch, b.Branch) })
	return out, nil
}

// fillLiveState reads a worktree's state in git now.
func fillLiveState(ctx context.Context, repo *worktree.Repo, projectHead string, heads map[string]string, w *WorktreeState) error {
	var err error
	w.BranchHead = heads[w.Branch]
	if w.Dir != "" {
		if fi, err := os.Stat(w.Dir); err == nil && fi.IsDir() {
			w.Exists = true
		}
	}
	if w.Exists && !w.Active {
		w.Dirty, err = repo.Attach(w.Dir, w.Branch, w.Base).Dirty(ctx)
		switch {
		case errors.Is(err, worktree.ErrForeignGitDir):
			w.Dirty, w.Refused = true, err.Error()
		case err != nil:
			return err
		}
	}
	if w.BranchHead != "" && w.Base != "" {
		if w.Now, err = repo.DiffStat(ctx, w.Base, w.BranchHead); err != nil {
			return err
		}
	}
	switch {
	case w.Dirty || w.Active || w.Unsettled:
	case w.BranchHead == "", w.Leftover && w.BranchHead == w.Head:
		// Nothing is on the branch that is not on its base.
		w.Merged = true
	case projectHead != "":
		if w.Merged, err = repo.IsAncestor(ctx, w.BranchHead, projectHead); err != nil {
			return err
		}
	}
	return nil
}

// CleanResult is what Clean did with one worktree.
type CleanResult struct {
	WorktreeState
	Removed bool `json:"removed"`
	// Reason says why a worktree was kept.
	Reason string `json:"reason,omitempty"`
}

// ErrUnmerged is returned by CleanWorktrees when a worktree the caller
// named holds work that is not merged and force was not given.
var ErrUnmerged = errors.New("refusing to remove unmerged work without --force")

// CleanWorktrees removes kept worktrees and their branches: those named by
// branches (full branch names, or the part after dynworkflow/<run>/), or,
// when none are named, every merged one of run id (every run when empty).
// Work that is not merged into the project's HEAD, or not committed, is
// removed only with force; a named one that is refused makes the error
// ErrUnmerged. Worktrees of calls running now are never touched.
func (rt *Runtime) CleanWorktrees(ctx context.Context, id string, branches []string, force bool) ([]CleanResult, error) {
	states, err := rt.Worktrees(ctx, id)
	if err != nil {
		return nil, err
	}
	named := map[string]bool{}
	for _, b := range branches {
		named[b] = false
	}
	var results []CleanResult
	for _, w := range states {
		isNamed := false
		for _, b := range branches {
			if matchesBranch(w, b) {
				named[b], isNamed = true, true
			}
		}
		if len(branches) > 0 && !isNamed {
			continue
		}
		if !w.Exists && w.BranchHead == "" {
			continue
		}
		res := CleanResult{WorktreeState: w}
		switch {
		case w.Active:
			res.Reason = "its call is running in it now"
		case w.Unsettled && !force:
			res.Reason = "it holds the uncommitted edits of an interrupted call; resume the run to commit them, or " + forceHint(w)
		case w.Refused != "" && !force:
			res.Reason = "its .git was rewritten to point elsewhere, so git cannot say what it holds; look at it, then " + forceHint(w)
		case w.Dirty && !force:
			res.Reason = "it has uncommitted edits; commit them, or " + forceHint(w)
		case !w.Merged && !force:
			res.Reason = fmt.Sprintf("not merged into HEAD (%s); merge it, or %s", w.Now, forceHint(w))
		default:
			res.Removed, res.Reason = true, ""
		}
		if res.Removed {
			if err := rt.removeWorktree(ctx, w, force); err != nil {
				res.Removed, res.Reason = false, err.Error()
			}
		}
		results = append(results, res)
	}
	var missing []string
	for b, found := range named {
		if !found {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return results, fmt.Errorf("no kept worktree has the branch %s (see: dynworkflow worktrees)", strings.Join(missing, ", "))
	}
	for _, res := range results {
		if !res.Removed && len(branches) > 0 {
			return results, fmt.Errorf("%w: %s: %s", ErrUnmerged, res.Branch, res.Reason)
		}
	}
	return results, nil
}

func forceHint(w WorktreeState) string {
	return fmt.Sprintf("delete it anyway with: dynworkflow worktrees clean %s %s --force", w.RunID, w.Branch)
}

func matchesBranch(w WorktreeState, name string) bool {
	return name == w.Branch || name == strings.TrimPrefix(w.Branch, branchRoot+w.RunID+"/") || (w.Dir != "" && filepath.Clean(name) == w.Dir)
}

// removeWorktree deletes a worktree's directory and its branch.
func (rt *Runtime) removeWorktree(ctx context.Context, w WorktreeState, force bool) error {
	if w.Dir != "" && !within(rt.store.WorktreesDir(w.RunID), w.Dir) {
		return fmt.Errorf("%s is not in the worktree directory of run %s (%s); dynworkflow removes only worktrees it made", w.Dir, w.RunID, rt.store.WorktreesDir(w.RunID))
	}
	repo, err := rt.repo(ctx)
	if err != nil {
		return err
	}
	branch := ""
	if w.BranchHead != "" {
		branch = w.Branch
	}
	if err := repo.Attach(w.Dir, branch, w.Base).Remove(ctx, w.BranchHead, force || w.Unsettled); err != nil {
		return err
	}
	if dir := rt.store.WorktreesDir(w.RunID); dir != "" {
		_ = os.Remove(dir)
	}
	return nil
}

// within reports whether path is dir or inside it.
// Symbolic links in either are resolved when the paths differ as given
// (git records some paths resolved).
func within(dir, path string) bool {
	if dir == "" || path == "" {
		return false
	}
	inside := func(dir, path string) bool {
		rel, err := filepath.Rel(dir, path)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
	}
	if inside(dir, path) {
		return true
	}
	rd, err1 := filepath.EvalSymlinks(dir)
	rp, err2 := filepath.EvalSymlinks(path)
	return err1 == nil && err2 == nil && inside(rd, rp)
}
