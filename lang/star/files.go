package star

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/dynworkflow/dynworkflow/lang"
)

// A script is its main file and every file it load()s, transitively. All of
// them are read, parsed and compiled when the script is loaded, so a
// missing or broken helper stops the script before anything runs, and the
// script's hash covers them: edit-and-resume sees an edited helper.

// A file is one compiled Starlark file of a script.
type file struct {
	path string
	text []byte
	prog *starlark.Program
	// loads maps each module string of the file's load statements to the
	// path of the file it names.
	loads map[string]string
	// calls are its agent() calls whose options it writes out.
	calls []lang.StaticCall
}

// A loader reads, parses and compiles a script's files.
type loader struct {
	opts    *syntax.FileOptions
	files   map[string]*file
	order   []string        // paths in the order they were first loaded, main first
	loading map[string]bool // files being compiled, to catch load cycles
	read    func(path string) ([]byte, error)
	// maxNesting bounds how deeply a file's brackets may nest.
	maxNesting int
}

// newLoader returns a loader that reads the files a script loads with
// read, or from disk when read is nil.
func newLoader(opts *syntax.FileOptions, read func(path string) ([]byte, error), maxNesting int) *loader {
	if read == nil {
		read = os.ReadFile
	}
	return &loader{opts: opts, files: map[string]*file{}, loading: map[string]bool{}, read: read,
		maxNesting: lang.MaxNestingOr(maxNesting)}
}

// parse parses one file.
func (l *loader) parse(path string, text []byte) (*syntax.File, error) {
	if off := sourceNesting(text, l.maxNesting); off >= 0 {
		return nil, nestingError(path, text, off, l.maxNesting)
	}
	f, err := l.opts.Parse(path, text, 0)
	if err != nil {
		return nil, staticError(path, err)
	}
	return f, nil
}

// compile compiles a parsed file after the files it loads, and records it.
func (l *loader) compile(path string, text []byte, f *syntax.File) (*file, error) {
	l.loading[path] = true
	defer delete(l.loading, path)
	l.order = append(l.order, path)
	out := &file{path: path, text: text, loads: map[string]string{}}
	l.files[path] = out
	for _, stmt := range f.Stmts {
		load, ok := stmt.(*syntax.LoadStmt)
		if !ok {
			continue
		}
		target, err := l.load(path, load)
		if err != nil {
			return nil, err
		}
		out.loads[load.ModuleName()] = target
	}
	prog, err := starlark.FileProgram(f, isPredeclared)
	if err != nil {
		return nil, staticError(path, err)
	}
	out.prog = prog
	// The resolver has bound every name by now: agentCalls needs that.
	out.calls = agentCalls(path, f)
	return out, nil
}

// load reads and compiles the file a load statement names, once per script.
func (l *loader) load(from string, stmt *syntax.LoadStmt) (string, error) {
	module := stmt.ModuleName()
	at := stmt.Module.TokenPos
	fail := func(hint, format string, args ...any) error {
		return lang.Errorf(from, int(at.Line), int(at.Col), hint, format, args...)
	}
	if !strings.HasSuffix(module, ".star") {
		return "", fail(`name a helper file such as load("lib/helpers.star", "fn")`, "load(%q): load() takes the path of a .star file", module)
	}
	path := module
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(from), module)
	}
	if l.loading[path] {
		return "", fail("move what both files need into a third one", "load(%q): a load cycle: %s loads itself through this file", module, path)
	}
	if _, done := l.files[path]; done {
		return path, nil
	}
	text, err := l.read(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fail("load() paths are relative to the file that loads them", "load(%q): no such file %s", module, path)
		}
		return "", fail("", "load(%q): %v", module, err)
	}
	f, err := l.parse(path, text)
	if err != nil {
		return "", err
	}
	if _, err := l.compile(path, text, f); err != nil {
		return "", err
	}
	return path, nil
}

// hash is the hex SHA-256 of the script. A script without load()s hashes
// as its text alone, as a JavaScript script does; each loaded file adds its
// path (relative to the main file) and its content.
func (l *loader) hash() string {
	h := sha256.New()
	main := l.order[0]
	h.Write(l.files[main].text)
	for _, path := range l.order[1:] {
		rel, err := filepath.Rel(filepath.Dir(main), path)
		if err != nil {
			rel = path
		}
		text := l.files[path].text
		h.Write([]byte("\x00load " + filepath.ToSlash(rel) + " " + strconv.Itoa(len(text)) + "\x00"))
		h.Write(text)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// staticError turns a parse or resolve error into a *lang.Error at its
// position.
func staticError(path string, err error) error {
	var se syntax.Error
	if errors.As(err, &se) && se.Msg == "excessive nesting" {
		return excessiveNesting(path, se.Pos)
	}
	if errors.As(err, &se) {
		return positioned(path, se.Pos, se.Msg, syntaxHint(se.Msg))
	}
	var list resolve.ErrorList
	if errors.As(err, &list) {
		e := list[0]
		return positioned(path, e.Pos, e.Msg, resolveHint(e.Msg))
	}
	return &lang.Error{File: path, Message: err.Error(), Static: true}
}

func positioned(path string, pos syntax.Position, msg, hint string) *lang.Error {
	if pos.IsValid() {
		path = pos.Filename()
	}
	return lang.Errorf(path, int(pos.Line), int(pos.Col), hint, "%s", msg)
}

func syntaxHint(msg string) string {
	if strings.Contains(msg, "unexpected newline in string") || strings.Contains(msg, "unexpected EOF in string") {
		return "check for an unterminated string"
	}
	return ""
}

func resolveHint(msg string) string {
	switch {
	case strings.HasPrefix(msg, "undefined:"):
		return "the builtins are agent, parallel, pipeline, workflow, checkpoint, phase, log, budget, cwd and json; load() anything else"
	case strings.Contains(msg, "not within a function"):
		return "put the work in def main(args):"
	}
	return ""
}

// isPredeclared reports whether name is one of the builtins every file of
// a workflow sees (see builtins.go).
func isPredeclared(name string) bool {
	switch name {
	case "agent", "parallel", "pipeline", "workflow", "checkpoint", "phase", "log", "budget", "cwd", "json", "str", "repr", "print":
		return true
	}
	return false
}
