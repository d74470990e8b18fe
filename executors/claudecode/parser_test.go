package claudecode

import (
	"errors"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/proc"
)

// TestIsErrorWithSuccessSubtype is Claude's trap: an API error ends with
// subtype "success" and is_error true.
func TestIsErrorWithSuccessSubtype(t *testing.T) {
	tests := []struct {
		name   string
		status int
		errTag string
		want   executors.Class
	}{
		{"500", 500, "server_error", executors.Transient},
		{"401", 401, "authentication_failed", executors.Unavailable},
		{"not logged in", 0, "authentication_failed", executors.Unavailable},
		{"429", 429, "rate_limit", executors.RateLimited},
		{"no status", 0, "rate_limit", executors.RateLimited},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newParser(executors.Request{}, nil)
			p.Line([]byte(`{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error"}]},"error":"` + tc.errTag + `"}`))
			status := "null"
			if tc.status != 0 {
				status = itoa(tc.status)
			}
			p.Line([]byte(`{"usage":{"input_tokens":0,"output_tokens":0},"type":"result","subtype":"success","is_error":true,"result":"API Error","terminal_reason":"api_error","api_error_status":` + status + `}`))
			_, err := p.Finish(proc.Exit{Code: 1})
			var ee *executors.Error
			if !errors.As(err, &ee) || ee.Class != tc.want {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
		})
	}
}

// The reported model is the one that did the call's main work, the same
// one for the same result every time: it was picked from a map at random
// (haiku 43 times and sonnet 7 in 50 parses of one result).
func TestReportedModelIsTheMainOne(t *testing.T) {
	for _, tt := range []struct{ usage, want string }{
		{`{"claude-haiku-4":{"inputTokens":900,"outputTokens":20},"claude-sonnet-4":{"inputTokens":400,"outputTokens":800}}`, "claude-sonnet-4"},
		{`{"b":{"inputTokens":5,"outputTokens":10},"a":{"inputTokens":7,"outputTokens":10}}`, "a"},
		{`{"b":{"inputTokens":7,"outputTokens":10},"a":{"inputTokens":7,"outputTokens":10}}`, "a"},
		{`{}`, "fake-model"},
	} {
		for range 50 {
			p := newParser(executors.Request{}, nil)
			p.Line([]byte(`{"type":"system","subtype":"init","model":"fake-model"}`))
			p.Line([]byte(`{"type":"result","subtype":"success","is_error":false,"result":"ok","modelUsage":` + tt.usage + `}`))
			res, err := p.Finish(proc.Exit{})
			if err != nil || res.Model != tt.want {
				t.Fatalf("%s: model %q, %v; want %q", tt.usage, res.Model, err, tt.want)
			}
		}
	}
}
