package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/internal/worktree"
)

// An isolated call on Temporal runs each attempt in a worktree of its own,
// made by the worker that runs it, in the project's repository as that
// worker sees it at the run's project path. That works when the worker
// shares the project's file system (the same machine, or a mount at the
// same path); a worker that cannot see the project pauses the run rather
// than run the agent in a checkout of its own. What is kept is the
// attempt's branch (dynworkflow/<run>/<name>) in the project's repository;
// the worktree's directory is under the worker's state root.
//
// Each attempt records its worktree beside it (<name>.json) until it is
// settled, as the local engine records call.started in its journal: when
// a worker dies with the agent, the next attempt of the call, on any
// worker, commits what the dead one left and keeps its branch.

// attemptTree is the worktree of one attempt of an isolated call.
type attemptTree struct {
	spec engine.IsolationSpec
	iso  *engine.Isolated
	// earlier are the worktrees of earlier attempts of the call, lost with
	// their workers, settled before this attempt began.
	earlier []engine.Worktree
}

// record is where the attempt's worktree is recorded while it runs.
func (t *attemptTree) record() string { return engine.AttemptRecord(t.iso.Info().Dir) }

// isolate makes the worktree an attempt runs in, on this worker, after
// settling what attempts lost with their workers left. Its error is the
// activity's.
func (a *Activities) isolate(ctx context.Context, runID string, in AgentInput) (*attemptTree, error) {
	if _, err := os.Stat(in.Cwd); err != nil {
		msg := fmt.Sprintf("agent(): isolation: 'worktree' makes each agent's worktree on the worker that runs it, and worker %s cannot see the project directory %s (%v); "+
			"run the workers where the project is, on its machine or on a mount at the same path, or drop the isolation option, and resume",
			a.Identity, in.Cwd, errors.Unwrap(err))
		return nil, agentError(errIsolation, msg, AgentFailure{Message: msg}, nil)
	}
	parent := store.WorkerWorktreesDir(a.StateRoot, store.ProjectID(in.Cwd), runID)
	if parent == "" {
		msg := fmt.Sprintf("agent(): isolation: 'worktree': %q is not a run id this worker can make worktrees for", runID)
		return nil, agentError(errTerminal, msg, AgentFailure{Message: msg}, nil)
	}
	t := &attemptTree{spec: engine.IsolationSpec{Parent: filepath.Join(parent, callDir(in.Path)), RunID: runID, Path: in.Path, Label: in.Label}}
	repo, err := worktree.Open(ctx, in.Cwd)
	if err == nil {
		t.earlier, err = a.settleLeftovers(ctx, repo, t.spec)
	}
	if err == nil {
		t.iso, err = engine.Isolate(ctx, repo, t.spec)
	}
	if err == nil {
		err = writeTreeRecord(t.record(), t.iso.Info())
		if err != nil {
			_ = t.iso.Remove(ctx, t.iso.Info().Base)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ierr := engine.IsolationError(err, in.Cwd)
		if errors.Is(ierr, callpolicy.ErrIsolationUnavailable) {
			msg := fmt.Sprintf("on worker %s: %v", a.Identity, ierr)
			return nil, agentError(errIsolation, msg, AgentFailure{Message: msg}, nil)
		}
		a.Logger.Error("could not create the worktree of an isolated call", "run", runID, "call", in.Path, "err", err)
		return nil, agentError(errTerminal, ierr.Error(), AgentFailure{Message: fmt.Sprintf("%v: %v", ierr, err)}, err)
	}
	return t, nil
}

// settle commits what the attempt's agent left and removes the worktree
// when the agent changed nothing. It runs even when ctx is cancelled.
func (a *Activities) settle(ctx context.Context, t *attemptTree, interrupted bool) *engine.Worktree {
	info, err := t.iso.Settle(ctx, t.spec, interrupted, a.Logger)
	// Settled either way: a worktree whose edits could not be committed is
	// kept as the agent left it, and info says why; no later attempt is to
	// take it for a dead one's.
	_ = os.Remove(t.record())
	if err != nil {
		a.Logger.Error("could not commit an isolated agent's edits; its worktree is kept as the agent left it",
			"run", t.spec.RunID, "worktree", info.Dir, "err", err)
		return info
	}
	if info.Removed() {
		if err := t.iso.Remove(ctx, info.Head); err != nil {
			a.Logger.Warn("remove an unchanged worktree", "run", t.spec.RunID, "worktree", info.Dir, "err", err)
		}
	}
	removeEmptyParents(t.spec.Parent)
	return info
}

// settleLeftovers settles the worktrees that earlier attempts of the call
// left when their workers died: attempts of one call never overlap, so
// each one recorded in its directory is a dead agent's.
func (a *Activities) settleLeftovers(ctx context.Context, repo *worktree.Repo, spec engine.IsolationSpec) ([]engine.Worktree, error) {
	entries, err := os.ReadDir(spec.Parent)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var settled []engine.Worktree
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, worktree.RemovingPrefix) {
			// A removal its worker died in: only the files are left.
			_ = os.RemoveAll(filepath.Join(spec.Parent, name))
			continue
		}
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		record := filepath.Join(spec.Parent, name)
		info, err := readTreeRecord(record)
		if err != nil || engine.AttemptRecord(info.Dir) != record {
			a.Logger.Warn("ignoring a worktree record that is not one this worker wrote", "record", record, "err", err)
			continue
		}
		left := engine.Leftover(repo, info)
		out, err := left.Settle(ctx, spec, true, a.Logger)
		switch {
		case err != nil:
			// Kept as the dead agent left it, with why: this attempt still
			// runs, in a new worktree.
			a.Logger.Error("could not commit the edits an attempt lost with its worker left; its worktree is kept as it was",
				"run", spec.RunID, "worktree", info.Dir, "err", err)
		case out.Removed():
			if err := left.Remove(ctx, out.Head); err != nil {
				return settled, err
			}
		default:
			a.Logger.Warn("kept the partial edits of an attempt lost with its worker", "run", spec.RunID, "call", spec.Path, "branch", out.Branch)
		}
		if err := os.Remove(record); err != nil {
			return settled, err
		}
		settled = append(settled, *out)
	}
	return settled, nil
}

// callDir is the directory of one call's worktrees: named for people by
// its path, and told apart from another path's by its hash.
func callDir(path string) string {
	sum := sha256.Sum256([]byte(path))
	return store.Slug(path, "call") + "-" + hex.EncodeToString(sum[:4])
}

func writeTreeRecord(path string, info engine.Worktree) error {
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readTreeRecord(path string) (engine.Worktree, error) {
	var info engine.Worktree
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &info)
	}
	return info, err
}

// removeEmptyParents drops a call's worktree directory, and its run's,
// once nothing is left in them.
func removeEmptyParents(dir string) {
	if os.Remove(dir) == nil {
		_ = os.Remove(filepath.Dir(dir))
	}
}
