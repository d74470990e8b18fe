package star

import (
	"context"
	"encoding/json"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Script is a loaded Starlark workflow: its files, compiled. It implements
// lang.Script; it is immutable, and any number of runs may use it at once.
type Script struct {
	path     string
	text     []byte
	meta     lang.Meta
	files    map[string]*file // by path: the main file and every file it loads
	order    []string         // the paths, main first, in load order
	hash     string
	maxSteps uint64
	// maxNesting bounds the nesting of the values the script hands over.
	maxNesting int
}

var (
	_ lang.Script      = (*Script)(nil)
	_ lang.StaticCalls = (*Script)(nil)
)

// AgentCalls returns the agent() calls, in every file of the script, whose
// options it writes out, for the registry to check before it runs.
func (s *Script) AgentCalls() []lang.StaticCall {
	var out []lang.StaticCall
	for _, path := range s.order {
		out = append(out, s.files[path].calls...)
	}
	return out
}

// Path returns the main file's name.
func (s *Script) Path() string { return s.path }

// Meta returns the meta read when the script was loaded.
func (s *Script) Meta() lang.Meta { return s.meta }

// Text returns the main file's source.
func (s *Script) Text() []byte { return s.text }

// Hash returns the hex SHA-256 over the main file and every file it loads.
func (s *Script) Hash() string { return s.hash }

// Files returns the main file and then every file it loads, in load order.
func (s *Script) Files() []string { return append([]string(nil), s.order...) }

// Run executes the script against env. See run.go.
func (s *Script) Run(ctx context.Context, env lang.Env) (json.RawMessage, error) {
	return newRun(ctx, s, env).run()
}
