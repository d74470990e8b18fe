package pi

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/proc"
)

type event struct {
	Type    string   `json:"type"`
	Message *message `json:"message"`
	// Tool execution events.
	ToolName string `json:"toolName"`
	Result   *struct {
		Content []content `json:"content"`
	} `json:"result"`
	IsError bool `json:"isError"`
	// auto_retry_start.
	ErrorMessage string `json:"errorMessage"`
}

type message struct {
	Role         string    `json:"role"`
	Content      []content `json:"content"`
	Provider     string    `json:"provider"`
	Model        string    `json:"model"`
	Usage        *usage    `json:"usage"`
	StopReason   string    `json:"stopReason"`
	ErrorMessage string    `json:"errorMessage"`
}

type content struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Cost       struct {
		Total float64 `json:"total"`
	} `json:"cost"`
}

type parser struct {
	req  executors.Request
	rec  *agentcli.Recorder
	last *message // the last assistant message
	done bool     // agent_end seen
}

func newParser(req executors.Request, observe executors.Observer) *parser {
	return &parser{req: req, rec: agentcli.NewRecorder(observe)}
}

// updatePrefix starts the message_update lines, which carry a full
// snapshot of the message at every token: skipped without parsing.
var updatePrefix = []byte(`{"type":"message_update"`)

func (p *parser) Line(line []byte) {
	if bytes.HasPrefix(line, updatePrefix) {
		p.rec.Heartbeat() // a token streamed
		return
	}
	var ev event
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	switch ev.Type {
	case "message_end":
		if ev.Message != nil && ev.Message.Role == "assistant" {
			p.assistant(ev.Message)
		}
	case "tool_execution_end":
		var out strings.Builder
		if ev.Result != nil {
			for _, c := range ev.Result.Content {
				out.WriteString(c.Text)
			}
		}
		p.rec.ToolResult(ev.ToolName, out.String(), ev.IsError)
	case "auto_retry_start":
		text := "retrying: " + ev.ErrorMessage
		p.rec.Note("system", text, agentcli.ErrorActivity(text))
	case "agent_end":
		p.done = true
	default:
		p.rec.Heartbeat() // tool_execution_start and _update, turn_start, ...
	}
}

func (p *parser) assistant(m *message) {
	p.last = m
	for _, c := range m.Content {
		switch c.Type {
		case "text":
			p.rec.Message("assistant", c.Text)
		case "thinking":
			p.rec.Message("reasoning", c.Text)
		case "toolCall":
			p.rec.ToolCall(c.Name, string(c.Arguments))
		}
	}
	if m.ErrorMessage != "" {
		p.rec.Message("error", m.ErrorMessage)
	}
	if u := m.Usage; u != nil {
		p.rec.AddUsage(executors.Usage{InputTokens: u.Input + u.CacheRead + u.CacheWrite, CachedInputTokens: u.CacheRead,
			OutputTokens: u.Output, CostUSD: u.Cost.Total})
	}
}

func (p *parser) Partial() executors.Result {
	res := executors.Result{Usage: p.rec.Usage(), Model: p.req.Model, History: p.rec.History()}
	if p.last != nil {
		res.Provider, res.Model = p.last.Provider, p.last.Model
	}
	return res
}

func (p *parser) Finish(ex proc.Exit) (executors.Result, error) {
	res := p.Partial()
	m := p.last
	switch {
	case m == nil && !ex.Success():
		return res, agentcli.ExitError("pi", ex)
	case m == nil:
		return res, &executors.Error{Class: executors.Transient, Message: "pi exited without an assistant message"}
	case m.StopReason == "error" || m.StopReason == "aborted":
		msg := m.ErrorMessage
		if msg == "" {
			msg = "the model call ended with stopReason " + m.StopReason
		}
		return res, &executors.Error{Class: agentcli.ClassifyMessage(msg), Message: "pi: " + msg}
	case !p.done && !ex.Success():
		return res, agentcli.ExitError("pi", ex)
	}
	var text strings.Builder
	for _, c := range m.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	res.Text = text.String()
	return res, nil
}
