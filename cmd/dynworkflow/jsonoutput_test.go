package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
)

// --json is read by scripts and jq alike: encodeJSON, on the JSON v2
// encoder, must write what encoding/json's indenting Encoder wrote, byte
// for byte. The one difference: invalid UTF-8 in a string becomes U+FFFD
// itself, where encoding/json wrote its escape, \ufffd; the JSON reads the
// same.
func TestJSONOutputIsEncodingJSONs(t *testing.T) {
	at := time.Date(2026, 12, 2, 8, 0, 0, 123456789, time.UTC)
	type tagged struct {
		Name    string            `json:"name"`
		Omitted string            `json:"omitted,omitempty"`
		Nil     []string          `json:"nil"`
		Empty   []string          `json:"empty"`
		NilMap  map[string]int    `json:"nilMap"`
		Map     map[string]int    `json:"map"`
		Raw     json.RawMessage   `json:"raw"`
		At      time.Time         `json:"at"`
		Ptr     *int              `json:"ptr"`
		Any     any               `json:"any"`
		Nested  map[string][]byte `json:"nested"`
	}
	tests := []struct {
		name string
		v    any
		// escapes is whether only the escaping of U+FFFD may differ.
		escapes bool
	}{
		{"html and control characters", map[string]string{"s": "<tool_use_error>a & b</tool_use_error>\u2028\t\x01"}, false},
		{"invalid UTF-8", "bad \xff byte", true},
		{"numbers", []any{0, -1, 1.5, 1e21, 1e-7, math.MaxInt64, float32(0.1), 123456789.0}, false},
		{"struct tags, nil and empty", tagged{Name: "x", Empty: []string{}, Map: map[string]int{"b": 2, "a": 1}, Raw: json.RawMessage(`{"k": [1, 2]}`), At: at, Any: []any{nil, true}, Nested: map[string][]byte{"bytes": []byte("hi")}}, false},
		{"empty values", []any{map[string]any{}, []any{}, nil, ""}, false},
		{"a run's summary", engine.CallDetail{Path: "p/0", Label: "<label>", Prompt: "say \"hi\"", Usage: &executors.Usage{InputTokens: 10, OutputTokens: 2}, Result: json.RawMessage(`"hi"`), StartedAt: at}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			if err := enc.Encode(tc.v); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := encodeJSON(&got, tc.v); err != nil {
				t.Fatal(err)
			}
			wantText := want.String()
			if tc.escapes {
				wantText = strings.ReplaceAll(wantText, `\ufffd`, "\ufffd")
			}
			if got.String() != wantText {
				t.Errorf("encodeJSON wrote\n%s\nencoding/json wrote\n%s", got.String(), want.String())
			}
		})
	}
}
