package temporal

import (
	"cmp"
	"context"
	"encoding/json"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
)

// Detail is everything known about a run on Temporal, in the shape `show`
// and the API give a local run: its agent calls from the executions'
// histories, its logs, checkpoints and outcome from the workflow's state.
// A running execution's state is read with a query, which needs a live
// worker; without one, the calls still show, and the summary says the
// state could not be read.
func (c *Client) Detail(ctx context.Context, runID string) (*engine.Detail, error) {
	execs, err := c.readRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	last := execs[len(execs)-1]
	var states []*State
	for _, e := range execs {
		st := e.state
		if st == nil && e == last && !e.closed {
			if q, err := c.query(ctx, runID); err == nil {
				st = &q
			}
		}
		if st == nil {
			f := e.final()
			if !e.closed {
				f.Error = "the running execution could not be asked for its state: no worker answered"
			}
			st = &f
		}
		states = append(states, st)
	}
	return c.buildDetail(execs, states), nil
}

// buildDetail folds executions and their states into a Detail, as the
// local engine folds a journal (engine/inspect.go): a later record of a
// call path supersedes an earlier one.
func (cl *Client) buildDetail(execs []*execHistory, states []*State) *engine.Detail {
	last, lastState := execs[len(execs)-1], states[len(states)-1]
	in := last.input
	d := &engine.Detail{
		Script:  engine.ScriptInfo{Name: in.Name, Path: in.Script.Path, Hash: in.ScriptHash, Text: in.Script.Files[in.Script.Path]},
		Args:    in.Args,
		Options: in.Options,
		Result:  lastState.Result,
	}
	byPath := map[string]int{}
	call := func(path string) *engine.CallDetail {
		i, ok := byPath[path]
		if !ok {
			i = len(d.Calls)
			byPath[path] = i
			d.Calls = append(d.Calls, engine.CallDetail{Path: path})
		}
		return &d.Calls[i]
	}
	children := map[string]int{}
	oldHash := ""
	for i, e := range execs {
		st := states[i]
		x := engine.Execution{Epoch: e.input.Epoch, Rule: e.input.Rule, OldHash: oldHash, NewHash: e.input.ScriptHash, StartedAt: e.startedAt.UTC()}
		oldHash = e.input.ScriptHash
		if e.closed {
			x.EndedAt = st.EndedAt.UTC()
			x.End = &engine.ExecutionEnd{Status: string(st.Status), PauseReason: st.PauseReason, Error: st.Error, Result: st.Result,
				Replayed: st.Stats.Replayed, Live: st.Stats.Live, Failed: st.Stats.Failed, ScriptErrors: st.Stats.ScriptErrors}
		}
		d.Executions = append(d.Executions, x)
		for _, r := range e.calls {
			c := call(r.input.Path)
			*c = engine.CallDetail{
				Path: r.input.Path, Kind: "agent", Status: r.status, Epoch: e.input.Epoch,
				Label: r.input.Label, Phase: r.input.Phase, Prompt: r.input.Prompt, Executor: r.input.Executor, Model: r.input.Model,
				Source: "live", StartedAt: r.scheduled.UTC(), EndedAt: r.ended.UTC(),
			}
			switch r.status {
			case "done":
				u := r.output.Usage
				c.Result, c.Usage, c.Provider, c.Attempts, c.DurMs, c.History = r.output.Value, &u, r.output.Provider, r.input.Attempt, r.output.DurMs, r.output.History
				if r.output.Model != "" {
					c.Model = r.output.Model
				}
				cl.readBlobs(c, r.output)
			case "failed":
				u := r.failure.Usage
				c.Usage, c.Error, c.Attempts = &u, r.errMsg, r.input.Attempt
				if pausedBy(r.errKind) {
					// Not the call's failure: the run paused on it, and it
					// runs again on resume, as a local run shows it.
					c.Status, c.Error = "running", ""
				}
			case "cancelled":
				c.Error = "cancelled: the execution paused or stopped"
			}
			d.Worktrees = append(d.Worktrees, keptWorktrees(r, e.input.Epoch)...)
			if w := cmp.Or(r.output.Worktree, r.failure.Worktree); w != nil {
				c.Worktree = w
			}
			if c.Status != "running" {
				c.EndedAt = r.ended.UTC()
			} else {
				c.EndedAt = time.Time{}
			}
		}
		for _, cp := range st.Checkpoints {
			if cp.Source == "journal" {
				continue // replayed: the earlier execution's record stands
			}
			c := call(cp.Path)
			*c = engine.CallDetail{Path: cp.Path, Kind: "checkpoint", Status: StatusWaiting, Epoch: e.input.Epoch, Phase: cp.Phase,
				Prompt: cp.Request.Prompt, StartedAt: cp.AskedAt}
			if !cp.Pending {
				c.Status, c.Result, c.Source, c.EndedAt = "done", cp.Answer, cp.Source, cp.AnsweredAt
				if cp.Source == "" {
					c.Status, c.Error = "failed", "not answered"
				}
			}
		}
		if st.Status != StatusContinued {
			// A continuation's state starts with what the execution it
			// continues said.
			d.Logs = append(d.Logs, st.Logs...)
		}
		for _, ch := range st.Children {
			if j, ok := children[ch.Frame]; ok {
				d.Children[j] = ch.ScriptInfo
			} else {
				children[ch.Frame] = len(d.Children)
				d.Children = append(d.Children, ch.ScriptInfo)
			}
		}
	}
	sort.SliceStable(d.Calls, func(i, j int) bool { return engine.LessPath(d.Calls[i].Path, d.Calls[j].Path) })
	d.Summary = summary(execs[0], last, lastState)
	d.ScriptErrors = engine.SortScriptErrors(lastState.ScriptErrors)
	d.MarkInterrupted()
	return d
}

// keptWorktrees are the worktrees an attempt kept: its own, and those of
// earlier attempts lost with their workers that it settled.
func keptWorktrees(r *agentRecord, epoch int) []engine.KeptWorktree {
	var kept []engine.KeptWorktree
	add := func(w engine.Worktree) {
		if w.Kept() {
			kept = append(kept, engine.KeptWorktree{Path: r.input.Path, Label: r.input.Label, Epoch: epoch, Worktree: w})
		}
	}
	for _, w := range append(r.output.Earlier, r.failure.Earlier...) {
		add(w)
	}
	if w := cmp.Or(r.output.Worktree, r.failure.Worktree); w != nil {
		add(*w)
	}
	return kept
}

// readBlobs fills in a call's answer and transcript that its history
// holds by their keys in the blob store. One the store cannot give is
// shown as missing, with why, rather than fail the whole detail.
func (cl *Client) readBlobs(c *engine.CallDetail, out AgentOutput) {
	if out.ValueBlob != "" {
		if b, err := cl.blobs.Get(out.ValueBlob); err != nil {
			c.Error = "the answer cannot be read: " + err.Error()
		} else {
			c.Result = b
		}
	}
	if out.HistoryBlob != "" {
		b, err := cl.blobs.Get(out.HistoryBlob)
		if err == nil {
			err = json.Unmarshal(b, &c.History)
		}
		if err != nil {
			c.Error = "the transcript cannot be read: " + err.Error()
		}
	}
}

// summary is the listing line of a run from its latest state.
func summary(first, last *execHistory, st *State) store.Summary {
	in := last.input
	s := store.Summary{
		RunID: in.RunID, Name: in.Name, Description: in.Description, Status: string(st.Status), PauseReason: st.PauseReason,
		Error: st.Error, ScriptPath: in.Script.Path, ScriptHash: in.ScriptHash, Executor: in.Options.Executor,
		Phase: st.Phase, Epoch: in.Epoch, StartedAt: first.startedAt.UTC(), UpdatedAt: time.Now().UTC(), Stats: st.Stats,
	}
	if !in.CreatedAt.IsZero() {
		s.StartedAt = in.CreatedAt
	}
	if last.closed && !st.EndedAt.IsZero() {
		t := st.EndedAt.UTC()
		s.EndedAt = &t
	}
	return s
}

// Refresh brings an index entry up to date with Temporal at the least
// cost: a stopped run cannot change, an ended execution that is still the
// latest keeps its summary, a running one is asked for its state, and only
// an execution never seen before has its history read.
func (c *Client) Refresh(ctx context.Context, e Entry) (Entry, error) {
	if e.Summary.Status == string(engine.StatusStopped) {
		return e, nil
	}
	desc, err := c.describe(ctx, e.RunID)
	if err != nil {
		return e, notFound(e.RunID, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	rid := info.GetExecution().GetRunId()
	running := info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	if rid == e.Execution {
		if !running && e.Summary.Status != string(engine.StatusRunning) && e.Summary.Status != StatusWaiting {
			return e, nil
		}
		if running {
			if st, err := c.query(ctx, e.RunID); err == nil {
				s := e.Summary
				s.Status, s.PauseReason, s.Error, s.Phase, s.Stats = listedStatus(&st), st.PauseReason, st.Error, st.Phase, st.Stats
				s.UpdatedAt = time.Now().UTC()
				e.Summary = s
				return e, nil
			}
		}
	}
	last, err := c.readExecution(ctx, e.RunID, rid)
	if err != nil {
		return e, err
	}
	st := last.state
	if st == nil && !last.closed {
		if q, err := c.query(ctx, e.RunID); err == nil {
			st = &q
		}
	}
	if st == nil {
		f := last.final()
		st = &f
	}
	e.Summary, e.Execution = summary(last, last, st), rid
	e.Summary.Status = listedStatus(st)
	return e, nil
}

// StatusWaiting is how a listing shows a running run that waits on a
// checkpoint, as the CLI shows a local one.
const StatusWaiting = "waiting"

// listedStatus is a state's status for a listing: waiting when it runs
// and a checkpoint waits for an answer.
func listedStatus(st *State) string {
	if st.Status == engine.StatusRunning {
		for _, cp := range st.Checkpoints {
			if cp.Pending {
				return StatusWaiting
			}
		}
	}
	return string(st.Status)
}

// pausedBy reports an activity failure of a kind that pauses the run
// rather than ending the call (see callpolicy.Call.RunLive): the call is
// not failed, it runs again on resume.
func pausedBy(kind string) bool {
	return kind == errRateLimited || kind == errUnavailable || kind == errInfrastructure
}
