package agentcli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// SchemaFile writes schema to a new temporary file for CLIs that take a
// schema by path, and returns the path and a function that removes it.
func SchemaFile(schema json.RawMessage) (string, func(), error) {
	dir, err := os.MkdirTemp("", "dynworkflow-schema-")
	if err != nil {
		return "", nil, fmt.Errorf("write the schema file: %w", err)
	}
	path := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(path, schema, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("write the schema file: %w", err)
	}
	return path, func() { _ = os.RemoveAll(dir) }, nil
}
