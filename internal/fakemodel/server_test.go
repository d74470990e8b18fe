package fakemodel

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
)

// TestProtocols checks each protocol's answer and the usage accounting
// without any CLI, so the server is covered where the CLIs are absent.
func TestProtocols(t *testing.T) {
	full := executors.Usage{InputTokens: 11, CachedInputTokens: 3, OutputTokens: 7}
	tests := []struct {
		name, path, body string
		status           int
		contains         string
		sent             executors.Usage
	}{
		{"responses text", "/v1/responses", `{"stream":true,"input":[]}`, 200, `"text":"hi from fake model"`, full},
		{"responses tool", "/v1/responses", `{"stream":true,"tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message","content":"FAKE_TOOL"}]}`, 200, `"name":"exec_command"`, full},
		{"chat text", "/v1/chat/completions", `{"stream":true,"messages":[]}`, 200, `data: [DONE]`, full},
		{"messages stream", "/v1/messages?beta=true", `{"stream":true,"messages":[]}`, 200, `"type":"message_stop"`, full},
		{"messages not streamed", "/v1/messages", `{"stream":false,"messages":[]}`, 200, `"cache_read_input_tokens":3`, full},
		{"messages structured", "/v1/messages", `{"tools":[{"name":"StructuredOutput"}],"messages":[{"role":"user","content":"FAKE_SCHEMA"}]}`, 200, `"name":"StructuredOutput"`, full},
		{"500", "/v1/chat/completions", `{"messages":[{"role":"user","content":"FAKE_ERR500"}]}`, 500, "fake internal server error", executors.Usage{}},
		{"429", "/v1/messages", `{"messages":[{"role":"user","content":"FAKE_ERR429"}]}`, 429, "rate_limit_error", executors.Usage{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := Start(Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			resp, err := http.Post(srv.URL()+tc.path, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.contains) {
				t.Fatalf("status %d, body %s; want %d containing %s", resp.StatusCode, b, tc.status, tc.contains)
			}
			if got := srv.Sent(); got != tc.sent {
				t.Errorf("sent %+v, want %+v", got, tc.sent)
			}
		})
	}
}
