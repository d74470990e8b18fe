package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The Node runtime (npm @fish59fish/dynamic-workflows) keeps its runs in
// the same state root and layout: projects/<project-id>/runs/<run>.json,
// one JSON object per run (its PersistedRunState), rewritten whole, with a
// .json.bak copy and a <run>.lock file naming the owner's pid. A user with
// both runtimes installed has both kinds of run in one directory, so:
//
//   - every snapshot this package writes also carries the Node runtime's
//     field names (NodeView), which its list and show read, beside ours;
//   - a run file the Node runtime wrote is recognised and read as a
//     foreign run (ReadNodeRun): listed and shown, never written, leased,
//     resumed or deleted here;
//   - the lock file of a run we own also says what the Node runtime checks
//     (runId, runPath, pid, token), so that it sees the run as owned by a
//     live process and leaves it alone.

// ForeignNode is Summary.Foreign for a run the Node runtime wrote.
const ForeignNode = "node"

// ErrForeignRun is matched by the error for an operation refused on a run
// another runtime owns.
var ErrForeignRun = errors.New("run belongs to another runtime")

// ForeignError explains that a run is the Node runtime's.
type ForeignError struct {
	RunID string
	Op    string // resume, stop, pause, delete
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("run %s belongs to the Node runtime (@fish59fish/dynamic-workflows), which shares this state directory; "+
		"dynworkflow only lists and shows it: %s it with that runtime's CLI (its command is also called dynworkflow: "+
		"npx -p @fish59fish/dynamic-workflows dynworkflow %s %s)",
		e.RunID, e.Op, e.Op, e.RunID)
}

func (e *ForeignError) Unwrap() error { return ErrForeignRun }

// NodeView is the part of a snapshot the Node runtime reads: the field
// names of its PersistedRunState. WriteSnapshot fills the summary fields
// from Snapshot.Summary; the writer supplies Phases and Agents. There is
// deliberately no "script": the Node runtime resumes only runs that have
// one, so it refuses to resume ours instead of running it again from the
// start.
type NodeView struct {
	RunID           string      `json:"runId"`
	WorkflowName    string      `json:"workflowName"`
	Description     string      `json:"description,omitempty"`
	Status          string      `json:"status"`
	PauseReason     string      `json:"pauseReason,omitempty"`
	Error           *NodeError  `json:"error,omitempty"`
	Phases          []string    `json:"phases"`
	CurrentPhase    string      `json:"currentPhase,omitempty"`
	Agents          []NodeAgent `json:"agents"`
	Logs            []string    `json:"logs"`
	StartedAt       string      `json:"startedAt"`
	UpdatedAt       string      `json:"updatedAt"`
	CompletedAt     string      `json:"completedAt,omitempty"`
	DurationMs      *int64      `json:"durationMs,omitempty"`
	TokenUsage      *NodeUsage  `json:"tokenUsage,omitempty"`
	DefaultExecutor string      `json:"defaultExecutor,omitempty"`
}

// NodeError is a run's failure as the Node runtime records it.
type NodeError struct {
	Message     string `json:"message"`
	Code        string `json:"code,omitempty"`
	Recoverable *bool  `json:"recoverable,omitempty"`
}

// NodeUsage is the Node runtime's token usage.
type NodeUsage struct {
	Input      int64   `json:"input"`
	Output     int64   `json:"output"`
	Total      int64   `json:"total"`
	Cost       float64 `json:"cost"`
	CacheRead  int64   `json:"cacheRead"`
	CacheWrite int64   `json:"cacheWrite"`
}

// NodeAgent is one agent call as the Node runtime records it.
type NodeAgent struct {
	ID            int             `json:"id"`
	CallID        string          `json:"callId,omitempty"`
	Label         string          `json:"label"`
	Phase         string          `json:"phase,omitempty"`
	Prompt        string          `json:"prompt"`
	Status        string          `json:"status"` // queued, running, done, error, skipped
	Result        json.RawMessage `json:"result,omitempty"`
	ResultPreview string          `json:"resultPreview,omitempty"`
	Error         string          `json:"error,omitempty"`
	ErrorCode     string          `json:"errorCode,omitempty"`
	StartedAt     string          `json:"startedAt,omitempty"`
	EndedAt       string          `json:"endedAt,omitempty"`
	Tokens        int64           `json:"tokens,omitempty"`
	TokenUsage    *NodeUsage      `json:"tokenUsage,omitempty"`
	Model         string          `json:"model,omitempty"`
	Executor      string          `json:"executor,omitempty"`
}

// NodeRun is a run file the Node runtime wrote, as far as dynworkflow
// reads it.
type NodeRun struct {
	NodeView
	Script  string          `json:"script"`
	Args    json.RawMessage `json:"args,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Journal []struct {
		Index  int             `json:"index"`
		RunID  string          `json:"runId,omitempty"`
		Result json.RawMessage `json:"result"`
	} `json:"journal,omitempty"`
	Concurrency  *int   `json:"concurrency,omitempty"`
	AgentRetries *int   `json:"agentRetries,omitempty"`
	TokenBudget  *int64 `json:"tokenBudget,omitempty"`
	MaxAgents    *int   `json:"maxAgents,omitempty"`

	// Source is the file it was read from (the run file or its backup).
	Source string `json:"-"`
}

// nodeTime formats a time as the Node runtime does (Date.toISOString).
func nodeTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// NodeStatus maps our statuses to the Node runtime's RunStatus: stopped is
// its aborted, and a damaged run, which cannot go on, is failed.
func NodeStatus(s string) string {
	switch s {
	case "stopped":
		return "aborted"
	case "damaged":
		return "failed"
	case "", "paused", "completed", "failed":
		return s
	default: // running, and anything that is still going (waiting on a human)
		return "running"
	}
}

// fillNodeView sets the NodeView fields that follow from the summary.
func (snap *Snapshot) fillNodeView() { snap.NodeView.Fill(snap.Summary) }

// Fill sets the fields that follow from the summary s; Phases, Agents and
// Logs are the caller's, and are made non-nil.
func (v *NodeView) Fill(s Summary) {
	v.RunID, v.WorkflowName, v.Description = s.RunID, s.Name, s.Description
	v.Status, v.PauseReason = NodeStatus(s.Status), s.PauseReason
	v.Error = nil
	if s.Error != "" {
		v.Error = &NodeError{Message: s.Error, Code: s.ErrorCode}
	}
	v.CurrentPhase = s.Phase
	if v.CurrentPhase != "" && len(v.Phases) == 0 {
		v.Phases = []string{v.CurrentPhase}
	}
	if v.Phases == nil {
		v.Phases = []string{}
	}
	if v.Agents == nil {
		v.Agents = []NodeAgent{}
	}
	if v.Logs == nil {
		v.Logs = []string{}
	}
	v.StartedAt, v.UpdatedAt = nodeTime(s.StartedAt), nodeTime(s.UpdatedAt)
	if v.UpdatedAt == "" {
		v.UpdatedAt = v.StartedAt
	}
	v.CompletedAt, v.DurationMs = "", nil
	if s.EndedAt != nil {
		v.CompletedAt = nodeTime(*s.EndedAt)
		d := s.EndedAt.Sub(s.StartedAt).Milliseconds()
		v.DurationMs = &d
	}
	st := s.Stats
	v.TokenUsage = &NodeUsage{Input: st.InputTokens, Output: st.OutputTokens, Total: st.InputTokens + st.OutputTokens,
		Cost: st.CostUSD, CacheRead: st.CachedInputTokens}
	v.DefaultExecutor = s.Executor
}

// ReadNodeRun reads run runID as the Node runtime wrote it: its run file,
// else the backup. The error matches ErrNotFound when neither exists, and
// says why otherwise (not the Node runtime's format, say).
func (s *Store) ReadNodeRun(runID string) (*NodeRun, error) {
	paths, err := s.runPaths(runID)
	if err != nil {
		return nil, err
	}
	return readEither(paths, runID, readNodeRunFile)
}

func readNodeRunFile(path, runID string) (*NodeRun, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var probe struct {
		Summary json.RawMessage `json:"summary"`
		Status  json.RawMessage `json:"status"`
		Agents  json.RawMessage `json:"agents"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if probe.Summary != nil || probe.Status == nil {
		return nil, fmt.Errorf("%s: not a run file of the Node runtime", filepath.Base(path))
	}
	var run NodeRun
	if err := json.Unmarshal(data, &run); err != nil {
		return nil, fmt.Errorf("%s: a run file of the Node runtime, unreadable: %w", filepath.Base(path), err)
	}
	if run.RunID != runID {
		return nil, fmt.Errorf("%s: names run %q", filepath.Base(path), run.RunID)
	}
	run.Source = path
	return &run, nil
}

// IsNodeRun reports whether run runID is the Node runtime's: it has a run
// file in the Node runtime's format and no journal of ours.
func (s *Store) IsNodeRun(runID string) bool {
	paths, err := s.runPaths(runID)
	if err != nil || exists(paths.Journal) {
		return false
	}
	_, err = s.ReadNodeRun(runID)
	return err == nil
}

// NodeSummary is how a listing shows the Node runtime's run, in our terms.
// Its status is the Node runtime's, but "aborted" reads "stopped", and a
// run it left "running" whose owner (the pid in its lock file) is gone
// reads "paused", as the Node runtime itself would record it.
func (s *Store) NodeSummary(run *NodeRun) Summary {
	sum := Summary{
		RunID: run.RunID, Name: run.WorkflowName, Description: run.Description, Status: run.Status,
		PauseReason: run.PauseReason, Executor: run.DefaultExecutor, Phase: run.CurrentPhase,
		Foreign: ForeignNode,
	}
	if run.Error != nil {
		sum.Error, sum.ErrorCode = run.Error.Message, run.Error.Code
	}
	switch sum.Status {
	case "aborted":
		sum.Status = "stopped"
	case "pending", "running":
		sum.Status = "running"
		if !s.nodeOwnerAlive(run.RunID) {
			sum.Status, sum.PauseReason = "paused", "the process running it exited"
		}
	}
	sum.StartedAt, _ = time.Parse(time.RFC3339Nano, run.StartedAt)
	sum.UpdatedAt, _ = time.Parse(time.RFC3339Nano, run.UpdatedAt)
	if t, err := time.Parse(time.RFC3339Nano, run.CompletedAt); err == nil {
		sum.EndedAt = &t
	}
	for _, a := range run.Agents {
		switch a.Status {
		case "done", "skipped":
			sum.Stats.Live++
		case "error":
			sum.Stats.Failed++
		case "running":
			if sum.Status == "running" {
				sum.Stats.Running++
			}
		}
	}
	sum.Stats.Agents = sum.Stats.Live + sum.Stats.Failed
	if u := run.TokenUsage; u != nil {
		sum.Stats.InputTokens, sum.Stats.OutputTokens, sum.Stats.CachedInputTokens = u.Input, u.Output, u.CacheRead
		sum.Stats.CostUSD = u.Cost
	}
	return sum
}

// nodeOwnerAlive reads the Node runtime's lock file of a run: it names the
// owner's pid, and the owner is alive while that pid is (the Node
// runtime's own test: kill(pid, 0), where EPERM means alive).
func (s *Store) nodeOwnerAlive(runID string) bool {
	data, err := os.ReadFile(s.RunPaths(runID).Lock)
	if err != nil {
		return false
	}
	var lock struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(data, &lock) != nil || lock.PID <= 0 {
		return false
	}
	err = unix.Kill(lock.PID, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// nodeViewMarker, in a project directory, says that every snapshot in it
// carries the NodeView.
const nodeViewMarker = ".node-view-v1"

// addNodeViews gives the NodeView to the snapshots written before
// snapshots had it, once per project: the Node runtime's list fails on a
// run file without phases and agents. They get the summary's fields and no
// agents (those would need the journal). A run leased by a live process is
// left for a later Open.
func (s *Store) addNodeViews() error {
	marker := filepath.Join(s.projectDir, nodeViewMarker)
	if exists(marker) {
		return nil
	}
	entries, err := os.ReadDir(s.runsDir)
	if err != nil {
		return err
	}
	complete, seen := true, false
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || ValidRunID(id) != nil || !e.Type().IsRegular() {
			continue
		}
		seen = true
		path := filepath.Join(s.runsDir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var probe struct {
			Summary      json.RawMessage `json:"summary"`
			WorkflowName *string         `json:"workflowName"`
		}
		if json.Unmarshal(data, &probe) != nil || probe.Summary == nil || probe.WorkflowName != nil {
			continue // damaged (the journal will say), the Node runtime's, or done
		}
		lease, err := s.AcquireLease(id, "node-view")
		if err != nil {
			complete = false
			continue
		}
		snap, err := readSnapshotFile(path, id)
		if err == nil {
			err = s.WriteSnapshot(id, snap)
		}
		lease.Release()
		if err != nil {
			complete = false
		}
	}
	if !complete || !seen {
		return nil // an empty project costs nothing to look at again
	}
	return writeFileSync(marker, nil, true)
}
