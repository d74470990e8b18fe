package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dynworkflow/dynworkflow/executors"
)

// messagesAPI is the Anthropic Messages API, streamed and not, as Claude
// Code uses it. The usage is split as Anthropic does: input_tokens counts
// the uncached input only, cache_read_input_tokens the cached part;
// message_start carries it with output_tokens 1, and message_delta the
// final output count.
type messagesAPI struct{}

func (messagesAPI) parse(body []byte) (parsed, error) {
	var req struct {
		Stream bool   `json:"stream"`
		Model  string `json:"model"`
		Tools  []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if len(body) == 0 {
		return parsed{}, errNoBody
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, err
	}
	p := parsed{stream: req.Stream, model: req.Model}
	for _, t := range req.Tools {
		switch t.Name {
		case "Bash", "bash":
			p.shellTool = t.Name
		case "StructuredOutput":
			p.structuredTool = true
		}
	}
	for _, m := range req.Messages {
		// Content is a string or a list of blocks; only blocks hold results.
		if m.Role == "user" && strings.Contains(string(m.Content), `"tool_result"`) {
			p.toolResult = true
			var blocks []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			_ = json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				if b.Type == "tool_result" {
					p.toolOutput = textOf(b.Content)
				}
			}
		}
	}
	p.cwd = workingDirectory(body)
	return p, nil
}

// cwdLine starts the line of Claude Code's system prompt (sent as a
// system message or the system field) that names the working directory.
const cwdLine = "Primary working directory: "

// workingDirectory finds the working directory Claude Code tells the
// model, or "".
func workingDirectory(body []byte) string {
	i := bytes.Index(body, []byte(cwdLine))
	if i < 0 {
		return ""
	}
	rest := body[i+len(cwdLine):]
	// The prompt is inside a JSON string: the line ends at an escaped
	// newline or at the string's end.
	end := len(rest)
	for _, stop := range [][]byte{[]byte(`\n`), []byte(`"`)} {
		if j := bytes.Index(rest, stop); j >= 0 && j < end {
			end = j
		}
	}
	var dir string
	if json.Unmarshal([]byte(`"`+string(rest[:end])+`"`), &dir) != nil || !filepath.IsAbs(dir) {
		return ""
	}
	return dir
}

func (messagesAPI) fail(a *answer) {
	typ := map[Scenario]string{Err401: "authentication_error", ErrModel: "not_found_error", Err429: "rate_limit_error"}[a.sc]
	if typ == "" {
		typ = "api_error"
	}
	a.writeError(string(mustJSON(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": a.errorMessage()}})))
}

// content is the answer's content blocks and stop reason.
func (a *answer) messageContent() ([]map[string]any, string) {
	switch {
	case a.wantsWrite():
		path := writePath(a.sc)
		if a.req.cwd != "" {
			path = filepath.Join(a.req.cwd, path)
		}
		return []map[string]any{{"type": "tool_use", "id": fmt.Sprintf("toolu_%04d", a.id), "name": "Write",
			"input": map[string]any{"file_path": path, "content": WriteContent}}}, "tool_use"
	case a.wantsTool():
		input := map[string]any{"command": a.toolCommand()}
		if a.req.shellTool == "Bash" {
			input["description"] = "Print hi"
		}
		return []map[string]any{{"type": "tool_use", "id": fmt.Sprintf("toolu_%04d", a.id), "name": a.req.shellTool, "input": input}}, "tool_use"
	case a.sc == Schema && a.req.structuredTool:
		var v any
		_ = json.Unmarshal([]byte(SchemaAnswer), &v)
		return []map[string]any{{"type": "tool_use", "id": fmt.Sprintf("toolu_%04d", a.id), "name": "StructuredOutput", "input": v}}, "tool_use"
	}
	return []map[string]any{{"type": "text", "text": a.text()}}, "end_turn"
}

func anthropicUsage(u executors.Usage, output int64) map[string]any {
	return map[string]any{"input_tokens": u.InputTokens - u.CachedInputTokens, "cache_creation_input_tokens": 0,
		"cache_read_input_tokens": u.CachedInputTokens, "output_tokens": output}
}

func (messagesAPI) answer(a *answer) {
	u := a.usage()
	msgID := fmt.Sprintf("msg_%04d", a.id)
	content, stop := a.messageContent()
	if !a.req.stream {
		a.w.Header().Set("Content-Type", "application/json")
		_, _ = a.w.Write(mustJSON(map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": a.req.model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": anthropicUsage(u, u.OutputTokens)}))
		a.s.report(u)
		return
	}
	e := a.startSSE()
	start := executors.Usage{InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens, OutputTokens: 1}
	if a.sc == Slow {
		// The input is reported only with the end, which a slow stream
		// never reaches: what a killed client saw is then zero.
		start = executors.Usage{}
	}
	e.event("message_start", mustJSON(map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message",
		"role": "assistant", "model": a.req.model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": anthropicUsage(start, start.OutputTokens)}}))
	a.s.report(start)
	textDelta := func(s string) {
		e.event("content_block_delta", mustJSON(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": s}}))
	}
	switch a.sc {
	case Slow:
		e.event("content_block_start", mustJSON(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}))
		a.trickle(func(int) { textDelta("slow ") })
		return
	case Cut:
		e.event("content_block_start", mustJSON(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}))
		textDelta("partial ")
		a.s.reportCut(start)
		e.cut()
	}
	for i, block := range content {
		if block["type"] == "tool_use" {
			input := block["input"]
			e.event("content_block_start", mustJSON(map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}}))
			e.event("content_block_delta", mustJSON(map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(mustJSON(input))}}))
		} else {
			e.event("content_block_start", mustJSON(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}}))
			textDelta(block["text"].(string))
		}
		e.event("content_block_stop", mustJSON(map[string]any{"type": "content_block_stop", "index": i}))
	}
	e.event("message_delta", mustJSON(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.OutputTokens}}))
	a.s.report(executors.Usage{InputTokens: u.InputTokens - start.InputTokens, CachedInputTokens: u.CachedInputTokens - start.CachedInputTokens,
		OutputTokens: u.OutputTokens - start.OutputTokens})
	e.event("message_stop", mustJSON(map[string]any{"type": "message_stop"}))
}
