package pi

import (
	"errors"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/proc"
)

// TestExitZeroWithError is Pi's trap: json mode exits 0 when the model
// call failed; the last assistant message's stopReason says so.
func TestExitZeroWithError(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		class executors.Class
		text  string
	}{
		{"500", []string{`{"type":"message_end","message":{"role":"assistant","content":[],"usage":{"input":0,"output":0},"stopReason":"error","errorMessage":"500 fake internal server error"}}`, `{"type":"agent_end","messages":[]}`}, executors.Transient, ""},
		{"401", []string{`{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"401 fake invalid api key"}}`}, executors.Unavailable, ""},
		{"400", []string{`{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"400 bad request: messages too long"}}`}, executors.Terminal, ""},
		{"ok", []string{`{"type":"message_update","assistantMessageEvent":{}}`, `{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input":8,"output":7,"cacheRead":3},"stopReason":"stop"}}`, `{"type":"agent_end"}`}, 0, "hi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newParser(executors.Request{}, nil)
			for _, l := range tc.lines {
				p.Line([]byte(l))
			}
			res, err := p.Finish(proc.Exit{Code: 0})
			if tc.text != "" {
				if err != nil || res.Text != tc.text || res.Usage != (executors.Usage{InputTokens: 11, CachedInputTokens: 3, OutputTokens: 7}) {
					t.Fatalf("got %+v, %v", res, err)
				}
				return
			}
			var ee *executors.Error
			if !errors.As(err, &ee) || ee.Class != tc.class {
				t.Fatalf("err = %v, want %s", err, tc.class)
			}
		})
	}
}
