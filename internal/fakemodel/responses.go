package fakemodel

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dynworkflow/dynworkflow/executors"
)

// responsesAPI is the OpenAI Responses API as Codex uses it: always
// streamed. Codex needs only response.created, output_item.done and
// response.completed; deltas are sent too, as the real API does.
type responsesAPI struct{}

func (responsesAPI) parse(body []byte) (parsed, error) {
	var req struct {
		Stream bool   `json:"stream"`
		Model  string `json:"model"`
		Tools  []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
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
		case "exec_command", "shell":
			p.shellTool = t.Name
		case "apply_patch":
			p.patchTool = true
		}
	}
	for _, in := range req.Input {
		if in.Type == "function_call_output" || in.Type == "custom_tool_call_output" {
			p.toolResult = true
			p.toolOutput = textOf(in.Output)
		}
	}
	return p, nil
}

func (responsesAPI) fail(a *answer) {
	code := map[Scenario]string{Err401: "invalid_api_key", ErrModel: "model_not_found", Err429: "rate_limit_exceeded"}[a.sc]
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": a.errorMessage(), "type": "api_error", "code": nilIfEmpty(code)}})
	a.writeError(string(b))
}

func (responsesAPI) answer(a *answer) {
	e := a.startSSE()
	respID := fmt.Sprintf("resp_%04d", a.id)
	msgID := fmt.Sprintf("msg_%04d", a.id)
	e.event("response.created", mustJSON(map[string]any{"type": "response.created", "response": map[string]any{"id": respID, "status": "in_progress"}}))
	added := false
	delta := func(text string) {
		if !added {
			added = true
			e.event("response.output_item.added", mustJSON(map[string]any{"type": "response.output_item.added", "output_index": 0,
				"item": map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "in_progress", "content": []any{}}}))
		}
		e.event("response.output_text.delta", mustJSON(map[string]any{"type": "response.output_text.delta", "item_id": msgID, "output_index": 0, "content_index": 0, "delta": text}))
	}
	switch {
	case a.sc == Slow:
		a.trickle(func(int) { delta("slow ") })
		return
	case a.sc == Cut:
		delta("partial ")
		e.cut()
	case a.wantsWrite() && a.req.patchTool:
		// Codex edits files with apply_patch, a free-form tool.
		e.event("response.output_item.done", mustJSON(map[string]any{"type": "response.output_item.done", "output_index": 0,
			"item": map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_%04d", a.id), "call_id": fmt.Sprintf("call_%04d", a.id),
				"name": "apply_patch", "input": "*** Begin Patch\n*** Add File: " + writePath(a.sc) + "\n+" + strings.TrimSuffix(WriteContent, "\n") + "\n*** End Patch\n",
				"status": "completed"}}))
	case a.wantsTool(), a.wantsWrite():
		command, tool := a.toolCommand(), a.req.shellTool
		if a.wantsWrite() {
			command = "printf 'written by the fake model\\n' > " + writePath(a.sc)
		}
		if tool == "" {
			tool = "exec_command"
		}
		args := mustJSON(map[string]string{"cmd": command})
		if tool == "shell" {
			args = mustJSON(map[string][]string{"command": {"bash", "-lc", command}})
		}
		e.event("response.output_item.done", mustJSON(map[string]any{"type": "response.output_item.done", "output_index": 0,
			"item": map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%04d", a.id), "call_id": fmt.Sprintf("call_%04d", a.id),
				"name": tool, "arguments": string(args), "status": "completed"}}))
	default:
		text := a.text()
		delta(text)
		e.event("response.output_item.done", mustJSON(map[string]any{"type": "response.output_item.done", "output_index": 0,
			"item": map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}}))
	}
	u := a.usage()
	e.event("response.completed", mustJSON(map[string]any{"type": "response.completed", "response": map[string]any{
		"id": respID, "status": "completed", "usage": openAIUsage(u, "input_tokens", "output_tokens", "input_tokens_details")}}))
	a.s.report(u)
}

// openAIUsage encodes u as OpenAI does: the input count includes the
// cached tokens.
func openAIUsage(u executors.Usage, in, out, details string) map[string]any {
	return map[string]any{
		in: u.InputTokens, out: u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens,
		details:                 map[string]any{"cached_tokens": u.CachedInputTokens},
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
