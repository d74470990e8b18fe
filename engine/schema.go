package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Schemas are compiled and answers validated by santhosh-tekuri/jsonschema
// (drafts 4 to 2020-12, the whole JSON-Schema-Test-Suite): its compiler
// checks a schema against its draft's metaschema, so a mistake anywhere in
// it is found before an agent is paid, and its errors name the JSON
// pointer of what failed and never print a Go value.

// schemaCache compiles each distinct schema once per runtime: a fan-out of
// a thousand agents usually shares one or two schemas.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*compiledSchema
	// maxNesting bounds the nesting of the answers its schemas validate;
	// 0 means lang.DefaultMaxNesting.
	maxNesting int
}

type compiledSchema struct {
	canonical  []byte
	schema     *jsonschema.Schema
	maxNesting int
}

// schemaURL names an agent's schema in the validator's errors.
const schemaURL = "agent-schema.json"

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
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("agent(): the schema is not valid JSON: %w", err)
	}
	if err := checkSchema(doc, ""); err != nil {
		return nil, fmt.Errorf("agent(): the schema is not a valid JSON Schema: %w", err)
	}
	if err := checkRefCycles(doc); err != nil {
		return nil, fmt.Errorf("agent(): the schema is not a valid JSON Schema: %w", err)
	}
	compiler := jsonschema.NewCompiler()
	// A $ref to another document is refused: a schema that read files or
	// URLs would change what a resumed run validates against.
	compiler.UseLoader(jsonschema.SchemeURLLoader{})
	if err := compiler.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("agent(): the schema is not a valid JSON Schema: %s", oneLine(err.Error()))
	}
	sch, err := compiler.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("agent(): the schema is not a valid JSON Schema: %s", compileMessage(err))
	}
	if c.m == nil {
		c.m = map[string]*compiledSchema{}
	}
	cs := &compiledSchema{canonical: canonical, schema: sch, maxNesting: c.maxNesting}
	c.m[string(raw)] = cs
	return cs, nil
}

var typeNames = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// The keywords whose values are schemas, by the shape they hold them in.
// Every other keyword's value is data, however it is spelt: enum, const,
// default and examples hold instances, required holds property names, and
// a property called "type" or "default" is just a property.
var (
	schemaKeywords = []string{"items", "additionalItems", "additionalProperties", "not", "if", "then", "else",
		"contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaMapKeywords   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaArrayKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
)

// checkSchema walks the schema positions of a schema (at is its JSON
// pointer) and rejects a misspelt type wherever one is, with a message
// that says what the types are: the metaschema check that follows would
// only say that a long anyOf failed.
func checkSchema(v any, at string) error {
	sch, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); isBool {
			return nil
		}
		return fmt.Errorf("%s: a schema must be an object or a boolean, not %s", pointerOrRoot(at), jsonOf(v))
	}
	for _, k := range sortedKeys(sch) {
		sub, where := sch[k], at+"/"+escapePointer(k)
		switch {
		case k == "type":
			if err := checkType(sub, where); err != nil {
				return err
			}
		case slices.Contains(schemaKeywords, k):
			if items, isList := sub.([]any); isList && (k == "items" || k == "additionalItems") {
				// items as a list: the tuple form of drafts 4 to 2019-09.
				if err := checkSchemaList(items, where); err != nil {
					return err
				}
				continue
			}
			if err := checkSchema(sub, where); err != nil {
				return err
			}
		case slices.Contains(schemaMapKeywords, k):
			m, isMap := sub.(map[string]any)
			if !isMap {
				return fmt.Errorf("%s: %s must be an object whose values are schemas, not %s", where, k, jsonOf(sub))
			}
			for _, name := range sortedKeys(m) {
				if err := checkSchema(m[name], where+"/"+escapePointer(name)); err != nil {
					return err
				}
			}
		case slices.Contains(schemaArrayKeywords, k):
			list, isList := sub.([]any)
			if !isList {
				return fmt.Errorf("%s: %s must be a list of schemas, not %s", where, k, jsonOf(sub))
			}
			if err := checkSchemaList(list, where); err != nil {
				return err
			}
		case k == "dependencies":
			// Draft 7: each value is a schema or a list of property names.
			if m, isMap := sub.(map[string]any); isMap {
				for _, name := range sortedKeys(m) {
					if _, names := m[name].([]any); !names {
						if err := checkSchema(m[name], where+"/"+escapePointer(name)); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

func checkSchemaList(list []any, at string) error {
	for i, sub := range list {
		if err := checkSchema(sub, fmt.Sprintf("%s/%d", at, i)); err != nil {
			return err
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
		if s, ok := n.(string); !ok || !slices.Contains(typeNames, s) {
			return fmt.Errorf("%s: %s is not a type; use %s or %s", at, jsonOf(n),
				strings.Join(typeNames[:len(typeNames)-1], ", "), typeNames[len(typeNames)-1])
		}
	}
	return nil
}

// pointerOrRoot is a JSON pointer for a message: "" is the whole schema.
func pointerOrRoot(at string) string {
	if at == "" {
		return "the schema"
	}
	return at
}

// escapePointer escapes a property name for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// jsonOf renders a decoded JSON value as JSON, for messages.
func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "an unprintable value"
	}
	return clipRunes(string(b), 80)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// validate parses an agent's answer as JSON (tolerating a code fence or
// prose around one JSON value) and checks it against the schema.
func (cs *compiledSchema) validate(answer string) (json.RawMessage, error) {
	text, ok := extractJSON(answer)
	if !ok {
		return nil, fmt.Errorf("the answer is not JSON")
	}
	// An agent's answer is journaled, replayed into the script and folded
	// by every list: deeper than the limit, one of them would refuse it.
	if limit := lang.MaxNestingOr(cs.maxNesting); lang.JSONNesting([]byte(text), limit) > limit {
		return nil, fmt.Errorf("the answer nests more than %d levels deep; answer with flatter JSON", limit)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %v", err)
	}
	if err := cs.schema.Validate(inst); err != nil {
		return nil, errors.New(validationMessage(err))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(text)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var printer = message.NewPrinter(language.English)

// validationMessage lists what an answer got wrong, one "at <pointer>:
// <why>" per failed leaf, on one line: it goes into the repair prompt and
// into the error the script sees.
func validationMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return oneLine(err.Error())
	}
	var parts []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := "/" + strings.Join(mapStrings(e.InstanceLocation, escapePointer), "/")
			parts = append(parts, "at "+at+": "+kindMessage(e.ErrorKind))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return oneLine(strings.Join(parts, "; "))
}

// kindMessage says what one keyword found wrong. The validator says only
// "'enum' failed" when the allowed values are objects or lists; the model
// repairing its answer needs them, so they are given as JSON.
func kindMessage(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, v := range k.Want {
			want[i] = jsonOf(v)
		}
		if len(want) == 1 {
			return "value must be " + want[0]
		}
		return "value must be one of " + strings.Join(want, ", ")
	case *kind.Const:
		return "value must be " + jsonOf(k.Want)
	}
	return k.LocalizedString(printer)
}

// compileMessage says why a schema does not compile, without the
// validator's name for the document.
func compileMessage(err error) string {
	var se *jsonschema.SchemaValidationError
	if errors.As(err, &se) {
		return validationMessage(se.Err)
	}
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) {
		return fmt.Sprintf("$ref %s points outside the schema; put what it names under $defs and refer to it as #/$defs/NAME", le.URL)
	}
	return oneLine(strings.ReplaceAll(err.Error(), "file:///", ""))
}

func mapStrings(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
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

// canonicalJSON re-encodes v with sorted object keys, so two spellings of
// the same schema give the same fingerprint.
func canonicalJSON(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}
