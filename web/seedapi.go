package web

import (
	"encoding/json"
	"mime"
	"path/filepath"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/lang"
)

// The API speaks two dialects on the same routes.
//
// The Node runtime (npm @fish59fish/dynamic-workflows) defines health,
// overview, state, events, the run routes and the checkpoint answer, and
// ships a client for them (StandaloneRuntimeClient) that its CLI and
// other programs use. A request that does not ask for ours gets the Node
// runtime's representation wherever it defines one: its field names and
// types, its status codes, its {"error": "message"} error body. Where
// both can live in one object they do: its objects carry ours beside
// them (a run's or summary's "summary", an error's "code" and "position",
// a checkpoint's path).
//
// A request whose Accept header names MediaType gets ours: the richer
// detail the dashboard and the CLI read (engine.Detail, store.Summary,
// {"error": {code, message, position}}). They differ only where the two
// cannot share a field: a run's "script" (its text there, our ScriptInfo
// here) and "logs" (strings there, our lines here), a summary's "status"
// (aborted there, stopped here) and "error" (an object there, a string
// here), and what pause, resume, stop, delete and respond answer when
// they refuse. The event stream is one dialect already: its envelope is
// the Node runtime's.

// MediaType is the media type of the API's own representations: send it
// in Accept to get them.
const MediaType = "application/vnd.dynworkflow+json"

// wantsOurs reports whether the request asks for our representations.
func wantsOurs(c echo.Context) bool {
	for _, part := range strings.Split(c.Request().Header.Get(echo.HeaderAccept), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == MediaType {
			return true
		}
	}
	return false
}

// seedRun is a run as the Node runtime's GET /api/runs/:id answers it (its
// StandaloneRunState), and our summary beside it.
type seedRun struct {
	store.NodeRun
	Summary store.Summary `json:"summary"`
}

// seedAgentOf is one agent call as the Node runtime shows it.
func seedAgentOf(runID string, i int, runStatus string, c engine.CallDetail) store.NodeAgent {
	a := store.NodeAgent{
		ID: i + 1, CallID: runID + ":" + c.Path, Label: c.Label, Phase: c.Phase, Prompt: c.Prompt,
		Result: c.Result, Error: c.Error, Executor: c.Executor, Model: c.Model,
		StartedAt: isoTime(c.StartedAt), EndedAt: isoTime(c.EndedAt),
	}
	if a.Label == "" {
		a.Label = c.Path
	}
	switch c.Status {
	case "done":
		a.Status = "done"
	case "failed":
		a.Status = "error"
	default:
		switch runStatus {
		case "running":
			a.Status = "running"
		case "paused":
			// It runs again when the run resumes.
			a.Status = "queued"
		default:
			a.Status, a.Error = "error", "interrupted: the run ended before this call finished"
		}
	}
	if u := c.Usage; u != nil {
		a.Tokens = u.InputTokens + u.OutputTokens
		a.TokenUsage = &store.NodeUsage{Input: u.InputTokens, Output: u.OutputTokens, Total: u.InputTokens + u.OutputTokens,
			Cost: u.CostUSD, CacheRead: u.CachedInputTokens}
	}
	return a
}

// seedRunOf is d in the Node runtime's shape.
func seedRunOf(d *engine.Detail) seedRun {
	s := d.Summary
	run := store.NodeRun{Script: d.Script.Text, Args: d.Args, Result: d.Result}
	run.Phases = append([]string{}, d.Script.Phases...)
	for _, c := range d.Calls {
		if c.Kind != "agent" {
			continue
		}
		run.Agents = append(run.Agents, seedAgentOf(s.RunID, len(run.Agents), store.NodeStatus(s.Status), c))
		if c.Phase != "" && !containsString(run.Phases, c.Phase) {
			run.Phases = append(run.Phases, c.Phase)
		}
	}
	for _, l := range d.Logs {
		run.Logs = append(run.Logs, l.Message)
	}
	run.Fill(s)
	if s.EndedAt == nil && !s.StartedAt.IsZero() {
		ms := time.Since(s.StartedAt).Milliseconds()
		run.DurationMs = &ms
	}
	o := d.Options
	if o.Concurrency > 0 {
		run.Concurrency = &o.Concurrency
	}
	if o.MaxAgents > 0 {
		run.MaxAgents = &o.MaxAgents
	}
	run.AgentRetries = &o.AgentRetries
	if o.TokenBudget > 0 {
		run.TokenBudget = &o.TokenBudget
	}
	return seedRun{NodeRun: run, Summary: s}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// isoTime formats t as JavaScript's Date.toISOString does; zero is "".
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// seedSummary is a run in the Node runtime's overview (its
// StandaloneRunSummary), and our summary beside it.
type seedSummary struct {
	RunID               string           `json:"runId"`
	WorkflowName        string           `json:"workflowName"`
	Description         string           `json:"description,omitempty"`
	Status              string           `json:"status"`
	PauseReason         string           `json:"pauseReason,omitempty"`
	Phases              []string         `json:"phases"`
	CurrentPhase        string           `json:"currentPhase,omitempty"`
	StartedAt           string           `json:"startedAt"`
	UpdatedAt           string           `json:"updatedAt"`
	CompletedAt         string           `json:"completedAt,omitempty"`
	DurationMs          *int64           `json:"durationMs,omitempty"`
	TokenUsage          *store.NodeUsage `json:"tokenUsage,omitempty"`
	DefaultExecutor     string           `json:"defaultExecutor,omitempty"`
	Error               *store.NodeError `json:"error,omitempty"`
	AgentCount          int              `json:"agentCount"`
	CompletedAgentCount int              `json:"completedAgentCount"`
	ErrorAgentCount     int              `json:"errorAgentCount"`
	Summary             store.Summary    `json:"summary"`
}

func seedSummaryOf(s store.Summary) seedSummary {
	var v store.NodeView
	v.Phases = s.Phases
	v.Fill(s)
	return seedSummary{
		RunID: v.RunID, WorkflowName: v.WorkflowName, Description: v.Description, Status: v.Status,
		PauseReason: v.PauseReason, Phases: v.Phases, CurrentPhase: v.CurrentPhase, StartedAt: v.StartedAt,
		UpdatedAt: v.UpdatedAt, CompletedAt: v.CompletedAt, DurationMs: v.DurationMs, TokenUsage: v.TokenUsage,
		DefaultExecutor: v.DefaultExecutor, Error: v.Error,
		AgentCount: s.Stats.Agents + s.Stats.Running, CompletedAgentCount: s.Stats.Agents - s.Stats.Failed,
		ErrorAgentCount: s.Stats.Failed, Summary: s,
	}
}

// seedProject is the Node runtime's project, with our id.
type seedProject struct {
	Cwd  string `json:"cwd"`
	Name string `json:"name"`
	ID   string `json:"id"`
}

// seedRuntimeInfo is the Node runtime's runtime object, with ours.
type seedRuntimeInfo struct {
	StartedAt         string `json:"startedAt"`
	Version           string `json:"version"`
	ProtocolVersion   int    `json:"protocolVersion"`
	PID               int    `json:"pid"`
	AutoResumeEnabled bool   `json:"autoResumeEnabled"`
	// ProgramVersion is ours: Version is the Node runtime's state version.
	ProgramVersion string `json:"programVersion,omitempty"`
	Sequence       int64  `json:"sequence"`
	Epoch          string `json:"epoch"`
}

// seedCheckpoint is a pending checkpoint in both shapes: the Node
// runtime's {id, runId, prompt, options, createdAt} and ours.
type seedCheckpoint struct {
	Checkpoint
	CreatedAt string             `json:"createdAt"`
	Options   seedCheckpointOpts `json:"options"`
}

type seedCheckpointOpts struct {
	Default   json.RawMessage `json:"default,omitempty"`
	Headless  string          `json:"headless,omitempty"`
	Kind      string          `json:"kind"`
	Choices   []string        `json:"choices,omitempty"`
	TimeoutMs int64           `json:"timeoutMs,omitempty"`
}

func (s *Server) seedProject() seedProject {
	return seedProject{Cwd: s.cfg.Cwd, Name: filepath.Base(s.cfg.Cwd), ID: s.rt.Store().ProjectID()}
}

func (s *Server) seedRuntimeInfo(seq int64) seedRuntimeInfo {
	i := s.runtimeInfo(seq)
	return seedRuntimeInfo{StartedAt: isoTime(i.StartedAt), Version: "1", ProtocolVersion: i.ProtocolVersion, PID: i.PID,
		ProgramVersion: i.Version, Sequence: i.Sequence, Epoch: i.Epoch}
}

func (s *Server) seedCheckpoints() []seedCheckpoint {
	pending := s.checkpoints.pendingRequests()
	out := make([]seedCheckpoint, 0, len(pending))
	for _, p := range pending {
		kind := string(p.Kind)
		if p.Kind == lang.Text {
			kind = "input" // the Node runtime's name
		}
		out = append(out, seedCheckpoint{Checkpoint: p.Checkpoint, CreatedAt: isoTime(p.CreatedAt), Options: seedCheckpointOpts{
			Default: p.req.Default, Headless: p.req.Headless, Kind: kind, Choices: p.req.Choices, TimeoutMs: p.req.TimeoutMs,
		}})
	}
	return out
}

// seedOverview answers GET /api/overview in the Node runtime's shape.
func (s *Server) seedOverview(c echo.Context, runs json.RawMessage, seq int64) error {
	var sums []store.Summary
	if err := json.Unmarshal(runs, &sums); err != nil {
		return err
	}
	out := make([]seedSummary, 0, len(sums))
	for _, sum := range sums {
		out = append(out, seedSummaryOf(sum))
	}
	return c.JSON(200, map[string]any{
		"project": s.seedProject(), "runtime": s.seedRuntimeInfo(seq), "runs": out, "checkpoints": s.seedCheckpoints(),
	})
}

// seedState answers GET /api/state in the Node runtime's shape.
func (s *Server) seedState(c echo.Context, seq int64, details []*engine.Detail) error {
	runs := make([]seedRun, 0, len(details))
	for _, d := range details {
		runs = append(runs, seedRunOf(d))
	}
	return c.JSON(200, map[string]any{
		"project": s.seedProject(), "runtime": s.seedRuntimeInfo(seq), "runs": runs, "checkpoints": s.seedCheckpoints(),
	})
}
