package agentcli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/proc"
)

func TestClassifyMessage(t *testing.T) {
	tests := []struct {
		msg  string
		want executors.Class
	}{
		{"500 fake internal server error", executors.Transient},
		{"401 fake invalid api key", executors.Unavailable},
		{"403 Forbidden: this key cannot use the API", executors.Unavailable},
		{"Not logged in · Please run /login", executors.Unavailable},
		{"Missing environment variable: `FAKE_API_KEY`.", executors.Unavailable},
		{"No API key found for anthropic.", executors.Unavailable},
		{"The model `gpt-9` does not exist or you do not have access to it.", executors.Unavailable},
		{"404 The model `gpt-9` does not exist or you do not have access to it.", executors.Unavailable},
		{`Model "nosuch/model" not found. Use --list-models to see available models.`, executors.Unavailable},
		{"404 page not found", executors.Terminal},
		{"429 fake rate limit reached", executors.RateLimited},
		{"unexpected status 401 Unauthorized: fake invalid api key, url: http://127.0.0.1:45129/v1/responses", executors.Unavailable},
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

// TestExitErrorFindsTheCause is Pi's way of failing without a key: the
// reason comes first on standard error and advice follows it, so the last
// lines alone say nothing.
func TestExitErrorFindsTheCause(t *testing.T) {
	stderr := "No API key found for anthropic.\n\nUse /login to log into a provider via OAuth or API key. See:\n  docs/providers.md\n  docs/models.md\n"
	err := ExitError("pi", proc.Exit{Code: 1, Stderr: stderr})
	var ee *executors.Error
	if !errors.As(err, &ee) || ee.Class != executors.Unavailable || !strings.Contains(ee.Message, "No API key found") {
		t.Fatalf("err = %v, want an unavailable error quoting the cause", err)
	}
}

// TestMissingBinaryIsUnavailable: no call of an executor whose binary is
// missing can succeed, so the run must pause, and the error says the fix.
func TestMissingBinaryIsUnavailable(t *testing.T) {
	b := NewBase("x", "x", "dynworkflow-no-such-binary", Fixes{Install: "install x"}, Config{})
	_, err := b.LookPath()
	var ee *executors.Error
	if !errors.As(err, &ee) || ee.Class != executors.Unavailable || ee.Fix != "install x" {
		t.Fatalf("err = %#v, want unavailable with the install fix", err)
	}
}

func TestResetHint(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tests := []struct {
		msg  string
		want time.Duration
	}{
		{"429 fake rate limit reached, retry after 2s", 2 * time.Second},
		{"API Error: Request rejected (429) · rate limit reached, resets in 5s", 5 * time.Second},
		{"You've hit your usage limit. Resets in 2m.", 2 * time.Minute},
		{"try again in 4 days 2 hours 3 minutes", 4*24*time.Hour + 2*time.Hour + 3*time.Minute},
		{"Rate limit reached. Please try again in 20 seconds.", 20 * time.Second},
		{"Retry-After: 7", 7 * time.Second},
		{"Claude AI usage limit reached|1700000600", 10 * time.Minute},
		{"exceeded retry limit, last status: 429 Too Many Requests", 0},
		{"rate limited", 0},
	}
	for _, tc := range tests {
		if got := ResetHint(tc.msg, now); got != tc.want {
			t.Errorf("ResetHint(%q) = %v, want %v", tc.msg, got, tc.want)
		}
	}
}

func TestIsUnreachable(t *testing.T) {
	for msg, want := range map[string]bool{
		"Reconnecting... waiting for network (Connection failed: error sending request)":        true,
		"API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)": true,
		"Connection error.": true,
		"stream disconnected before completion: stream closed before response.completed": false,
		"500 fake internal server error":                                                 false,
		"Reconnecting... 2/5 (stream disconnected before completion)":                    false,
	} {
		if got := IsUnreachable(msg); got != want {
			t.Errorf("IsUnreachable(%q) = %v, want %v", msg, got, want)
		}
	}
}
