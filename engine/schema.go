package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaCache compiles each distinct schema once per runtime: a fan-out of
// a thousand agents usually shares one or two schemas.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*compiledSchema
}

type compiledSchema struct {
	canonical []byte
	schema    *jsonschema.Resolved
}

func (c *schemaCache) get(raw json.RawMessage) (*compiledSchema, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs, ok := c.m[string(raw)]; ok {
		return cs, nil
	}
	canonical, err := canonicalJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("agent(): the schema is not valid JSON: %w", err)
	}
	var doc any
	_ = json.Unmarshal(raw, &doc)
	if err := checkTypeNames(doc, ""); err != nil {
		return nil, fmt.Errorf("agent(): the schema is not a valid JSON Schema: %w", err)
	}
	if err := checkRefCycles(doc); err != nil {
		return nil, fmt.Errorf("agent(): the schema is not a valid JSON Schema: %w", err)
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		return nil, fmt.Errorf("agent(): the schema is not a valid JSON Schema: %s", oneLine(err.Error()))
	}
	resolved, err := sch.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("agent(): the schema is not a valid JSON Schema: %s", oneLine(err.Error()))
	}
	if c.m == nil {
		c.m = map[string]*compiledSchema{}
	}
	cs := &compiledSchema{canonical: canonical, schema: resolved}
	c.m[string(raw)] = cs
	return cs, nil
}

var typeNames = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "object": true, "array": true, "null": true}

// checkTypeNames rejects a misspelt "type" anywhere in a schema before any
// agent is paid to answer it: the validator would only find out when every
// answer fails.
func checkTypeNames(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if k == "type" {
				if err := checkType(sub, at); err != nil {
					return err
				}
				continue
			}
			if k == "enum" || k == "const" || k == "default" || k == "examples" {
				continue // values, not schemas
			}
			if err := checkTypeNames(sub, at+"/"+k); err != nil {
				return err
			}
		}
	case []any:
		for i, sub := range v {
			if err := checkTypeNames(sub, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkType(t any, at string) error {
	names, ok := t.([]any)
	if !ok {
		names = []any{t}
	}
	for _, n := range names {
		if s, ok := n.(string); !ok || !typeNames[s] {
			return fmt.Errorf("%s/type: %v is not a type; use string, number, integer, boolean, object, array or null", at, n)
		}
	}
	return nil
}

// validate parses an agent's answer as JSON (tolerating a code fence or
// prose around one JSON value) and checks it against the schema.
func (cs *compiledSchema) validate(answer string) (json.RawMessage, error) {
	text, ok := extractJSON(answer)
	if !ok {
		return nil, fmt.Errorf("the answer is not JSON")
	}
	var inst any
	if err := json.Unmarshal([]byte(text), &inst); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %v", err)
	}
	if err := cs.schema.Validate(inst); err != nil {
		return nil, fmt.Errorf("%s", oneLine(err.Error()))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(text)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// extractJSON finds the JSON value in an answer: the whole text, a fenced
// block, or the first balanced object or array.
func extractJSON(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if json.Valid([]byte(s)) {
		return s, true
	}
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			if body := strings.TrimSpace(rest[:j]); json.Valid([]byte(body)) {
				return body, true
			}
		}
	}
	// Each try scans to the end of the text in the worst case: a bounded
	// number of them keeps an answer of a million brackets linear.
	tries := 0
	for i, c := range s {
		if c != '{' && c != '[' {
			continue
		}
		if tries++; tries > maxJSONTries {
			break
		}
		if end := balancedEnd(s[i:]); end > 0 && json.Valid([]byte(s[i:i+end])) {
			return s[i : i+end], true
		}
	}
	return "", false
}

// maxJSONTries bounds the brackets extractJSON tries as the start of the
// JSON value in a prose answer.
const maxJSONTries = 64

// balancedEnd returns the length of the bracketed value at the start of s.
func balancedEnd(s string) int {
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}
