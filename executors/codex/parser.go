package codex

import (
	"encoding/json"
	"strings"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/proc"
)

// event is one line of codex exec --json; only the fields we read.
type event struct {
	Type  string `json:"type"`
	Item  *item  `json:"item"`
	Usage *struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"`
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"`
	Message string `json:"message"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type item struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	Text             string `json:"text"`
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	Status           string `json:"status"`
	Message          string `json:"message"`
	Server           string `json:"server"`
	Tool             string `json:"tool"`
	Query            string `json:"query"`
	Changes          []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

// parser turns codex's events into a result.
type parser struct {
	req      executors.Request
	rec      *agentcli.Recorder
	answer   string
	answered bool
	// completed and failed are the turn's end; errMsg its last error.
	completed, failed bool
	errMsg            string
	badLines          int
}

func newParser(req executors.Request, observe executors.Observer) *parser {
	return &parser{req: req, rec: agentcli.NewRecorder(observe)}
}

func (p *parser) Line(line []byte) {
	var ev event
	if err := json.Unmarshal(line, &ev); err != nil {
		p.badLines++ // codex prints only JSON on stdout; count, don't fail
		return
	}
	switch ev.Type {
	case "turn.started":
		p.rec.Activity(executors.NewActivity(executors.ActivityStream, "turn started"))
	case "item.started":
		if ev.Item != nil && ev.Item.Type == "command_execution" {
			p.rec.ToolCall("shell", ev.Item.Command)
		} else {
			p.rec.Heartbeat()
		}
	case "item.completed":
		p.item(ev.Item)
	case "turn.completed":
		p.completed = true
		if ev.Usage != nil {
			p.rec.SetUsage(executors.Usage{InputTokens: ev.Usage.InputTokens, CachedInputTokens: ev.Usage.CachedInputTokens,
				OutputTokens: ev.Usage.OutputTokens})
		}
	case "turn.failed":
		p.failed = true
		if ev.Error != nil && ev.Error.Message != "" {
			p.errMsg = ev.Error.Message
		}
	case "error":
		// "Reconnecting... waiting for network (…)" while the endpoint is
		// down, "Reconnecting... 2/5 (…)" while it retries: the
		// recorder's activity tells them apart.
		p.errMsg = ev.Message
		p.rec.Message("error", ev.Message)
	default:
		p.rec.Heartbeat() // item.updated, thread.started, and events to come
	}
}

func (p *parser) item(it *item) {
	if it == nil {
		return
	}
	switch it.Type {
	case "agent_message":
		p.answer, p.answered = it.Text, true
		p.rec.Message("assistant", it.Text)
	case "reasoning":
		p.rec.Message("reasoning", it.Text)
	case "command_execution":
		failed := it.Status == "failed" || it.ExitCode != nil && *it.ExitCode != 0
		p.rec.ToolResult("shell", it.AggregatedOutput, failed)
	case "file_change":
		var b strings.Builder
		for i, c := range it.Changes {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(c.Kind + " " + c.Path)
		}
		p.rec.ToolCall("apply_patch", b.String())
		p.rec.ToolResult("apply_patch", it.Status, it.Status != "completed")
	case "mcp_tool_call", "web_search", "todo_list":
		name := it.Type
		if it.Tool != "" {
			name = it.Server + "." + it.Tool
		}
		p.rec.ToolCall(name, it.Query)
	case "error":
		// A warning item (such as unknown model metadata); the turn goes on.
		p.rec.Message("warning", it.Message)
	}
}

func (p *parser) Partial() executors.Result {
	return executors.Result{Usage: p.rec.Usage(), Provider: "openai", Model: p.req.Model, History: p.rec.History()}
}

func (p *parser) Finish(ex proc.Exit) (executors.Result, error) {
	res := p.Partial()
	switch {
	case p.failed || (p.errMsg != "" && !p.completed):
		msg := p.errMsg
		if msg == "" {
			msg = "turn failed"
		}
		return res, &executors.Error{Class: agentcli.ClassifyMessage(msg), Message: "codex: " + msg}
	case !ex.Success():
		return res, agentcli.ExitError("codex", ex)
	case !p.completed:
		return res, &executors.Error{Class: executors.Transient, Message: "codex exited without finishing its turn (no turn.completed)"}
	case !p.answered:
		return res, &executors.Error{Class: executors.Terminal, Message: "codex finished its turn without an answer (no agent_message)"}
	}
	res.Text = p.answer
	return res, nil
}
