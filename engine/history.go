package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/journal"
	"github.com/dynworkflow/dynworkflow/executors"
)

// history is a run's journal folded into what a resume needs: the current
// script, args and options, every finished call, and the totals so far.
type history struct {
	header     runHeader
	created    time.Time
	epoch      int
	scriptPath string
	scriptHash string
	scriptText string
	args       json.RawMessage
	options    Options
	// executors are the latest journaled executor definitions.
	executors []executors.Definition
	// ledger is what every execution did with the run's calls: what a
	// resume may replay (see callpolicy.Ledger).
	ledger  *callpolicy.Ledger
	lastSeq int64
	end     *endInfo
	// usage is what every live attempt of every execution cost.
	usage executors.Usage
	// report is what the scan found besides good records: a torn tail it
	// moved aside, damaged lines it skipped.
	report journal.Report
	// damaged describes the damaged lines, for the user.
	damaged []DamagedRecord
	// worktrees is what the journal says of each isolated call's worktree,
	// by directory.
	worktrees map[string]*worktreeTrail
	// traces are the traces of the executions that were traced, oldest
	// first, for a new execution's trace to link to.
	traces []TraceContext
}

// foldRecord is the part of a record a resume needs. Prompts, transcripts
// and logs are skipped, not decoded: a 10,000-call journal is read in
// well under a second.
type foldRecord struct {
	Seq         int64            `json:"seq"`
	Type        string           `json:"type"`
	Time        int64            `json:"t"`
	Epoch       int              `json:"epoch"`
	Run         *runHeader       `json:"run"`
	Resume      *resumeHeader    `json:"resume"`
	Script      *scriptRecord    `json:"script"`
	Path        string           `json:"path"`
	Fingerprint string           `json:"fp"`
	Result      json.RawMessage  `json:"result"`
	Usage       *executors.Usage `json:"usage"`
	Answer      *struct {
		Source string `json:"source"`
	} `json:"answer"`
	Worktree *Worktree `json:"worktree"`
	End      *endInfo  `json:"end"`
}

// loadHistory reads and folds the journal at path, repairing a torn tail.
func loadHistory(path string) (*history, error) {
	h := &history{ledger: callpolicy.NewLedger(), worktrees: map[string]*worktreeTrail{}}
	// settledBy is the settled worktree of each call path's latest
	// execution, for its call.finished record to take.
	settledBy := map[string]*Worktree{}
	sawRun := false
	calls := newCallIndex()
	report, err := journal.Scan(path, func(b []byte) error {
		var r foldRecord
		if err := decodeRecord(b, &r); err != nil {
			return err
		}
		if r.Seq > h.lastSeq {
			h.lastSeq = r.Seq
		}
		calls.note(r.Type, r.Path, r.Fingerprint)
		switch r.Type {
		case recRun:
			if r.Run == nil {
				return errors.New("a run record without its header")
			}
			sawRun = true
			h.created = time.UnixMilli(r.Time)
			h.header = *r.Run
			h.scriptPath, h.scriptHash, h.scriptText = r.Run.ScriptPath, r.Run.ScriptHash, r.Run.ScriptText
			h.args, h.options = r.Run.Args, r.Run.Options
			h.executors = r.Run.Executors
			h.ledger.Ran(callpolicy.Run{Epoch: 0, Identity: callpolicy.IdentityOf(h.scriptHash, h.args)})
			if r.Run.Trace != nil {
				h.traces = append(h.traces, *r.Run.Trace)
			}
		case recResume:
			if r.Resume == nil {
				return errors.New("a resume record without its header")
			}
			h.epoch = r.Epoch
			h.scriptHash = r.Resume.NewHash
			if r.Resume.ScriptPath != "" {
				h.scriptPath = r.Resume.ScriptPath
			}
			if r.Resume.ScriptText != "" {
				h.scriptText = r.Resume.ScriptText
			}
			h.args, h.options = r.Resume.Args, r.Resume.Options
			h.executors = mergeDefinitions(h.executors, r.Resume.Executors)
			h.end = nil
			h.ledger.Ran(callpolicy.Run{Epoch: r.Epoch, Identity: callpolicy.IdentityOf(h.scriptHash, h.args)})
			if r.Resume.Trace != nil {
				h.traces = append(h.traces, *r.Resume.Trace)
			}
		case recScript:
			if s := r.Script; s != nil {
				h.ledger.Ran(callpolicy.Run{Frame: s.Frame, Epoch: r.Epoch, Identity: callpolicy.IdentityOf(s.Hash, s.Args)})
			}
		case recStarted:
			h.ledger.Note(callpolicy.Record{Epoch: r.Epoch, Path: r.Path, FP: r.Fingerprint, Kind: callpolicy.Started})
			delete(settledBy, r.Path)
			if w := r.Worktree; w != nil {
				h.worktrees[w.Dir] = &worktreeTrail{path: r.Path, fp: r.Fingerprint, started: w}
			}
		case recWorktree:
			if w := r.Worktree; w != nil {
				tr := h.worktrees[w.Dir]
				if tr == nil {
					tr = &worktreeTrail{path: r.Path, fp: r.Fingerprint}
					h.worktrees[w.Dir] = tr
				}
				tr.settled = w
				settledBy[r.Path] = w
			}
		case recFinished:
			var u executors.Usage
			if r.Usage != nil {
				u = *r.Usage
				if r.Answer == nil || r.Answer.Source == "live" {
					h.usage = h.usage.Add(u)
				}
			}
			a := h.ledger.Note(callpolicy.Record{Epoch: r.Epoch, Path: r.Path, FP: r.Fingerprint, Kind: callpolicy.Finished,
				Result: r.Result, Usage: u})
			if w := settledBy[r.Path]; w != nil && w.Status == worktreeKept && !w.Interrupted {
				a.Kept = w
			}
		case recFailed:
			if r.Usage != nil {
				h.usage = h.usage.Add(*r.Usage)
			}
			h.ledger.Note(callpolicy.Record{Epoch: r.Epoch, Path: r.Path, FP: r.Fingerprint, Kind: callpolicy.Failed})
		case recEnd:
			h.end = r.End
		}
		return nil
	})
	h.report = report
	if err != nil {
		return nil, err
	}
	h.damaged = describeDamage(report.Damaged, calls, h.ledger.HasAnswer)
	if !sawRun {
		for _, d := range h.damaged {
			if d.Type == recRun || d.Line == 1 {
				return nil, fmt.Errorf("%s: %w: the run record (line %d) is damaged (%s): the run's script, args and options are lost; "+
					"show still lists its calls; start the workflow again with dynworkflow run", path, ErrNotResumable, d.Line, d.Reason)
			}
		}
		return nil, fmt.Errorf("%s: %w: the journal has no run record; it is not a dynworkflow journal or it was cut before the run began", path, ErrNotResumable)
	}
	return h, nil
}

// mergeDefinitions is old with the definitions of newer replacing those of
// the same name: an executor defined by any execution stays known.
func mergeDefinitions(old, newer []executors.Definition) []executors.Definition {
	byName := map[string]int{}
	out := append([]executors.Definition(nil), old...)
	for i, d := range out {
		byName[d.Name] = i
	}
	for _, d := range newer {
		if i, ok := byName[d.Name]; ok {
			out[i] = d
		} else {
			byName[d.Name] = len(out)
			out = append(out, d)
		}
	}
	return out
}
