package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// A $ref cycle that never descends into the answer is refused when the
// schema is compiled (validating against it overflowed the stack and
// killed the process); recursion through properties or items is fine.
func TestSchemaRefCycles(t *testing.T) {
	for _, schema := range []string{
		`{"$ref":"#"}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`,
		`{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`,
		`{"properties":{"x":{"$ref":"#/properties/x"}}}`,
		`{"$anchor":"top","not":{"$ref":"#top"}}`,
		`{"if":{"$ref":"#"},"then":true}`,
	} {
		var cache schemaCache
		if _, err := cache.get(json.RawMessage(schema)); err == nil || !strings.Contains(err.Error(), "leads back to itself") {
			t.Errorf("%s: get = %v, want the cycle refused", schema, err)
		}
	}
	for _, schema := range []string{
		`{"$ref":"https://example.com/s.json"}`,
		`{"$ref":"#nowhere"}`,
		`{"$ref":"#/$defs/missing"}`,
	} {
		var cache schemaCache
		if _, err := cache.get(json.RawMessage(schema)); err == nil {
			t.Errorf("%s: accepted a ref that cannot be followed", schema)
		}
	}
	tree := `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},
		"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"]}},"$ref":"#/$defs/node"}`
	var cache schemaCache
	cs, err := cache.get(json.RawMessage(tree))
	if err != nil {
		t.Fatalf("a recursive tree schema was refused: %v", err)
	}
	if _, err := cs.validate(`{"name":"a","children":[{"name":"b","children":[]}]}`); err != nil {
		t.Errorf("a valid tree was refused: %v", err)
	}
	if _, err := cs.validate(`{"name":"a","children":[{"children":[]}]}`); err == nil {
		t.Error("a tree missing a name was accepted")
	}
}

// An answer full of brackets is searched for its JSON in linear time: only
// the first maxJSONTries brackets are tried as its start (trying each of
// 400,000 took hours), so a value behind them is not found.
func TestExtractJSONIsLinear(t *testing.T) {
	answer := strings.Repeat("{[", 200_000) + ` the answer: {"ok":true}`
	if got, ok := extractJSON(answer); ok {
		t.Errorf("found %q behind 400,000 brackets", got)
	}
	if got, ok := extractJSON(strings.Repeat("[", maxJSONTries-1) + ` {"ok":true}`); !ok || got != `{"ok":true}` {
		t.Errorf("extractJSON = %q, %v; want the value within the tries", got, ok)
	}
}
