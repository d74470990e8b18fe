package engine

import (
	"encoding/json"
)

// The functions here let another execution backend (engine/temporal) read
// and show runs as this engine does.

// Schema is a compiled JSON Schema of an agent() call.
type Schema struct{ c *compiledSchema }

// CompileSchema compiles raw, or returns nil for no schema. Its errors are
// the ones a script sees for a bad schema.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	var cache schemaCache
	c, err := cache.get(raw)
	if c == nil || err != nil {
		return nil, err
	}
	return &Schema{c}, nil
}

// CheckSchema says what is wrong with an agent() call's schema, as the
// call would: the check a script's literal schemas get when it loads
// (lang.Registry.CheckSchemasWith).
func CheckSchema(raw json.RawMessage) error {
	_, err := CompileSchema(raw)
	return err
}

// Canonical is the schema re-encoded with sorted keys, as fingerprints use it.
func (s *Schema) Canonical() []byte { return s.c.canonical }

// Validate parses an agent's answer as JSON (tolerating a code fence or
// prose around it) and checks it against the schema.
func (s *Schema) Validate(answer string) (json.RawMessage, error) { return s.c.validate(answer) }

// LessPath orders call paths as show lists them: element by element, with
// numbers compared as numbers.
func LessPath(a, b string) bool { return lessPath(a, b) }

// ExecutionEnd is how an execution ended, as Detail reports it.
type ExecutionEnd = endInfo
