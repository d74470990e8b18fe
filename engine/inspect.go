package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/journal"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
)

// Detail is everything known about a run: what `show` prints and what the
// API's run endpoint returns. It is folded from the journal, the truth.
type Detail struct {
	Summary    store.Summary   `json:"summary"`
	Script     ScriptInfo      `json:"script"`
	Args       json.RawMessage `json:"args,omitempty"`
	Options    Options         `json:"options"`
	Result     json.RawMessage `json:"result,omitempty"`
	Calls      []CallDetail    `json:"calls"`
	Logs       []LogLine       `json:"logs,omitempty"`
	Executions []Execution     `json:"executions"`
	Children   []ScriptInfo    `json:"children,omitempty"`
}

// ScriptInfo names a script and its content hash.
type ScriptInfo struct {
	Frame string `json:"frame,omitempty"`
	Name  string `json:"name,omitempty"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Text  string `json:"text,omitempty"`
}

// CallDetail is the latest state of one call path.
type CallDetail struct {
	Path      string                  `json:"path"`
	Kind      string                  `json:"kind"`
	Status    string                  `json:"status"` // running, done, failed
	Epoch     int                     `json:"epoch"`
	Label     string                  `json:"label,omitempty"`
	Phase     string                  `json:"phase,omitempty"`
	Prompt    string                  `json:"prompt,omitempty"`
	Executor  string                  `json:"executor,omitempty"`
	Model     string                  `json:"model,omitempty"`
	Result    json.RawMessage         `json:"result,omitempty"`
	Usage     *executors.Usage        `json:"usage,omitempty"`
	Error     string                  `json:"error,omitempty"`
	Source    string                  `json:"source,omitempty"`
	Provider  string                  `json:"provider,omitempty"`
	Attempts  int                     `json:"attempts,omitempty"`
	DurMs     int64                   `json:"durMs,omitempty"`
	History   []executors.HistoryItem `json:"history,omitempty"`
	StartedAt time.Time               `json:"startedAt,omitzero"`
	EndedAt   time.Time               `json:"endedAt,omitzero"`
	// Seq is the journal sequence of the record that began the call (its
	// start, or its answer when it has none): the order calls and log
	// lines happened in, finer than their millisecond times.
	Seq int64 `json:"seq,omitempty"`
}

// LogLine is one log() line or phase change.
type LogLine struct {
	Seq     int64     `json:"seq,omitempty"` // journal sequence
	Time    time.Time `json:"time"`
	Scope   string    `json:"scope,omitempty"`
	Level   string    `json:"level"`
	Message string    `json:"message"`
}

// Execution is one start or resume of the run and how it ended.
type Execution struct {
	Epoch     int       `json:"epoch"`
	Rule      string    `json:"rule"` // fresh, crash or edit
	OldHash   string    `json:"oldHash,omitempty"`
	NewHash   string    `json:"newHash"`
	StartedAt time.Time `json:"startedAt"`
	End       *endInfo  `json:"end,omitempty"`
}

// Inspect folds a run's journal into its full detail. It reads only; a
// run left running by a dead process shows as paused.
func (rt *Runtime) Inspect(id string) (*Detail, error) {
	if err := store.ValidRunID(id); err != nil {
		return nil, err
	}
	paths := rt.store.RunPaths(id)
	if _, err := os.Stat(paths.Journal); err != nil {
		if run, nerr := rt.store.ReadNodeRun(id); nerr == nil {
			return rt.inspectNodeRun(run), nil
		}
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	d, lastSeq, err := foldJournal(paths.Journal)
	if err != nil {
		return nil, err
	}
	d.Summary, err = rt.summaryOf(id, d, lastSeq)
	return d, err
}

// foldJournal folds a journal into a run's detail, all but its summary,
// and returns the sequence of its last record.
func foldJournal(path string) (*Detail, int64, error) {
	d := &Detail{}
	byPath := map[string]int{}
	call := func(path string) *CallDetail {
		i, ok := byPath[path]
		if !ok {
			i = len(d.Calls)
			byPath[path] = i
			d.Calls = append(d.Calls, CallDetail{Path: path})
		}
		return &d.Calls[i]
	}
	children := map[string]int{}
	line := 0
	var lastSeq int64
	err := journal.ScanReadOnly(path, func(b []byte) error {
		line++
		var r record
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		lastSeq = max(lastSeq, r.Seq)
		at := time.UnixMilli(r.Time).UTC()
		switch r.Type {
		case recRun:
			h := r.Run
			d.Script = ScriptInfo{Name: h.Name, Path: h.ScriptPath, Hash: h.ScriptHash, Text: h.ScriptText}
			d.Args, d.Options = h.Args, h.Options
			d.Executions = append(d.Executions, Execution{Epoch: 0, Rule: "fresh", NewHash: h.ScriptHash, StartedAt: at})
		case recResume:
			h := r.Resume
			d.Script.Hash = h.NewHash
			if h.ScriptText != "" {
				d.Script.Path, d.Script.Text = h.ScriptPath, h.ScriptText
			}
			d.Args, d.Options = h.Args, h.Options
			d.Executions = append(d.Executions, Execution{Epoch: r.Epoch, Rule: h.Rule, OldHash: h.OldHash, NewHash: h.NewHash, StartedAt: at})
		case recScript:
			s := r.Script
			info := ScriptInfo{Frame: s.Frame, Name: s.Name, Path: s.Path, Hash: s.Hash}
			if i, ok := children[s.Frame]; ok {
				d.Children[i] = info
			} else {
				children[s.Frame] = len(d.Children)
				d.Children = append(d.Children, info)
			}
		case recStarted:
			c := call(r.Path)
			*c = CallDetail{Path: r.Path, Kind: r.Kind, Status: "running", Epoch: r.Epoch, StartedAt: at, Seq: r.Seq}
			if r.Call != nil {
				c.Label, c.Phase, c.Prompt, c.Executor, c.Model = r.Call.Label, r.Call.Phase, r.Call.Prompt, r.Call.Executor, r.Call.Model
			}
		case recFinished, recFailed:
			c := call(r.Path)
			if c.Kind == "" {
				c.Kind, c.Epoch, c.Seq = r.Kind, r.Epoch, r.Seq
			}
			if r.Call != nil && c.Prompt == "" {
				c.Prompt, c.Phase = r.Call.Prompt, r.Call.Phase
			}
			c.Status, c.EndedAt, c.Usage, c.Error = "done", at, r.Usage, ""
			c.Result = r.Result
			if r.Type == recFailed {
				c.Status, c.Result = "failed", nil
				if r.Error != nil {
					c.Error = r.Error.Message
				}
			}
			if a := r.Answer; a != nil {
				c.Source, c.Provider, c.Attempts, c.DurMs, c.History = a.Source, a.Provider, a.Attempts, a.DurMs, a.History
				if a.Model != "" {
					c.Model = a.Model
				}
			}
		case recLog:
			d.Logs = append(d.Logs, LogLine{Seq: r.Seq, Time: at, Scope: r.Path, Level: r.Level, Message: r.Message})
		case recPhase:
			d.Logs = append(d.Logs, LogLine{Seq: r.Seq, Time: at, Scope: r.Path, Level: "phase", Message: r.Message})
		case recEnd:
			if n := len(d.Executions); n > 0 {
				d.Executions[n-1].End = r.End
			}
			d.Result = r.End.Result
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	sort.SliceStable(d.Calls, func(i, j int) bool { return lessPath(d.Calls[i].Path, d.Calls[j].Path) })
	return d, lastSeq, nil
}

// summaryOf returns the live summary, else the snapshot's when it is up to
// date with the journal, else one rebuilt from the detail: a snapshot read
// from its backup, or none at all, is older than the journal.
func (rt *Runtime) summaryOf(id string, d *Detail, lastSeq int64) (store.Summary, error) {
	if r, ok := rt.Live(id); ok {
		return r.summary(), nil
	}
	snap, err := rt.store.ReadSnapshot(id)
	if err == nil && !rt.staleSnapshot(id, snap, lastSeq) {
		s := snap.Summary
		rt.reconcileView(&s)
		return s, nil
	}
	if err != nil && !errors.Is(err, store.ErrSnapshotCorrupt) && !errors.Is(err, store.ErrNotFound) {
		return store.Summary{}, err
	}
	s := store.Summary{RunID: id, Name: d.Script.Name, ScriptPath: d.Script.Path, ScriptHash: d.Script.Hash,
		Executor: d.Options.Executor, JournalSeq: lastSeq, Status: string(StatusRunning)}
	if n := len(d.Executions); n > 0 {
		last := d.Executions[n-1]
		s.Epoch, s.StartedAt = last.Epoch, d.Executions[0].StartedAt
		if end := last.End; end != nil {
			s.Status, s.PauseReason, s.Error = end.Status, end.PauseReason, end.Error
			s.Stats.Replayed, s.Stats.Live, s.Stats.Failed = end.Replayed, end.Live, end.Failed
			s.Stats.Agents = end.Replayed + end.Live + end.Failed
		}
	}
	for _, c := range d.Calls {
		if c.Usage != nil && c.Source == "live" {
			s.Stats.InputTokens += c.Usage.InputTokens
			s.Stats.CachedInputTokens += c.Usage.CachedInputTokens
			s.Stats.OutputTokens += c.Usage.OutputTokens
			s.Stats.CostUSD += c.Usage.CostUSD
		}
	}
	rt.reconcileView(&s)
	return s, nil
}

// staleSnapshot reports a snapshot older than the journal: one read from
// the backup, or one behind the journal's end with no owner still updating
// it. A run executing in another process writes its snapshot every second,
// and that is the best view of it there is.
func (rt *Runtime) staleSnapshot(id string, snap *store.Snapshot, lastSeq int64) bool {
	if snap.Source == rt.store.RunPaths(id).Backup {
		return true
	}
	if snap.Summary.JournalSeq >= lastSeq {
		return false
	}
	_, held, err := rt.store.LeaseHolder(id)
	return err == nil && !held
}
