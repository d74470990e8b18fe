package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// Events carry prompts and results whole when they are small, and a
// bounded start of them, flagged, when they are not.
func TestCallPayloadBoundsPromptAndResult(t *testing.T) {
	short := CallPayload{Path: "/agent.0"}.withPrompt("Review it").withResult(json.RawMessage(`{"ok":true}`))
	if short.Prompt != "Review it" || string(short.Result) != `{"ok":true}` || short.Truncated || short.ResultPreview != "" {
		t.Errorf("short payload %+v", short)
	}
	long := strings.Repeat("é", eventTextMax) // two bytes each
	p := CallPayload{}.withPrompt(long)
	if !p.Truncated || len(p.Prompt) > eventTextMax || !strings.HasPrefix(long, p.Prompt) || !json.Valid([]byte(`"`+p.Prompt+`"`)) {
		t.Errorf("long prompt cut to %d bytes, truncated %v", len(p.Prompt), p.Truncated)
	}
	text, _ := json.Marshal(long)
	r := CallPayload{}.withResult(text)
	if !r.Truncated || r.Result != nil || !strings.HasPrefix(long, r.ResultPreview) || len(r.ResultPreview) == 0 {
		t.Errorf("long result: %d bytes of result, preview %d bytes, truncated %v", len(r.Result), len(r.ResultPreview), r.Truncated)
	}
	obj, _ := json.Marshal(map[string]string{"text": long})
	if o := (CallPayload{}).withResult(obj); !o.Truncated || !strings.HasPrefix(string(obj), o.ResultPreview) {
		t.Errorf("long object result: preview %.40q", o.ResultPreview)
	}
}
