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
	return PrivateFile("schema.json", schema)
}

// PrivateFile writes content to a file called name in a new temporary
// directory only the current user can enter, and returns its path and a
// function that removes both.
func PrivateFile(name string, content []byte) (string, func(), error) {
	dir, err := os.MkdirTemp("", "dynworkflow-")
	if err != nil {
		return "", nil, fmt.Errorf("write %s: %w", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("write %s: %w", name, err)
	}
	return path, func() { _ = os.RemoveAll(dir) }, nil
}
