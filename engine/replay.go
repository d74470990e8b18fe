package engine

import (
	"encoding/json"
	"sync"

	"github.com/dynworkflow/dynworkflow/executors"
)

// replayMode says how a workflow frame reuses the journal.
type replayMode int

const (
	// fresh: the first execution; nothing to replay.
	fresh replayMode = iota
	// crash: same script and args; replay every finished call that matches.
	crash
	// edit: the script or args changed; the prefix rule applies per scope.
	edit
)

func (m replayMode) String() string {
	switch m {
	case crash:
		return "crash"
	case edit:
		return "edit"
	default:
		return "fresh"
	}
}

// priorCall is a finished call from an earlier execution.
type priorCall struct {
	path    string
	fp      string
	result  json.RawMessage
	usage   executors.Usage
	claimed bool
	// worktree is the kept worktree of an isolated call, if any.
	worktree *Worktree
}

// replayIndex answers "has this call already finished?" for a resumed run.
// A call is matched by path and fingerprint. On a resume of the same
// script (crash mode) it is matched, failing that, by an unclaimed call of
// the same scope with the same fingerprint, which absorbs calls reordered
// by a Promise.all the runtime cannot see (calls with identical
// fingerprints are interchangeable). After an edit that fallback would
// let a call outlive the prefix rule: with A, B, C edited to A, C, the C
// now at B's place would replay C's answer, which came after B's work. So
// in edit mode only an exact match replays, and the first miss breaks the
// scope's flow.
type replayIndex struct {
	mu        sync.Mutex
	exact     map[string]*priorCall   // path + "\x00" + fp
	byScopeFP map[string][]*priorCall // scope path + "\x00" + fp
	seen      map[string]bool         // path + "\x00" + fp of every call ever started
}

func newReplayIndex() *replayIndex {
	return &replayIndex{
		exact:     map[string]*priorCall{},
		byScopeFP: map[string][]*priorCall{},
		seen:      map[string]bool{},
	}
}

func key(a, b string) string { return a + "\x00" + b }

// addStarted notes a call that was launched; if it never finished it will
// run again, but it is not a change to the script.
func (ix *replayIndex) addStarted(path, fp string) { ix.seen[key(path, fp)] = true }

// addFinished records a finished call, superseding an earlier answer for
// the same path and fingerprint.
func (ix *replayIndex) addFinished(path, fp string, result json.RawMessage, usage executors.Usage) {
	k := key(path, fp)
	ix.seen[k] = true
	if p := ix.exact[k]; p != nil {
		p.result, p.usage = result, usage
		return
	}
	p := &priorCall{path: path, fp: fp, result: result, usage: usage}
	ix.exact[k] = p
	sk := key(parentPath(path), fp)
	ix.byScopeFP[sk] = append(ix.byScopeFP[sk], p)
}

// setWorktree notes the kept worktree of the finished call at path.
func (ix *replayIndex) setWorktree(path, fp string, w *Worktree) {
	if p := ix.exact[key(path, fp)]; p != nil {
		p.worktree = w
	}
}

// keptWorktrees returns the kept worktrees of the finished calls, by
// branch.
func (ix *replayIndex) keptWorktrees() map[string]*Worktree {
	kept := map[string]*Worktree{}
	for _, p := range ix.exact {
		if p.worktree != nil {
			kept[p.worktree.Branch] = p.worktree
		}
	}
	return kept
}

// forgetFinished drops an answer a later execution replaced with a failure.
func (ix *replayIndex) forgetFinished(path, fp string) {
	k := key(path, fp)
	p := ix.exact[k]
	if p == nil {
		return
	}
	delete(ix.exact, k)
	sk := key(parentPath(path), fp)
	list := ix.byScopeFP[sk]
	for i, q := range list {
		if q == p {
			ix.byScopeFP[sk] = append(list[:i], list[i+1:]...)
			break
		}
	}
}

// lookup finds the answer for the call at path with fingerprint fp in scope
// sc, claiming it. Under the edit rule a call that was never seen (new, or
// changed) breaks its scope's flow, so later calls there run live.
func (ix *replayIndex) lookup(sc *scope, path, fp string, mode replayMode) (*priorCall, bool) {
	if ix == nil || mode == fresh {
		return nil, false
	}
	broken := mode == edit && sc.flow.isBroken()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if broken {
		return nil, false
	}
	k := key(path, fp)
	if p := ix.exact[k]; p != nil && !p.claimed {
		p.claimed = true
		return p, true
	}
	if mode == edit {
		if !ix.seen[k] {
			sc.flow.breakNow()
		}
		return nil, false
	}
	for _, p := range ix.byScopeFP[key(sc.path, fp)] {
		if !p.claimed {
			p.claimed = true
			return p, true
		}
	}
	return nil, false
}
