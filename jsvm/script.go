package jsvm

import (
	"context"
	"encoding/json"
	"time"

	"github.com/dop251/goja"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Script is a loaded JavaScript workflow. It implements lang.Script; it is
// immutable, and any number of runs may use it at once.
type Script struct {
	src     *source
	meta    lang.Meta
	code    *goja.Program // evaluates to the body's async function
	prelude *goja.Program
	guards  *goja.Program // see guards.go
	hash    string
	// busyLimit is how long the script may compute without yielding.
	busyLimit time.Duration
	// maxNesting bounds the nesting of the values the script hands over,
	// and of the code it makes with eval or new Function.
	maxNesting int
	// calls are the agent() calls whose options the script writes out.
	calls []lang.StaticCall
	// written maps the spelled-out pattern of each regular expression
	// literal whose property escapes were spelled out (see
	// unicode_props.go) back to the pattern as the script wrote it, which
	// its source and toString() show.
	written map[string]string
}

var (
	_ lang.Script      = (*Script)(nil)
	_ lang.StaticCalls = (*Script)(nil)
)

// AgentCalls returns the agent() calls whose options the script writes
// out, for the registry to check before the script runs.
func (s *Script) AgentCalls() []lang.StaticCall { return s.calls }

// Path returns the script's file name.
func (s *Script) Path() string { return s.src.path }

// Meta returns the meta read when the script was loaded.
func (s *Script) Meta() lang.Meta { return s.meta }

// Text returns the script's source.
func (s *Script) Text() []byte { return []byte(s.src.text) }

// Hash returns the hex SHA-256 of the source. A JavaScript workflow pulls in
// no other file, so the source is all there is to hash.
func (s *Script) Hash() string { return s.hash }

// Files returns the script's own path: it depends on no other file.
func (s *Script) Files() []string { return []string{s.src.path} }

// Run executes the script against env on a fresh interpreter. See run.go.
func (s *Script) Run(ctx context.Context, env lang.Env) (json.RawMessage, error) {
	return newRun(ctx, s, env).run()
}
