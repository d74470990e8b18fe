package claudecode

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/proc"
)

// event is one line of claude's stream-json output; the fields we read.
type event struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Model   string `json:"model"`
	Message *struct {
		Model   string  `json:"model"`
		Content []block `json:"content"`
	} `json:"message"`
	// Error is set on the synthetic assistant message of an API error:
	// "rate_limit", "server_error", "authentication_failed", ...
	Error string `json:"error"`

	// The result line.
	IsError          bool                       `json:"is_error"`
	Result           string                     `json:"result"`
	StructuredOutput json.RawMessage            `json:"structured_output"`
	TerminalReason   string                     `json:"terminal_reason"`
	APIErrorStatus   int                        `json:"api_error_status"`
	Errors           []string                   `json:"errors"`
	TotalCostUSD     float64                    `json:"total_cost_usd"`
	Usage            *usage                     `json:"usage"`
	ModelUsage       map[string]json.RawMessage `json:"modelUsage"`

	// api_retry lines; their Error is the error's kind ("unknown",
	// "rate_limit", ...).
	Attempt     int `json:"attempt"`
	MaxRetries  int `json:"max_retries"`
	ErrorStatus int `json:"error_status"`
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// normalized counts cached input inside the input, as executors.Usage
// does; Anthropic counts cache reads and writes beside input_tokens.
func (u usage) normalized(cost float64) executors.Usage {
	return executors.Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		CachedInputTokens: u.CacheReadInputTokens, OutputTokens: u.OutputTokens, CostUSD: cost}
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	ID        string          `json:"id"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type parser struct {
	req   executors.Request
	rec   *agentcli.Recorder
	model string
	// toolNames maps tool_use ids to names, for their results.
	toolNames map[string]string
	result    *event
	// apiError is the last synthetic API error message.
	apiError string
}

func newParser(req executors.Request, observe executors.Observer) *parser {
	return &parser{req: req, rec: agentcli.NewRecorder(observe), model: req.Model, toolNames: map[string]string{}}
}

func (p *parser) Line(line []byte) {
	var ev event
	if json.Unmarshal(line, &ev) != nil {
		return // claude prints only JSON on stdout
	}
	switch ev.Type {
	case "system":
		switch ev.Subtype {
		case "init":
			if ev.Model != "" {
				p.model = ev.Model
			}
		case "api_retry":
			p.retry(&ev)
		default:
			p.rec.Heartbeat() // status "requesting", and the like
		}
	case "assistant":
		p.assistant(&ev)
	case "user":
		if ev.Message != nil {
			for _, b := range ev.Message.Content {
				if b.Type == "tool_result" {
					p.rec.ToolResult(p.toolNames[b.ToolUseID], contentText(b.Content), b.IsError)
				}
			}
		}
	case "result":
		p.result = &ev
		if ev.Usage != nil {
			p.rec.SetUsage(ev.Usage.normalized(ev.TotalCostUSD))
		}
	default:
		p.rec.Heartbeat() // stream_event, and events to come
	}
}

// retry records Claude Code retrying its model request. Without an HTTP
// status it got no answer at all (a refused connection, no route): the
// endpoint is unreachable.
func (p *parser) retry(ev *event) {
	what := fmt.Sprintf("API retry %d/%d", ev.Attempt, ev.MaxRetries)
	if ev.ErrorStatus == 0 {
		text := what + ": no answer from the model endpoint (" + ev.Error + ")"
		p.rec.Note("system", text, executors.NewActivity(executors.ActivityUnreachable, text))
		return
	}
	text := fmt.Sprintf("%s after HTTP %d (%s)", what, ev.ErrorStatus, ev.Error)
	p.rec.Note("system", text, executors.NewActivity(executors.ActivityRetry, text))
}

func (p *parser) assistant(ev *event) {
	if ev.Message == nil {
		return
	}
	if ev.Message.Model != "" && ev.Message.Model != "<synthetic>" {
		p.model = ev.Message.Model
	}
	for _, b := range ev.Message.Content {
		switch b.Type {
		case "text":
			if ev.Error != "" {
				p.apiError = ev.Error + ": " + b.Text
				p.rec.Message("error", b.Text)
			} else {
				p.rec.Message("assistant", b.Text)
			}
		case "tool_use":
			p.toolNames[b.ID] = b.Name
			p.rec.ToolCall(b.Name, string(b.Input))
		case "thinking":
			p.rec.Message("reasoning", b.Text)
		}
	}
}

// contentText flattens a tool result's content: a string or text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) == nil {
		var b strings.Builder
		for _, bl := range blocks {
			b.WriteString(bl.Text)
		}
		return b.String()
	}
	return string(raw)
}

func (p *parser) Partial() executors.Result {
	model := p.model
	if p.result != nil {
		model = cmp.Or(mainModel(p.result.ModelUsage), model)
	}
	return executors.Result{Usage: p.rec.Usage(), Provider: "anthropic", Model: model, History: p.rec.History()}
}

// mainModel names the model that did a call's main work, as the API saw
// it: Claude Code also spends a few tokens of a small model on the side
// (a title, a summary), and modelUsage, a JSON object, lists both in no
// order. The one with the most output tokens wrote the answer; a tie goes
// to the most input tokens, then to the first name in order, so that the
// same result always reports the same model. Picking from the map gave
// haiku for 43 of 50 identical results and sonnet for the others.
func mainModel(usage map[string]json.RawMessage) string {
	type counts struct {
		InputTokens  int64 `json:"inputTokens"`
		OutputTokens int64 `json:"outputTokens"`
	}
	best, bestCounts := "", counts{-1, -1}
	for _, name := range slices.Sorted(maps.Keys(usage)) {
		var c counts
		_ = json.Unmarshal(usage[name], &c) // a model whose counts do not read counts for nothing
		if c.OutputTokens > bestCounts.OutputTokens ||
			c.OutputTokens == bestCounts.OutputTokens && c.InputTokens > bestCounts.InputTokens {
			best, bestCounts = name, c
		}
	}
	return best
}

func (p *parser) Finish(ex proc.Exit) (executors.Result, error) {
	res := p.Partial()
	r := p.result
	if r == nil {
		if !ex.Success() {
			return res, agentcli.ExitError("claude", ex)
		}
		return res, &executors.Error{Class: executors.Transient, Message: "claude exited without a result line"}
	}
	if r.IsError || strings.HasPrefix(r.Subtype, "error") {
		return res, p.failure(r)
	}
	res.Text = r.Result
	if len(r.StructuredOutput) > 0 && string(r.StructuredOutput) != "null" {
		res.Structured = r.StructuredOutput
	}
	return res, nil
}

// failure classifies a result line that says is_error.
func (p *parser) failure(r *event) error {
	msg := r.Result
	if msg == "" {
		msg = strings.Join(r.Errors, "; ")
	}
	if msg == "" {
		msg = r.Subtype
	}
	msg = "claude: " + msg
	if _, ok := agentcli.UnavailableCause(msg); ok && (r.APIErrorStatus != 0 || p.apiError != "") {
		// Claude words an unknown model as a 404 and a missing login with
		// no status at all; either way no call can succeed.
		return &executors.Error{Class: executors.Unavailable, Message: msg}
	}
	if c, ok := agentcli.ClassifyStatus(r.APIErrorStatus); ok {
		return &executors.Error{Class: c, Message: msg}
	}
	switch {
	case strings.HasPrefix(p.apiError, "rate_limit"):
		return &executors.Error{Class: executors.RateLimited, Message: msg}
	case strings.HasPrefix(p.apiError, "authentication"):
		return &executors.Error{Class: executors.Unavailable, Message: msg}
	case strings.HasPrefix(p.apiError, "invalid_request"),
		r.TerminalReason == "max_turns", r.Subtype == "error_max_turns":
		return &executors.Error{Class: executors.Terminal, Message: msg}
	case p.apiError != "", r.TerminalReason == "aborted_streaming":
		return &executors.Error{Class: executors.Transient, Message: msg}
	}
	return &executors.Error{Class: agentcli.ClassifyMessage(msg), Message: msg}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
