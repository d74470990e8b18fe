package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
	// Executors are the definitions of the executors the run could use.
	Executors []executors.Definition `json:"executors,omitempty"`
	// Failures groups the calls whose latest state is failed, by cause.
	Failures []FailureGroup `json:"failures,omitempty"`
	// ScriptErrors groups the errors the script threw in the parallel()
	// branches and pipeline() items of its latest execution, which made
	// them null; each is also a warning in Logs.
	ScriptErrors []ScriptErrorGroup `json:"scriptErrors,omitempty"`
	// SimulatedAnswers is true when the run's answers are simulated
	// although nobody asked for the simulated executor.
	SimulatedAnswers bool `json:"simulatedAnswers,omitempty"`
	// Fork is, for a forked run, the run and call it was forked from.
	Fork *ForkInfo `json:"fork,omitempty"`
	// Worktrees are the worktrees the run's isolated calls kept, the
	// partial edits of interrupted calls included, in journal order.
	Worktrees []KeptWorktree `json:"worktrees,omitempty"`
	// Damaged lists the journal lines that failed their checksum: nothing
	// in them is trusted. TornBytes is an incomplete last record a crash
	// left, which the next resume moves aside.
	Damaged   []DamagedRecord `json:"damaged,omitempty"`
	TornBytes int64           `json:"tornBytes,omitempty"`
}

// ScriptInfo names a script and its content hash.
type ScriptInfo struct {
	Frame string `json:"frame,omitempty"`
	Name  string `json:"name,omitempty"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Text  string `json:"text,omitempty"`
	// Phases are the phase titles the run's meta declares.
	Phases []string `json:"phases,omitempty"`
}

// CallDetail is the latest state of one call path.
type CallDetail struct {
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	Status   string `json:"status"` // running, done, failed, interrupted (CallInterrupted)
	Epoch    int    `json:"epoch"`
	Label    string `json:"label,omitempty"`
	Phase    string `json:"phase,omitempty"`
	Prompt   string `json:"prompt,omitempty"`
	Executor string `json:"executor,omitempty"`
	Model    string `json:"model,omitempty"`
	Effort   string `json:"effort,omitempty"`
	// Permissions is the policy the call ran under.
	Permissions executors.Permissions `json:"permissions,omitempty"`
	// Route is the route that set the call's model, as --route writes it.
	Route     string                  `json:"route,omitempty"`
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
	// Retries are the attempts of the call's latest execution that failed
	// and were tried again, when and why: a timeline marks them.
	Retries []RetryMark `json:"retries,omitempty"`
	// Activity is a running call's last activity, what and when, as its
	// executor reported it; it is not journaled.
	Activity *CallActivity `json:"activity,omitempty"`
	// Seq is the journal sequence of the record that began the call (its
	// start, or its answer when it has none): the order calls and log
	// lines happened in, finer than their millisecond times.
	Seq int64 `json:"seq,omitempty"`

	// errorClass and errorCode group failures; Failures shows them.
	errorClass, errorCode string
	// Worktree is the worktree of an isolated call's latest execution.
	Worktree *Worktree `json:"worktree,omitempty"`
}

// RetryMark is one retry of a call.
type RetryMark struct {
	At time.Time `json:"at"`
	// Class is "transient" (retried after a backoff) or "schema" (asked
	// again for an answer that fits the schema).
	Class string `json:"class,omitempty"`
	// Message is why the attempt failed.
	Message string `json:"message,omitempty"`
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
	// EndedAt is when the execution ended: its end record, or for one
	// whose process died, its last record. Zero while it runs.
	EndedAt time.Time `json:"endedAt,omitzero"`
	End     *endInfo  `json:"end,omitempty"`
	// Trace is the execution's OpenTelemetry trace, when it was traced.
	Trace *TraceContext `json:"trace,omitempty"`
}

// Inspect folds a run's journal into its full detail. It reads only; a
// run left running by a dead process shows as paused. The journal decides
// what the run is: the snapshot only fills in, for an execution the journal
// shows unfinished, how many calls it replayed (replays are not journaled),
// and gives the view of a run another process is executing now. A run whose
// journal is gone, or lost its run record, shows as damaged.
func (rt *Runtime) Inspect(id string) (*Detail, error) {
	if err := store.ValidRunID(id); err != nil {
		return nil, err
	}
	paths := rt.store.RunPaths(id)
	if _, err := os.Lstat(paths.Journal); errors.Is(err, fs.ErrNotExist) {
		if run, nerr := rt.store.ReadNodeRun(id); nerr == nil {
			return rt.inspectNodeRun(run), nil
		}
		return rt.journalMissing(id)
	}
	rt.writeQueued(id)
	f, err := foldJournal(paths.Journal)
	if err != nil {
		return nil, err
	}
	d := f.detail
	d.Summary, err = rt.summaryOf(id, f)
	if err == nil && d.Summary.Status == string(StatusRunning) {
		rt.fillActivity(id, d)
	}
	d.MarkInterrupted()
	return d, err
}

// fillActivity gives the running calls of a running run their last
// activity: from this process's memory when it runs the run here, else
// from the snapshot the process that runs it keeps fresh.
func (rt *Runtime) fillActivity(id string, d *Detail) {
	var calls map[string]CallActivity
	if r, ok := rt.Live(id); ok {
		calls, _ = r.activity.all()
	} else if snap, err := rt.store.ReadSnapshot(id); err == nil && len(snap.Activity) > 0 {
		_ = json.Unmarshal(snap.Activity, &calls) // a view: nothing when unreadable
	}
	for i := range d.Calls {
		c := &d.Calls[i]
		if a, ok := calls[c.Path]; ok && c.Status == "running" {
			c.Activity = &a
		}
	}
}

// CallInterrupted is the status of a call that was under way when its
// execution ended without its answer (a pause, a stop, a crash): nothing
// runs it any more, and a resume runs it again.
const CallInterrupted = "interrupted"

// MarkInterrupted shows as interrupted every call still "running" that
// nothing runs: the run has ended, or the call belongs to an execution
// before the current one. Every backend's Detail goes through it, so that
// no view shows a call running in a run that has ended.
func (d *Detail) MarkInterrupted() {
	ended := d.Summary.Status != string(StatusRunning) && d.Summary.Status != "waiting"
	for i := range d.Calls {
		if c := &d.Calls[i]; c.Status == "running" && (ended || c.Epoch < d.Summary.Epoch) {
			c.Status = CallInterrupted
		}
	}
}

// writeQueued writes the records a run executing here still holds queued
// (a call's start is journaled without a wait, and its event published at
// once): a detail must show what the run's events already said, or a page
// that saw them before it fetched the detail would lose a running agent
// until the next event, which a held agent may never send.
func (rt *Runtime) writeQueued(id string) {
	r, ok := rt.Live(id)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.journal.Flush(ctx) // a journal that cannot be written is folded as it is
}

// journalMissing is the detail of a run whose journal is gone: what its
// snapshot says, marked damaged, or ErrNotFound without one.
func (rt *Runtime) journalMissing(id string) (*Detail, error) {
	snap, err := rt.store.ReadSnapshot(id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	s := store.Summary{RunID: id}
	if err == nil {
		s = snap.Summary
	}
	markDamaged(&s, fmt.Sprintf("its journal %s is missing, so what it did is lost and it cannot be resumed; "+
		"restore the file from a backup, or remove the run with: dynworkflow delete %s", rt.store.RunPaths(id).Journal, id))
	return &Detail{Summary: s, Calls: []CallDetail{}}, nil
}

func markDamaged(s *store.Summary, why string) {
	s.Status, s.PauseReason, s.Error = string(StatusDamaged), "", why
	s.Stats.Running = 0
}

// A fold is a journal read into a Detail, with what the summary needs.
type fold struct {
	detail  *Detail
	byPath  map[string]int
	lastSeq int64
	last    time.Time // of the last record
	phase   string    // the last phase entered
	sawRun  bool
	mark    journal.Mark
	// live, failed and retried count the calls and retries of each
	// epoch, for an execution that has no end record.
	live, failed, retried map[int]int
	// scriptErrors are the script errors of each epoch.
	scriptErrors map[int][]ScriptErrorGroup
}

// foldJournal folds a journal into a run's detail, all but its summary,
// without changing it.
func foldJournal(path string) (*fold, error) {
	d := &Detail{Calls: []CallDetail{}}
	f := &fold{detail: d, byPath: map[string]int{}, live: map[int]int{}, failed: map[int]int{}, retried: map[int]int{},
		scriptErrors: map[int][]ScriptErrorGroup{}}
	byPath := f.byPath
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
	calls := newCallIndex()
	mark, err := journal.ReadMark(path)
	if err != nil {
		return nil, err
	}
	f.mark = mark
	rep, err := journal.ScanReadOnly(path, func(b []byte) error {
		var r record
		if err := decodeRecord(b, &r); err != nil {
			return err
		}
		f.lastSeq = max(f.lastSeq, r.Seq)
		calls.note(r.Type, r.Path, r.Fingerprint)
		at := time.UnixMilli(r.Time).UTC()
		if r.Type == recResume {
			if n := len(d.Executions); n > 0 && d.Executions[n-1].EndedAt.IsZero() {
				// Ended without a record: when it last wrote one.
				d.Executions[n-1].EndedAt = f.last
			}
		}
		f.last = at
		switch r.Type {
		case recRun:
			h := r.Run
			if h == nil {
				return errors.New("a run record without its header")
			}
			f.sawRun = true
			d.Script = ScriptInfo{Name: h.Name, Path: h.ScriptPath, Hash: h.ScriptHash, Text: h.ScriptText, Phases: h.Phases}
			d.Args, d.Options, d.Executors, d.Fork = h.Args, h.Options, h.Executors, h.Fork
			d.Executions = append(d.Executions, Execution{Epoch: 0, Rule: "fresh", NewHash: h.ScriptHash, StartedAt: at, Trace: h.Trace})
		case recResume:
			h := r.Resume
			if h == nil {
				return errors.New("a resume record without its header")
			}
			d.Script.Hash = h.NewHash
			if h.ScriptText != "" {
				d.Script.Path, d.Script.Text = h.ScriptPath, h.ScriptText
			}
			d.Args, d.Options = h.Args, h.Options
			d.Executors = mergeDefinitions(d.Executors, h.Executors)
			d.Executions = append(d.Executions, Execution{Epoch: r.Epoch, Rule: h.Rule, OldHash: h.OldHash, NewHash: h.NewHash, StartedAt: at,
				Trace: h.Trace})
		case recScript:
			s := r.Script
			if s == nil {
				return nil
			}
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
				c.Effort, c.Permissions, c.Route = r.Call.Effort, r.Call.Permissions, r.Call.Route
			}
			c.Worktree = r.Worktree
		case recRetry:
			c := call(r.Path)
			m := RetryMark{At: at}
			if r.Error != nil {
				m.Class, m.Message = r.Error.Class, r.Error.Message
			}
			c.Retries = append(c.Retries, m)
			// A restart asked for by the user is not a retry.
			if r.Error == nil || r.Error.Class != "restarted" {
				f.retried[r.Epoch]++
			}
		case recWorktree:
			c := call(r.Path)
			if c.Kind == "" {
				c.Kind, c.Epoch = r.Kind, r.Epoch
			}
			if w := r.Worktree; w != nil {
				c.Worktree = w
				if w.Status == worktreeKept {
					d.Worktrees = append(d.Worktrees, KeptWorktree{Path: r.Path, Label: c.Label, Epoch: c.Epoch, Worktree: *w})
				}
			}
		case recFinished, recFailed:
			c := call(r.Path)
			if c.Kind == "" {
				c.Kind, c.Epoch, c.Seq = r.Kind, r.Epoch, r.Seq
			}
			if r.Call != nil && c.Prompt == "" {
				c.Prompt, c.Phase = r.Call.Prompt, r.Call.Phase
				c.Label, c.Executor, c.Model, c.Effort = r.Call.Label, r.Call.Executor, r.Call.Model, r.Call.Effort
			}
			c.Status, c.EndedAt, c.Usage, c.Error = "done", at, r.Usage, ""
			c.Result = r.Result
			c.errorClass, c.errorCode = "", ""
			if r.Type == recFailed {
				c.Status, c.Result = "failed", nil
				if r.Error != nil {
					c.Error, c.errorClass, c.errorCode = r.Error.Message, r.Error.Class, r.Error.Code
				}
				f.failed[r.Epoch]++
			} else if r.Answer == nil || r.Answer.Source == "live" {
				f.live[r.Epoch]++
			}
			if a := r.Answer; a != nil {
				c.Source, c.Provider, c.Attempts, c.DurMs, c.History = a.Source, a.Provider, a.Attempts, a.DurMs, a.History
				if a.Model != "" {
					c.Model = a.Model
				}
			}
		case recLog:
			d.Logs = append(d.Logs, LogLine{Seq: r.Seq, Time: at, Scope: r.Path, Level: r.Level, Message: r.Message})
		case recScriptError:
			e := ScriptError{Path: r.Path, Message: r.Message, Position: r.Position}
			f.scriptErrors[r.Epoch] = AddScriptError(f.scriptErrors[r.Epoch], e)
			d.Logs = append(d.Logs, LogLine{Seq: r.Seq, Time: at, Scope: r.Path, Level: "warn", Message: e.Line()})
		case recPhase:
			f.phase = r.Message
			d.Logs = append(d.Logs, LogLine{Seq: r.Seq, Time: at, Scope: r.Path, Level: "phase", Message: r.Message})
		case recEnd:
			if r.End == nil {
				return errors.New("an end record without its outcome")
			}
			if n := len(d.Executions); n > 0 {
				d.Executions[n-1].End, d.Executions[n-1].EndedAt = r.End, at
			}
			d.Result = r.End.Result
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.TornBytes = rep.TornBytes
	d.Damaged = describeDamage(rep.Damaged, calls, func(p string) bool {
		i, ok := byPath[p]
		return ok && d.Calls[i].Status == "done"
	})
	if n := len(rep.Damaged); n > 0 && rep.Damaged[n-1].Offset+int64(rep.Damaged[n-1].Length)+1 == mark.Size {
		d.Damaged[n-1].Last = true
	}
	sort.SliceStable(d.Calls, func(i, j int) bool { return lessPath(d.Calls[i].Path, d.Calls[j].Path) })
	var failed failureSet
	for i := range d.Calls {
		if c := &d.Calls[i]; c.Status == "failed" {
			failed.add(c.Path, &errorInfo{Class: c.errorClass, Code: c.errorCode, Message: c.Error})
		}
	}
	d.Failures = failed.list()
	if n := len(d.Executions); n > 0 {
		d.ScriptErrors = SortScriptErrors(f.scriptErrors[d.Executions[n-1].Epoch])
	}
	d.SimulatedAnswers = d.Options.SimulatedByDefault()
	return f, nil
}

// lastDamaged returns the damaged record that is the journal's last line.
func lastDamaged(damaged []DamagedRecord) *DamagedRecord {
	if n := len(damaged); n > 0 && damaged[n-1].Last {
		return &damaged[n-1]
	}
	return nil
}

// endDamaged is the pause reason of a run whose end record is damaged.
func endDamaged(dm DamagedRecord) string {
	seems := ""
	if dm.Status != "" {
		seems = fmt.Sprintf(", it seems to say %s", dm.Status)
	}
	return fmt.Sprintf("its end record is damaged (journal line %d%s): how the run ended is not known; "+
		"resume it to end it again, replaying its journaled calls at no cost", dm.Line, seems)
}

// summaryOf returns the live summary of a run executing in this process,
// the snapshot's of a run another process executes, else the summary the
// journal tells.
func (rt *Runtime) summaryOf(id string, f *fold) (store.Summary, error) {
	if r, ok := rt.Live(id); ok {
		return r.summary(), nil
	}
	// Only the snapshot's summary: the rest of it is the view the journal
	// just gave us.
	snap, err := rt.store.ReadSummary(id)
	if err != nil && !errors.Is(err, store.ErrSnapshotCorrupt) && !errors.Is(err, store.ErrNotFound) {
		return store.Summary{}, err
	}
	if err == nil && snap.Status == string(StatusRunning) {
		if _, held, _ := rt.store.LeaseHolder(id); held {
			return snap, nil
		}
	}
	var prior *store.Summary
	if err == nil {
		prior = &snap
	}
	s := f.summary(id, prior)
	rt.reconcileView(&s)
	return s, nil
}

// summary is the run as the journal tells it. prior, the snapshot, gives
// only what the journal cannot: the description, and the replays of an
// execution that has no end record.
func (f *fold) summary(id string, prior *store.Summary) store.Summary {
	d := f.detail
	s := store.Summary{RunID: id, Name: d.Script.Name, Phases: d.Script.Phases, ScriptPath: d.Script.Path, ScriptHash: d.Script.Hash,
		Executor: d.Options.Executor, Phase: f.phase, JournalSeq: f.lastSeq, Status: string(StatusRunning),
		MaxCostUSD: d.Options.MaxCostUSD, UpdatedAt: f.last, JournalSize: f.mark.Size, JournalHead: f.mark.Head, JournalTail: f.mark.Tail}
	if prior != nil {
		s.Description = prior.Description
	}
	if n := len(d.Executions); n > 0 {
		last := d.Executions[n-1]
		s.Epoch, s.StartedAt = last.Epoch, d.Executions[0].StartedAt
		if end := last.End; end != nil {
			s.Status, s.PauseReason, s.Error, s.ErrorCode, s.ResumeAt = end.Status, end.PauseReason, end.Error, end.ErrorCode, end.ResumeAt
			s.Stats.Replayed, s.Stats.Live, s.Stats.Failed, s.Stats.Retried = end.Replayed, end.Live, end.Failed, end.Retried
			s.Stats.ScriptErrors = end.ScriptErrors
			t := f.last
			s.EndedAt = &t
		} else {
			s.Stats.Live, s.Stats.Failed, s.Stats.Retried = f.live[last.Epoch], f.failed[last.Epoch], f.retried[last.Epoch]
			s.Stats.ScriptErrors = CountScriptErrors(f.scriptErrors[last.Epoch])
			if prior != nil && prior.Epoch == last.Epoch {
				s.Stats.Replayed = prior.Stats.Replayed
			}
			if dm := lastDamaged(d.Damaged); dm != nil && dm.Type == recEnd {
				// The execution did end, but its record of how is damaged:
				// not a process that died (no torn tail either), and not
				// something to trust.
				s.Status, s.PauseReason = string(StatusPaused), endDamaged(*dm)
			}
		}
		s.Stats.Agents = s.Stats.Replayed + s.Stats.Live + s.Stats.Failed
	}
	for _, c := range d.Calls {
		if c.Usage != nil && c.Source == "live" {
			s.Stats.InputTokens += c.Usage.InputTokens
			s.Stats.CachedInputTokens += c.Usage.CachedInputTokens
			s.Stats.OutputTokens += c.Usage.OutputTokens
			s.Stats.CostUSD += c.Usage.CostUSD
		}
	}
	if !f.sawRun {
		why := "its journal has no run record"
		for _, dm := range d.Damaged {
			if dm.Type == recRun || dm.Line == 1 {
				why = fmt.Sprintf("its run record (journal line %d) is damaged", dm.Line)
			}
		}
		if f.mark.Size == 0 {
			why = "its journal is empty"
		}
		if prior != nil {
			s.Name, s.Description, s.StartedAt = prior.Name, prior.Description, prior.StartedAt
		}
		markDamaged(&s, fmt.Sprintf("%s: its script, args and options are lost and it cannot be resumed; "+
			"remove it with: dynworkflow delete %s", why, id))
	}
	return s
}

// RunExecutors are the executors a run's journal in st defines, each as
// the latest execution that used it configured it: what a resume rebuilds
// them from when it is not told otherwise.
//
// Only the run's and the executions' records hold them, so the others
// (a call's start and answer, tens of thousands in a big run) are told by
// their type at the start of the line and not decoded.
func RunExecutors(st *store.Store, id string) ([]executors.Definition, error) {
	if err := store.ValidRunID(id); err != nil {
		return nil, err
	}
	var defs []executors.Definition
	_, err := journal.ScanReadOnly(st.RunPaths(id).Journal, func(b []byte) error {
		if typ, ok := leadingType(b); ok && string(typ) != recRun && string(typ) != recResume {
			return nil
		}
		var r struct {
			Type string `json:"type"`
			Run  *struct {
				Executors []executors.Definition `json:"executors"`
			} `json:"run"`
			Resume *struct {
				Executors []executors.Definition `json:"executors"`
			} `json:"resume"`
		}
		if err := decodeRecord(b, &r); err != nil {
			return err
		}
		switch {
		case r.Type == recRun && r.Run != nil:
			defs = r.Run.Executors
		case r.Type == recResume && r.Resume != nil:
			defs = mergeDefinitions(defs, r.Resume.Executors)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return defs, nil
}

// leadingType reads the type of a record as the journal writes it,
// {"seq":N,"type":"T",...; ok is false for a line written otherwise.
func leadingType(line []byte) (typ []byte, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !ok {
		return nil, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if rest, ok = bytes.CutPrefix(rest[i:], []byte(`,"type":"`)); !ok {
		return nil, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return nil, false
	}
	return rest[:end], true
}
