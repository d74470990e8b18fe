package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/journal"
	"github.com/dynworkflow/dynworkflow/engine/store"
)

// ForkInfo says which run and call a forked run was made from.
type ForkInfo struct {
	RunID string `json:"runId"`
	Path  string `json:"path"`
	// Seq is the record of the source's journal the fork was cut at: the
	// start of the call (its answer, for a call with no start record).
	Seq int64 `json:"seq"`
	// Prompt and Answer are what the fork changed, if anything: the call
	// runs again with Prompt, takes Answer, or runs again as it was.
	Prompt *string         `json:"prompt,omitempty"`
	Answer json.RawMessage `json:"answer,omitempty"`
}

// ForkRequest asks for a new run that takes a run's answers up to one of
// its calls and goes on from there (see Fork).
type ForkRequest struct {
	// From is the run to fork, Path the call to fork it at.
	From, Path string
	// Prompt runs the call (an agent call) with another prompt; Answer
	// gives the call (an agent or a checkpoint) an answer instead of
	// running it; with neither it runs again as it was.
	Prompt *string
	Answer json.RawMessage
	// Options changes the new run's options (a cap, a route); nil keeps
	// the source's.
	Options func(*Options)
}

// Fork makes a new run from the journal of run From up to the start of
// its call at Path: every record before it is copied into the new run's
// journal, the answers among them as answers the new run did not pay for
// (source "copied"), so that they replay by the usual rules (the crash
// rule for the script and args the source ran last) and cost nothing. The
// call at Path then runs again, with Prompt if given, or takes Answer, and
// everything after it runs live. The change is an override in the new
// run's options (callpolicy.Override), so a resume of the fork keeps it
// and replays what the fork answered. Isolated calls' worktrees stay the
// source's: the copies keep their answers, not their branches. The new run
// starts executing here; it is returned as a resume is.
func (rt *Runtime) Fork(ctx context.Context, req ForkRequest) (*Run, error) {
	if err := store.ValidRunID(req.From); err != nil {
		return nil, err
	}
	ov := callpolicy.Override{Path: req.Path, Prompt: req.Prompt, Answer: req.Answer}
	if err := ov.Check(); err != nil {
		return nil, err
	}
	src := rt.store.RunPaths(req.From)
	if _, err := os.Lstat(src.Journal); err != nil {
		return nil, rt.missing(req.From, "fork")
	}
	recs, err := readRecords(src.Journal)
	if err != nil {
		return nil, err
	}
	cut, kind := forkPoint(recs, req.Path)
	switch {
	case cut == 0:
		return nil, fmt.Errorf("%w: run %s has no call %s (see: dynworkflow show %s --by-path)", ErrNotFound, req.From, req.Path, req.From)
	case kind == "checkpoint" && req.Prompt != nil:
		return nil, fmt.Errorf("%s of %s is a checkpoint: give it an --answer, not a --prompt", req.Path, req.From)
	case len(recs) == 0 || recs[0].Type != recRun || recs[0].Run == nil:
		return nil, fmt.Errorf("%w: %s: its journal does not start with its run record", ErrNotResumable, req.From)
	}

	header := *recs[0].Run
	id := store.NewRunID(header.Name)
	lease, err := rt.store.AcquireLease(id, rt.owner)
	if err != nil {
		return nil, err
	}
	info := &ForkInfo{RunID: req.From, Path: req.Path, Seq: cut, Prompt: req.Prompt, Answer: req.Answer}
	lines, err := forkJournal(recs, cut, id, info, ov)
	if err == nil {
		err = journal.WriteNew(rt.store.RunPaths(id).Journal, lines)
	}
	if err != nil {
		lease.Release()
		return nil, fmt.Errorf("fork %s: %w", req.From, err)
	}
	r, err := rt.resumeLeased(ctx, id, rt.store.RunPaths(id), lease, ResumeRequest{Options: req.Options})
	if err != nil {
		lease.Release()
		return nil, fmt.Errorf("fork %s: %w", req.From, err)
	}
	return r, nil
}

// readRecords reads every good record of a journal, without changing it.
func readRecords(path string) ([]record, error) {
	var recs []record
	_, err := journal.ScanReadOnly(path, func(b []byte) error {
		var r record
		if err := decodeRecord(b, &r); err != nil {
			return err
		}
		recs = append(recs, r)
		return nil
	})
	return recs, err
}

// forkPoint is where a fork at path cuts the journal: the sequence of the
// call's latest start, or, for a call that has none, of its latest answer
// or failure; 0 when the journal has no such call. kind is the call's.
func forkPoint(recs []record, path string) (int64, string) {
	var start, end int64
	kind := ""
	for _, r := range recs {
		if r.Path != path {
			continue
		}
		switch r.Type {
		case recStarted:
			start, kind = r.Seq, r.Kind
		case recFinished, recFailed:
			end = r.Seq
			if kind == "" {
				kind = r.Kind
			}
		}
	}
	if start > 0 {
		return start, kind
	}
	return end, kind
}

// forkJournal is the journal of a fork: the source's records before cut,
// renumbered, under the new run's id, then an end that leaves it paused.
// Answers become "copied" (the fork did not pay for them); failures keep
// no usage; worktrees are left out (they are the source's, and a resume
// must not settle them). The override goes into the options of the last
// record that has options, so that whichever execution comes next applies
// it, even one resumed after a crash of this fork.
func forkJournal(recs []record, cut int64, id string, info *ForkInfo, ov callpolicy.Override) ([][]byte, error) {
	var kept []record
	last, maxEpoch := -1, 0
	for _, r := range recs {
		if r.Seq >= cut {
			continue
		}
		switch r.Type {
		case recWorktree:
			continue
		case recRun:
			h := *r.Run
			h.RunID, h.Fork = id, info
			r.Run = &h
			last = len(kept)
		case recResume:
			h := *r.Resume
			r.Resume = &h
			last = len(kept)
		case recStarted:
			r.Worktree = nil
		case recFinished:
			if r.Answer != nil && r.Answer.Source == "live" {
				a := *r.Answer
				a.Source, a.History = sourceCopied, nil
				r.Answer = &a
			}
		case recFailed:
			r.Usage = nil
		case recEnd:
			continue // the fork's own end follows
		}
		maxEpoch = max(maxEpoch, r.Epoch)
		kept = append(kept, r)
	}
	if last < 0 || kept[0].Type != recRun {
		return nil, errors.New("the journal before the call has no run record")
	}
	ov.Since = maxEpoch + 1
	if h := kept[last].Run; h != nil {
		h.Options.Overrides = append(append([]callpolicy.Override(nil), h.Options.Overrides...), ov)
	} else {
		h := kept[last].Resume
		h.Options.Overrides = append(append([]callpolicy.Override(nil), h.Options.Overrides...), ov)
	}
	now := time.Now().UnixMilli()
	kept = append(kept, record{Type: recEnd, Time: now, Epoch: maxEpoch,
		End: &endInfo{Status: string(StatusPaused), PauseReason: fmt.Sprintf("forked from %s at %s", info.RunID, info.Path)}})
	out := make([][]byte, len(kept))
	for i := range kept {
		kept[i].Seq = int64(i + 1)
		line, err := appendRecord(nil, &kept[i])
		if err != nil {
			return nil, err
		}
		out[i] = line
	}
	return out, nil
}

// sourceCopied is the source of an answer a fork copied from the run it
// was forked from: replayed there, paid for by the other run.
const sourceCopied = "copied"
