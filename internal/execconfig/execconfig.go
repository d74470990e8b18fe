// Package execconfig reads the executor configuration files and works out
// the effective configuration of every executor, remembering where each
// value came from, for the CLI to build its executors and for doctor to
// show them.
//
// Two files have the same format: the project's .dynworkflow/executors.json
// and the user's $XDG_CONFIG_HOME/dynworkflow/executors.json (else
// ~/.config/dynworkflow/executors.json):
//
//	{
//	  "defaultExecutor": "codex",
//	  "commands": {"aider": "aider --yes-always --message {prompt}"},
//	  "executors": {
//	    "codex": {"binary": "codex", "model": "gpt-5.5", "effort": "high",
//	              "args": ["-c", "model_verbosity=\"low\""],
//	              "env": {"CODEX_HOME": "~/.codex-work"},
//	              "permissions": "workspace-write", "timeoutMs": 900000}
//	  }
//	}
//
// Every field is optional. For each value the precedence, highest first,
// is: a command-line flag or environment override, the project file, the
// user file, the built-in default.
//
// The project file names programs to run; it comes with a cloned
// repository, and an agent can write it. It is used only when the user
// approved its exact content (package trust): until then Load leaves it
// out and says so in Config.NotAllowed. env merges by variable, args and the
// rest replace. A call's own options and the run's --model and
// --permissions rank above all of these; the engine applies them.
package execconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/command"
	"github.com/dynworkflow/dynworkflow/internal/trust"
	"github.com/dynworkflow/dynworkflow/lang"
)

// ProjectFileDoes says what the project file could make dynworkflow do,
// for the line that says it is not allowed.
const ProjectFileDoes = "it names programs for dynworkflow to run"

// ProjectFile is the project's configuration file, relative to the project.
const ProjectFile = ".dynworkflow/executors.json"

// UserFile is the user's configuration file: under $XDG_CONFIG_HOME, else
// ~/.config. It is "" when neither can be found.
func UserFile() string { return UserConfigFile("executors.json") }

// Where values come from.
const (
	SourceBuiltIn = "built-in"
	SourceProject = "project file"
	SourceUser    = "user file"
	SourceFlag    = "flag"
	SourceEnv     = "environment"
)

// File is one configuration file.
type File struct {
	// DefaultExecutor runs the calls of runs that give no --executor.
	DefaultExecutor string `json:"defaultExecutor,omitempty"`
	// Commands defines command executors: NAME: TEMPLATE.
	Commands map[string]string `json:"commands,omitempty"`
	// Executors configures executors by name, built-in or command.
	Executors map[string]Settings `json:"executors,omitempty"`
}

// Settings configure one executor; a nil field is not set.
type Settings struct {
	Binary      *string           `json:"binary,omitempty"`
	Model       *string           `json:"model,omitempty"`
	Effort      *string           `json:"effort,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Permissions *string           `json:"permissions,omitempty"`
	TimeoutMs   *int64            `json:"timeoutMs,omitempty"`
	// IdleTimeoutMs stops an attempt that shows no progress for that long;
	// 0 turns the idle timeout off.
	IdleTimeoutMs *int64 `json:"idleTimeoutMs,omitempty"`
}

// Value is one effective value and where it came from.
type Value[T any] struct {
	Value  T      `json:"value"`
	Source string `json:"source"`
}

// Executor is the effective configuration of one executor.
type Executor struct {
	Name string `json:"name"`
	// Kind is the built-in it is, or "command".
	Kind string `json:"kind"`
	// Command is a command executor's template, word by word.
	Command     *Value[[]string]             `json:"command,omitempty"`
	Binary      Value[string]                `json:"binary"`
	Model       Value[string]                `json:"model"`
	Effort      Value[string]                `json:"effort"`
	Args        Value[[]string]              `json:"args"`
	Env         map[string]Value[string]     `json:"env,omitempty"`
	Permissions Value[executors.Permissions] `json:"permissions"`
	Timeout     Value[time.Duration]         `json:"timeout"`
	// IdleTimeout is the configured idle timeout: zero leaves the built-in
	// default, negative is off.
	IdleTimeout Value[time.Duration] `json:"idleTimeout"`
	// Configured is true when a file or flag says anything about it.
	Configured bool `json:"configured"`
}

// EnvList is the executor's environment additions as KEY=VALUE, sorted.
func (e *Executor) EnvList() []string {
	keys := make([]string, 0, len(e.Env))
	for k := range e.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+e.Env[k].Value)
	}
	return out
}

// Defaults are the executor's call defaults.
func (e *Executor) Defaults() executors.Defaults {
	return executors.Defaults{Model: e.Model.Value, Effort: e.Effort.Value, Permissions: e.Permissions.Value, Timeout: e.Timeout.Value,
		IdleTimeout: e.IdleTimeout.Value}
}

// Config is the effective configuration.
type Config struct {
	// DefaultExecutor is the executor of runs that give no --executor.
	DefaultExecutor Value[string] `json:"defaultExecutor"`
	// Executors, sorted by name.
	Executors []*Executor `json:"executors"`
	// ProjectFile and UserFile are the files looked at; Read lists those
	// that exist.
	ProjectFile string   `json:"projectFile"`
	UserFile    string   `json:"userFile,omitempty"`
	Read        []string `json:"read,omitempty"`
	// NotAllowed is the project file when it was left out, for want of
	// the user's approval of its content.
	NotAllowed *trust.NotAllowedError `json:"notAllowed,omitempty"`
}

// Get returns the executor called name, or nil.
func (c *Config) Get(name string) *Executor {
	for _, e := range c.Executors {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// Overrides are what the command line and the environment say, above both
// files. (--executor is a run option: the engine's, not the files'.)
type Overrides struct {
	// Commands are the --command-executor specs, [NAME=]TEMPLATE.
	Commands []string
	// Binaries overrides binaries by executor name, from the environment
	// (DYNWORKFLOW_CODEX_BIN, ...), and names the variable that did.
	Binaries map[string]Value[string]
	// Trust decides whether the project file's content may be used;
	// nil is the user's store of approvals (trust.Default).
	Trust Checker
}

// Checker is what Load asks before it uses the project file: nil when the
// user approved content as file of project, a *trust.NotAllowedError when
// not. (*trust.Store is one.)
type Checker interface {
	Check(project, file string, content []byte, does string) error
}

// BuiltIn is one built-in executor: its name and usual binary ("" for the
// simulated executor, which runs nothing).
type BuiltIn struct {
	Name, Binary string
}

// Load reads the project's file under project and the user's file at
// userFile ("" for none) and resolves the configuration of builtIns and
// of every command executor.
func Load(project, userFile string, builtIns []BuiltIn, o Overrides) (*Config, error) {
	cfg := &Config{ProjectFile: filepath.Join(project, ProjectFile), UserFile: userFile,
		DefaultExecutor: Value[string]{Value: builtIns[0].Name, Source: SourceBuiltIn}}
	type layer struct {
		file   *File
		source string
		path   string
		base   string // relative binaries are relative to this directory
		data   []byte
	}
	var layers []layer // lowest first
	gate := o.Trust
	if gate == nil {
		gate = trust.Default()
	}
	for _, f := range []struct{ path, source, base string }{
		{userFile, SourceUser, filepath.Dir(userFile)},
		{cfg.ProjectFile, SourceProject, project},
	} {
		if f.path == "" {
			continue
		}
		data, err := os.ReadFile(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the executor configuration: %w", err)
		}
		if f.source == SourceProject {
			// The bytes checked are the bytes used: a change after this
			// read is not seen, and one before it is not approved.
			err := gate.Check(project, ProjectFile, data, ProjectFileDoes)
			var na *trust.NotAllowedError
			if errors.As(err, &na) {
				cfg.NotAllowed = na
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		file, err := decodeFile(f.path, data)
		if err != nil {
			return nil, err
		}
		cfg.Read = append(cfg.Read, f.path)
		layers = append(layers, layer{file, f.source, f.path, f.base, data})
	}

	byName := map[string]*Executor{}
	isBuiltIn := map[string]bool{}
	for _, b := range builtIns {
		byName[b.Name] = newExecutor(b.Name, b.Name, b.Binary)
		isBuiltIn[b.Name] = true
	}
	// Command executors: the user's, the project's, the flags', a later
	// one replacing an earlier one of its name.
	defineCommand := func(spec command.Spec, source string) error {
		if isBuiltIn[spec.Name] {
			return fmt.Errorf("command executor %q would replace the built-in executor of that name; pick another name", spec.Name)
		}
		e := byName[spec.Name]
		if e == nil {
			e = newExecutor(spec.Name, command.Kind, "")
			byName[spec.Name] = e
		}
		e.Command = &Value[[]string]{Value: spec.Words, Source: source}
		e.Binary = Value[string]{Value: spec.Words[0], Source: source}
		e.Configured = true
		return nil
	}
	for _, l := range layers {
		names := slices.Sorted(maps.Keys(l.file.Commands))
		for _, name := range names {
			spec, err := command.ParseSpec(name + "=" + l.file.Commands[name])
			if err == nil && spec.Name != name {
				err = fmt.Errorf("%q is not a command executor name: use letters, digits, '-' and '_'", name)
			}
			if err == nil {
				err = defineCommand(spec, l.source)
			}
			if err != nil {
				return nil, positioned(l.path, l.data, `"`+name+`"`, err)
			}
		}
	}
	for _, s := range o.Commands {
		spec, err := command.ParseSpec(s)
		if err == nil {
			err = defineCommand(spec, SourceFlag+" --command-executor")
		}
		if err != nil {
			return nil, fmt.Errorf("--command-executor: %w", err)
		}
	}

	// Settings, lowest layer first so that higher ones overwrite.
	for _, l := range layers {
		if d := l.file.DefaultExecutor; d != "" {
			if byName[d] == nil {
				return nil, positioned(l.path, l.data, `"defaultExecutor"`,
					fmt.Errorf("defaultExecutor %q is no executor; the executors are %s", d, strings.Join(slices.Sorted(maps.Keys(byName)), ", ")))
			}
			cfg.DefaultExecutor = Value[string]{Value: d, Source: l.source}
		}
		for _, name := range slices.Sorted(maps.Keys(l.file.Executors)) {
			e := byName[name]
			if e == nil {
				return nil, positioned(l.path, l.data, `"`+name+`"`,
					fmt.Errorf("executors.%s: no such executor; the executors are %s (define a new one under \"commands\")", name, strings.Join(slices.Sorted(maps.Keys(byName)), ", ")))
			}
			if err := e.apply(l.file.Executors[name], l.source, l.base); err != nil {
				return nil, positioned(l.path, l.data, `"`+name+`"`, fmt.Errorf("executors.%s: %w", name, err))
			}
		}
	}
	for name, v := range o.Binaries {
		if e := byName[name]; e != nil && v.Value != "" {
			e.Binary, e.Configured = v, true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		cfg.Executors = append(cfg.Executors, byName[name])
	}
	return cfg, nil
}

// BuiltInOnly is the configuration of builtIns with nothing configured:
// what stands in when the files cannot be read.
func BuiltInOnly(builtIns []BuiltIn) *Config {
	cfg := &Config{DefaultExecutor: Value[string]{Value: builtIns[0].Name, Source: SourceBuiltIn}}
	for _, b := range builtIns {
		cfg.Executors = append(cfg.Executors, newExecutor(b.Name, b.Name, b.Binary))
	}
	sort.Slice(cfg.Executors, func(i, j int) bool { return cfg.Executors[i].Name < cfg.Executors[j].Name })
	return cfg
}

func newExecutor(name, kind, binary string) *Executor {
	return &Executor{Name: name, Kind: kind,
		Binary:      Value[string]{Value: binary, Source: SourceBuiltIn},
		Model:       Value[string]{Source: SourceBuiltIn},
		Effort:      Value[string]{Source: SourceBuiltIn},
		Args:        Value[[]string]{Source: SourceBuiltIn},
		Permissions: Value[executors.Permissions]{Value: executors.WorkspaceWrite, Source: SourceBuiltIn},
		Timeout:     Value[time.Duration]{Source: SourceBuiltIn},
		IdleTimeout: Value[time.Duration]{Source: SourceBuiltIn},
	}
}

// efforts are the values agent({effort}) accepts.
var efforts = []string{"low", "medium", "high", "xhigh", "max"}

// apply lays settings from source over e.
func (e *Executor) apply(s Settings, source, base string) error {
	runsNothing := e.Kind == "simulate"
	switch {
	case runsNothing && (s.Binary != nil || s.Args != nil || s.Env != nil):
		return errors.New("the simulated executor runs no program: only model, effort, permissions and timeoutMs apply")
	case e.Kind == command.Kind && (s.Binary != nil || s.Args != nil):
		return errors.New("a command executor's program and arguments are its template, under \"commands\"")
	}
	if s.Binary != nil {
		b := expandHome(*s.Binary)
		if b == "" {
			return errors.New("binary is empty")
		}
		if strings.ContainsRune(b, filepath.Separator) && !filepath.IsAbs(b) {
			b = filepath.Join(base, b)
		}
		e.Binary = Value[string]{Value: b, Source: source}
	}
	if s.Model != nil {
		e.Model = Value[string]{Value: *s.Model, Source: source}
	}
	if s.Effort != nil {
		if *s.Effort != "" && !slices.Contains(efforts, *s.Effort) {
			return fmt.Errorf("effort must be one of %s, not %q", strings.Join(efforts, ", "), *s.Effort)
		}
		e.Effort = Value[string]{Value: *s.Effort, Source: source}
	}
	if s.Args != nil {
		e.Args = Value[[]string]{Value: s.Args, Source: source}
	}
	for k, v := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("env: %q is not a variable name", k)
		}
		if e.Env == nil {
			e.Env = map[string]Value[string]{}
		}
		e.Env[k] = Value[string]{Value: expandHome(v), Source: source}
	}
	if s.Permissions != nil {
		p, err := executors.ParsePermissions(*s.Permissions)
		if err != nil {
			return err
		}
		e.Permissions = Value[executors.Permissions]{Value: p.Or(executors.WorkspaceWrite), Source: source}
	}
	if s.TimeoutMs != nil {
		if *s.TimeoutMs < 0 || *s.TimeoutMs > lang.MaxTimeoutMs {
			return fmt.Errorf("timeoutMs must be a number of milliseconds from 1 to %d (30 days), or 0 for none, not %d", int64(lang.MaxTimeoutMs), *s.TimeoutMs)
		}
		e.Timeout = Value[time.Duration]{Value: time.Duration(*s.TimeoutMs) * time.Millisecond, Source: source}
	}
	if s.IdleTimeoutMs != nil {
		ms := *s.IdleTimeoutMs
		if ms < 0 || ms > lang.MaxTimeoutMs {
			return fmt.Errorf("idleTimeoutMs must be a number of milliseconds from 1 to %d (30 days), or 0 to turn the idle timeout off, not %d", int64(lang.MaxTimeoutMs), ms)
		}
		d := time.Duration(ms) * time.Millisecond
		if ms == 0 {
			d = -1 // off
		}
		e.IdleTimeout = Value[time.Duration]{Value: d, Source: source}
	}
	e.Configured = true
	return nil
}

// decodeFile decodes one file's content.
func decodeFile(path string, data []byte) (*File, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		offset := dec.InputOffset()
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			offset = se.Offset
		case errors.As(err, &te):
			offset = te.Offset
		}
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			// The decoder is past the value by now: find the key itself.
			if i := bytes.Index(data, []byte(field)); i >= 0 {
				offset = int64(i)
			}
		}
		line, col := lineCol(data, offset)
		return nil, fmt.Errorf("%s:%d:%d: %v; the file holds {\"defaultExecutor\", \"commands\", \"executors\"} (see the README, \"Using real agents\")",
			path, line, col, strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		line, col := lineCol(data, dec.InputOffset())
		return nil, fmt.Errorf("%s:%d:%d: more than one JSON value", path, line, col)
	}
	return &f, nil
}

// positioned names the file and the line of the first occurrence of key.
func positioned(path string, data []byte, key string, err error) error {
	line := 1
	if i := bytes.Index(data, []byte(key)); i >= 0 {
		line, _ = lineCol(data, int64(i))
	}
	return fmt.Errorf("%s:%d: %w", path, line, err)
}

func lineCol(data []byte, offset int64) (int, int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// expandHome expands a leading ~/ to the home directory.
func expandHome(s string) string {
	if rest, ok := strings.CutPrefix(s, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return s
}
