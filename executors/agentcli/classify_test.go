package agentcli

import (
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
)

func TestClassifyMessage(t *testing.T) {
	tests := []struct {
		msg  string
		want executors.Class
	}{
		{"500 fake internal server error", executors.Transient},
		{"401 fake invalid api key", executors.Terminal},
		{"429 fake rate limit reached", executors.RateLimited},
		{"unexpected status 401 Unauthorized: fake invalid api key, url: http://127.0.0.1:45129/v1/responses", executors.Terminal},
		{"exceeded retry limit, last status: 429 Too Many Requests", executors.RateLimited},
		{"API Error: Request rejected (429) · slow down", executors.RateLimited},
		{"We’re currently experiencing high demand, which may cause temporary errors.", executors.Transient},
		{"stream disconnected before completion: stream closed before response.completed", executors.Transient},
		{"terminated", executors.Transient},
		{"You've hit your usage limit. Resets in 2m.", executors.RateLimited},
		{"Error loading config.toml: wire_api = \"chat\" is no longer supported.", executors.Terminal},
		{"connect to 127.0.0.1:45129 failed", executors.Transient},
	}
	for _, tc := range tests {
		if got := ClassifyMessage(tc.msg); got != tc.want {
			t.Errorf("ClassifyMessage(%q) = %s, want %s", tc.msg, got, tc.want)
		}
	}
}
