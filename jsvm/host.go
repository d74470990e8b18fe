package jsvm

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Host loads JavaScript workflow scripts. It implements lang.Host and is
// safe for concurrent use.
type Host struct {
	// programs are compiled when the first script is loaded: a command
	// that opens the runtime only to list or show runs never needs them.
	programs   func() hostPrograms
	busyLimit  time.Duration
	maxNesting int
}

// hostPrograms are the host's own scripts, run in every script's VM.
type hostPrograms struct{ prelude, guards *goja.Program }

var _ lang.Host = (*Host)(nil)

// Config tunes a Host. The zero value is the default.
type Config struct {
	// BusyLimit stops a script that computes that long without yielding to
	// the engine; 0 means DefaultBusyLimit.
	BusyLimit time.Duration
	// MaxNesting bounds how deeply a script and the values it hands the
	// engine may nest; 0 means lang.DefaultMaxNesting.
	MaxNesting int
}

// New returns a JavaScript host with the default configuration.
func New() *Host { return NewWithConfig(Config{}) }

// NewWithConfig returns a JavaScript host configured by c.
func NewWithConfig(c Config) *Host {
	if c.BusyLimit <= 0 {
		c.BusyLimit = DefaultBusyLimit
	}
	return &Host{
		programs: sync.OnceValue(func() hostPrograms {
			return hostPrograms{
				prelude: goja.MustCompile("jsvm-prelude.js", preludeSource+regexpSource+intlSource, true),
				guards:  goja.MustCompile("jsvm-guards.js", guardsSource, true),
			}
		}),
		busyLimit: c.BusyLimit, maxNesting: lang.MaxNestingOr(c.MaxNesting),
	}
}

// Language returns "javascript".
func (h *Host) Language() string { return "javascript" }

// Extensions lists the suffixes of JavaScript workflow files.
func (h *Host) Extensions() []string { return []string{".workflow.js", ".js", ".mjs"} }

// Load parses src, reads its meta and compiles it, running none of it.
// Every error it returns is a *lang.Error with a position.
func (h *Host) Load(src lang.Source) (lang.Script, error) {
	s := newSource(src.Path, string(src.Text))
	if err := s.checkText(); err != nil {
		return nil, err
	}
	if off := sourceNesting(s.text, h.maxNesting); off >= 0 {
		return nil, s.nestingError(off, h.maxNesting)
	}
	blank := findMetaExport(s.text)
	prog, body, err := parse(s, blank)
	if err != nil {
		return nil, err
	}
	obj, err := metaLiteral(s, body, blank >= 0)
	if err != nil {
		return nil, err
	}
	meta, err := readMeta(s, obj)
	if err != nil {
		return nil, err
	}
	written, err := checkForbidden(s, prog, obj)
	if err != nil {
		return nil, err
	}
	calls := agentCalls(s, prog, body, obj)
	noteThrows(prog, obj)
	readArgumentsFirst(prog)
	// Sloppy mode, as in the node:vm context Claude Code runs scripts in.
	code, err := goja.CompileAST(prog, false)
	if err != nil {
		return nil, compileError(s, err)
	}
	sum := sha256.Sum256(src.Text)
	programs := h.programs()
	return &Script{
		src:        s,
		meta:       meta,
		code:       code,
		prelude:    programs.prelude,
		guards:     programs.guards,
		hash:       hex.EncodeToString(sum[:]),
		busyLimit:  h.busyLimit,
		maxNesting: h.maxNesting,
		calls:      calls,
		written:    written,
	}, nil
}
