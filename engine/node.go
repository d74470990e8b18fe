package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
)

// Runs shared with the Node runtime (npm @fish59fish/dynamic-workflows),
// which keeps its runs in the same state directory (see store/node.go):
// ours carry its field names so that its list and show read them, and its
// runs are shown here read-only.

// nodeTextMax bounds the prompt and result a snapshot repeats of each
// call for the Node runtime: the journal has them whole, and
// `dynworkflow show` prints them; the snapshot stays a summary.
const nodeTextMax = 1 << 10

// nodeAgents is the Node runtime's agents[] of one execution, in the order
// its calls settled (replayed, finished or failed), as its own list shows
// a resumed run's calls again as they replay. Appending costs a call a
// few hundred bytes of memory and no I/O; the list reaches the disk once,
// when the run settles (see saveSnapshot), so the bytes written per call
// stay flat while it runs.
type nodeAgents struct {
	mu     sync.Mutex
	agents []store.NodeAgent
}

// note records a settled call. err is its failure, or nil.
func (n *nodeAgents) note(c *agentCall, result json.RawMessage, usage executors.Usage, err error) {
	a := store.NodeAgent{Label: c.Opts.Label, Phase: c.Phase, Prompt: clipText(c.Prompt, nodeTextMax, "prompt"),
		Status: "done", Executor: c.Executor, Model: c.Opts.Model, Tokens: usage.Total()}
	if a.Label == "" {
		a.Label = c.Path
	}
	switch {
	case err != nil:
		a.Status, a.Error = "error", err.Error()
		var ee *Error
		if errors.As(err, &ee) {
			a.ErrorCode = ee.Code
		}
	case len(result) <= nodeTextMax:
		a.Result = result
	default:
		a.ResultPreview = clipText(previewOf(result), nodeTextMax, "result")
	}
	n.mu.Lock()
	a.ID = len(n.agents) + 1
	n.agents = append(n.agents, a)
	n.mu.Unlock()
}

func (n *nodeAgents) list() []store.NodeAgent {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.agents)
}

// nodePhases lists the phases of a run: the script's, then any its calls
// name that the script did not declare.
func nodePhases(declared []string, agents []store.NodeAgent) []string {
	phases := slices.Clone(declared)
	for _, a := range agents {
		if a.Phase != "" && !slices.Contains(phases, a.Phase) {
			phases = append(phases, a.Phase)
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

// clipText cuts s to at most max bytes, on a character boundary, and
// says where the whole field is.
func clipText(s string, max int, field string) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… [" + strconv.Itoa(len(s)-cut) + " more bytes; `dynworkflow show` prints the whole " + field + "]"
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
	d.MarkInterrupted()
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
