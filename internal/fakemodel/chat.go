package fakemodel

import (
	"encoding/json"
	"fmt"
)

// chatAPI is OpenAI chat completions, streamed, as Pi's openai-completions
// provider uses it: chunks, a last chunk with the usage and no choices,
// then [DONE].
type chatAPI struct{}

func (chatAPI) parse(body []byte) (parsed, error) {
	var req struct {
		Stream bool   `json:"stream"`
		Model  string `json:"model"`
		Tools  []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
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
		if t.Function.Name == "bash" {
			p.shellTool = "bash"
		}
	}
	for _, m := range req.Messages {
		if m.Role == "tool" {
			p.toolResult = true
			p.toolOutput = textOf(m.Content)
		}
	}
	return p, nil
}

func (chatAPI) fail(a *answer) {
	typ := map[Scenario]string{Err401: "invalid_request_error", ErrModel: "invalid_request_error", Err429: "rate_limit_exceeded"}[a.sc]
	if typ == "" {
		typ = "server_error"
	}
	a.writeError(string(mustJSON(map[string]any{"error": map[string]any{"message": a.errorMessage(), "type": typ, "code": nil}})))
}

func (chatAPI) answer(a *answer) {
	e := a.startSSE()
	id := fmt.Sprintf("chatcmpl_%04d", a.id)
	chunk := func(delta map[string]any, finish any) {
		e.event("", mustJSON(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": a.req.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}))
	}
	switch {
	case a.sc == Slow:
		a.trickle(func(int) { chunk(map[string]any{"role": "assistant", "content": "slow "}, nil) })
		return
	case a.sc == Cut:
		chunk(map[string]any{"role": "assistant", "content": "partial "}, nil)
		e.cut()
	case a.wantsTool(), a.wantsWrite():
		name, args := a.req.shellTool, mustJSON(map[string]string{"command": a.toolCommand()})
		if a.wantsWrite() {
			name, args = "write", mustJSON(map[string]string{"path": writePath(a.sc), "content": WriteContent})
		}
		chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%04d", a.id), "type": "function",
			"function": map[string]any{"name": name, "arguments": string(args)}}}}, nil)
		chunk(map[string]any{}, "tool_calls")
	default:
		chunk(map[string]any{"role": "assistant", "content": a.text()}, nil)
		chunk(map[string]any{}, "stop")
	}
	u := a.usage()
	e.event("", mustJSON(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": a.req.model, "choices": []any{},
		"usage": openAIUsage(u, "prompt_tokens", "completion_tokens", "prompt_tokens_details")}))
	a.s.report(u)
	_, _ = a.w.Write([]byte("data: [DONE]\n\n"))
}
