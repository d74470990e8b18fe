package star

import (
	"go.starlark.net/syntax"

	"github.com/dynworkflow/dynworkflow/lang"
)

// DefaultMaxSteps bounds the Starlark steps one thread may run: the main
// function, or one branch of a parallel() or pipeline(). Orchestration code
// needs a tiny fraction of it (agents do the work); what hits the limit is
// a loop that never ends, which would otherwise hold the run's interpreter
// lock for good. A step is roughly one bytecode instruction, so the limit
// is a second or two of pure computation.
const DefaultMaxSteps = 50_000_000

// Config tunes a Host. The zero value is the default.
type Config struct {
	// MaxSteps bounds the steps of each thread; 0 means DefaultMaxSteps.
	MaxSteps uint64
	// MaxNesting bounds how deeply a script and the values it hands the
	// engine may nest; 0 means lang.DefaultMaxNesting.
	MaxNesting int
}

// Host loads Starlark workflow scripts. It implements lang.Host and is safe
// for concurrent use.
type Host struct {
	maxSteps   uint64
	maxNesting int
}

var _ lang.Host = (*Host)(nil)

// New returns a Starlark host with the default configuration.
func New() *Host { return NewWithConfig(Config{}) }

// NewWithConfig returns a Starlark host configured by c.
func NewWithConfig(c Config) *Host {
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	return &Host{maxSteps: c.MaxSteps, maxNesting: lang.MaxNestingOr(c.MaxNesting)}
}

// Language returns "starlark".
func (h *Host) Language() string { return "starlark" }

// Extensions lists the suffixes of Starlark workflow files.
func (h *Host) Extensions() []string { return []string{".workflow.star", ".star"} }

// fileOptions is the dialect: Starlark as Bazel has it, plus while loops
// (a loop-until-dry reads best as one) and the set type. Recursion stays
// off, so a function that calls itself is an error rather than a way to
// exhaust the stack; top-level code declares, and main does the work.
func fileOptions() *syntax.FileOptions {
	return &syntax.FileOptions{Set: true, While: true}
}

// Load parses src and every file it load()s, reads its meta and compiles
// it, running none of it. Every error it returns is a *lang.Error with a
// position.
func (h *Host) Load(src lang.Source) (lang.Script, error) {
	l := newLoader(fileOptions(), src.ReadFile, h.maxNesting)
	main, err := l.parse(src.Path, src.Text)
	if err != nil {
		return nil, err
	}
	meta, err := readMeta(src.Path, main)
	if err != nil {
		return nil, err
	}
	if err := checkMain(src.Path, main); err != nil {
		return nil, err
	}
	if _, err := l.compile(src.Path, src.Text, main); err != nil {
		return nil, err
	}
	return &Script{
		path:       src.Path,
		text:       src.Text,
		meta:       meta,
		files:      l.files,
		order:      l.order,
		hash:       l.hash(),
		maxSteps:   h.maxSteps,
		maxNesting: h.maxNesting,
	}, nil
}
