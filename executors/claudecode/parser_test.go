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
