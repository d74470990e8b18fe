package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
)

// Runs shared with the Node runtime (npm @fish59fish/dynamic-workflows),
// which keeps its runs in the same state directory (see store/node.go):
// ours carry its field names so that its list and show read them, and its
// runs are shown here read-only.

// Bounds of what a snapshot repeats of each call for the Node runtime: the
// journal has every prompt and result whole, and `dynworkflow show` prints
// them; the snapshot stays a summary.
const (
	nodePromptMax  = 4 << 10
	nodeResultMax  = 4 << 10
	nodePreviewMax = 200
)

// nodeAgents lists a run's agent calls as the Node runtime's agents[].
func nodeAgents(runID string, calls []CallDetail) []store.NodeAgent {
	agents := make([]store.NodeAgent, 0, len(calls))
	for _, c := range calls {
		if c.Kind != "agent" {
			continue
		}
		a := store.NodeAgent{
			ID: len(agents) + 1, CallID: runID + ":" + c.Path, Label: c.Label, Phase: c.Phase,
			Prompt: clipText(c.Prompt, nodePromptMax, "prompt"), Executor: c.Executor, Model: c.Model,
			StartedAt: store.NodeTime(c.StartedAt), EndedAt: store.NodeTime(c.EndedAt), Path: c.Path,
		}
		if a.Label == "" {
			a.Label = c.Path
		}
		switch c.Status {
		case "done":
			a.Status = "done"
			a.ResultPreview = clipText(previewOf(c.Result), nodePreviewMax, "")
			if len(c.Result) <= nodeResultMax {
				a.Result = c.Result
			}
		case "failed":
			a.Status, a.Error = "error", c.Error
		default:
			a.Status = "running"
		}
		if u := c.Usage; u != nil {
			a.TokenUsage = &store.NodeUsage{Input: u.InputTokens, Output: u.OutputTokens, Total: u.Total(),
				Cost: u.CostUSD, CacheRead: u.CachedInputTokens}
			a.Tokens = u.Total()
		}
		agents = append(agents, a)
	}
	return agents
}

// nodePhases lists the phases of a run: the script's, then any its calls
// name that the script did not declare.
func nodePhases(declared []string, calls []CallDetail) []string {
	phases := slices.Clone(declared)
	for _, c := range calls {
		if c.Phase != "" && !slices.Contains(phases, c.Phase) {
			phases = append(phases, c.Phase)
		}
	}
	return phases
}

// previewOf is a result as text: a string as itself, anything else as JSON.
func previewOf(result json.RawMessage) string {
	var s string
	if json.Unmarshal(result, &s) == nil {
		return s
	}
	return string(result)
}

// clipText cuts s to at most max bytes, on a character boundary, saying
// so when what is cut is a whole field the reader may want.
func clipText(s string, max int, field string) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if field == "" {
		return s[:cut] + "…"
	}
	return s[:cut] + "… [" + strconv.Itoa(len(s)-cut) + " more bytes; `dynworkflow show` prints the whole " + field + "]"
}

// withNodeView adds what the Node runtime reads of a settled run to its
// snapshot: its agents and phases, folded from the journal. It costs one
// read of the journal, so it is done when a run settles, not while it
// runs: a running run's snapshot stays small.
func (rt *Runtime) withNodeView(id string, snap *store.Snapshot, declared []string) {
	d, _, err := foldJournal(rt.store.RunPaths(id).Journal)
	if err != nil {
		rt.log.Warn("list the calls of a run for the Node runtime", "run", id, "err", err)
		return
	}
	snap.Agents = nodeAgents(id, d.Calls)
	snap.Phases = nodePhases(declared, d.Calls)
	for _, l := range d.Logs {
		if l.Level != "phase" {
			snap.Logs = append(snap.Logs, l.Message)
		}
	}
}

// inspectNodeRun shows a run of the Node runtime in our terms. Results it
// kept only in its journal are taken from there, as its own show does.
func (rt *Runtime) inspectNodeRun(run *store.NodeRun) *Detail {
	sum := rt.store.NodeSummary(run)
	d := &Detail{
		Summary: sum,
		Script:  ScriptInfo{Name: run.WorkflowName, Path: run.Source, Text: run.Script},
		Args:    run.Args,
		Result:  run.Result,
		Options: Options{Executor: run.DefaultExecutor},
		Calls:   []CallDetail{},
		// One execution: the Node runtime keeps no history of its resumes.
		Executions: []Execution{{Epoch: 0, Rule: "fresh", StartedAt: sum.StartedAt}},
	}
	if run.Concurrency != nil {
		d.Options.Concurrency = *run.Concurrency
	}
	if run.AgentRetries != nil {
		d.Options.AgentRetries = *run.AgentRetries
	}
	if run.MaxAgents != nil {
		d.Options.MaxAgents = *run.MaxAgents
	}
	if run.TokenBudget != nil {
		d.Options.TokenBudget = *run.TokenBudget
	}
	if sum.Status != string(StatusRunning) {
		d.Executions[0].End = &endInfo{Status: sum.Status, PauseReason: sum.PauseReason, Error: sum.Error,
			Live: sum.Stats.Live, Failed: sum.Stats.Failed}
	}
	journaled := map[string]json.RawMessage{}
	for _, e := range run.Journal {
		owner := e.RunID
		if owner == "" {
			owner = run.RunID
		}
		journaled[owner+":"+strconv.Itoa(e.Index)] = e.Result
	}
	for _, a := range run.Agents {
		c := CallDetail{
			Path: nodeCallPath(run.RunID, a), Kind: "agent", Label: a.Label, Phase: a.Phase, Prompt: a.Prompt,
			Executor: a.Executor, Model: a.Model, Error: a.Error, Source: "node",
		}
		c.StartedAt, _ = time.Parse(time.RFC3339Nano, a.StartedAt)
		c.EndedAt, _ = time.Parse(time.RFC3339Nano, a.EndedAt)
		switch a.Status {
		case "done", "skipped":
			c.Status = "done"
		case "error":
			c.Status = "failed"
		default:
			c.Status = "running"
		}
		c.Result = a.Result
		if c.Result == nil {
			c.Result = journaled[a.CallID]
		}
		if c.Result == nil && a.ResultPreview != "" {
			c.Result, _ = json.Marshal(a.ResultPreview)
		}
		if u := a.TokenUsage; u != nil {
			c.Usage = &executors.Usage{InputTokens: u.Input, CachedInputTokens: u.CacheRead, OutputTokens: u.Output, CostUSD: u.Cost}
		}
		d.Calls = append(d.Calls, c)
	}
	for _, line := range run.Logs {
		d.Logs = append(d.Logs, LogLine{Level: "info", Message: line})
	}
	return d
}

// nodeCallPath names a Node runtime agent like one of ours: its call
// index within its run ("/agent.3"), or within a nested workflow
// ("/nested1/agent.0"), from its callId "<runId>[-nestedK]:<index>".
func nodeCallPath(runID string, a store.NodeAgent) string {
	owner, index, ok := strings.Cut(a.CallID, ":")
	if i := strings.LastIndexByte(a.CallID, ':'); i >= 0 {
		owner, index, ok = a.CallID[:i], a.CallID[i+1:], true
	}
	if !ok {
		return fmt.Sprintf("/agent.%d", a.ID-1)
	}
	if nested := strings.TrimPrefix(owner, runID+"-"); nested != owner {
		return "/" + nested + "/agent." + index
	}
	return "/agent." + index
}
