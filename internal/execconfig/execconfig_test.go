package execconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/internal/trust"
)

// allowAll approves every project file.
type allowAll struct{}

func (allowAll) Check(string, string, []byte, string) error { return nil }

// TestProjectFileNeedsApproval: the project file is left out until the
// user approves its content, and again once it changes; the user's file
// and the flags apply all along.
func TestProjectFileNeedsApproval(t *testing.T) {
	user := `{"executors": {"codex": {"model": "user-model"}}}`
	project := `{"defaultExecutor": "helper", "commands": {"helper": "./tools/helper.sh {prompt}"},
  "executors": {"codex": {"binary": "./tools/codex", "model": "project-model"}, "pi": {"binary": "sh", "args": ["-c", "id"]}}}`
	dir, uf := setup(t, user, project)
	store := trust.At(t.TempDir())
	load := func() *Config {
		t.Helper()
		c, err := Load(dir, uf, builtIns, Overrides{Trust: store, Commands: []string{"mine=tool {prompt}"}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := load()
	if c.NotAllowed == nil || c.NotAllowed.Changed || !strings.Contains(c.NotAllowed.Error(), "dynworkflow allow") {
		t.Fatalf("NotAllowed = %v, want the new project file refused with the command that allows it", c.NotAllowed)
	}
	if c.Get("helper") != nil || c.DefaultExecutor.Value != "simulate" {
		t.Errorf("the project file's command executor or default executor is in use: %+v", c.DefaultExecutor)
	}
	want(t, c.Get("codex").Binary, "codex", SourceBuiltIn)
	want(t, c.Get("codex").Model, "user-model", SourceUser)
	want(t, c.Get("pi").Args, nil, SourceBuiltIn)
	if c.Get("mine") == nil {
		t.Error("the flag's command executor is gone")
	}
	data, err := os.ReadFile(filepath.Join(dir, ProjectFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Allow(dir, ProjectFile, data); err != nil {
		t.Fatal(err)
	}
	c = load()
	if c.NotAllowed != nil || c.DefaultExecutor.Value != "helper" {
		t.Fatalf("the approved file is not used: %v, %+v", c.NotAllowed, c.DefaultExecutor)
	}
	want(t, c.Get("codex").Binary, filepath.Join(dir, "tools", "codex"), SourceProject)
	// An agent (or a git pull) changes one byte.
	if err := os.WriteFile(filepath.Join(dir, ProjectFile), append(data, ' '), 0o600); err != nil {
		t.Fatal(err)
	}
	c = load()
	if c.NotAllowed == nil || !c.NotAllowed.Changed || c.Get("helper") != nil {
		t.Fatalf("a changed file is still used: %v", c.NotAllowed)
	}
}

var builtIns = []BuiltIn{{"simulate", ""}, {"codex", "codex"}, {"claude-code", "claude"}, {"pi", "pi"}}

// setup writes the user file and the project file (each "" for none).
func setup(t *testing.T, user, project string) (dir, userFile string) {
	t.Helper()
	dir = t.TempDir()
	userFile = filepath.Join(t.TempDir(), "dynworkflow", "executors.json")
	for path, text := range map[string]string{userFile: user, filepath.Join(dir, ProjectFile): project} {
		if text == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, userFile
}

// TestPrecedence: flag over project file over user file over built-in,
// value by value, each with its source.
func TestPrecedence(t *testing.T) {
	user := `{"defaultExecutor": "pi", "commands": {"mine": "tool --user {prompt}"},
  "executors": {"codex": {"model": "user-model", "effort": "low", "env": {"A": "user", "B": "user"}, "timeoutMs": 1000, "permissions": "read-only"}}}`
	project := `{"defaultExecutor": "codex",
  "executors": {"codex": {"model": "project-model", "env": {"B": "project"}, "args": ["-c", "x=1"]}}}`
	tests := []struct {
		name, user, project string
		o                   Overrides
		check               func(t *testing.T, c *Config)
	}{
		{name: "built-in", check: func(t *testing.T, c *Config) {
			want(t, c.DefaultExecutor, "simulate", SourceBuiltIn)
			x := c.Get("codex")
			want(t, x.Binary, "codex", SourceBuiltIn)
			want(t, x.Permissions, executors.WorkspaceWrite, SourceBuiltIn)
			if x.Configured {
				t.Error("codex is configured by nothing")
			}
		}},
		{name: "user file", user: user, check: func(t *testing.T, c *Config) {
			want(t, c.DefaultExecutor, "pi", SourceUser)
			x := c.Get("codex")
			want(t, x.Model, "user-model", SourceUser)
			want(t, x.Permissions, executors.ReadOnly, SourceUser)
			want(t, x.Timeout, time.Second, SourceUser)
			want(t, *c.Get("mine").Command, []string{"tool", "--user", "{prompt}"}, SourceUser)
		}},
		{name: "project over user", user: user, project: project, check: func(t *testing.T, c *Config) {
			want(t, c.DefaultExecutor, "codex", SourceProject)
			x := c.Get("codex")
			want(t, x.Model, "project-model", SourceProject)
			want(t, x.Effort, "low", SourceUser)
			want(t, x.Env["A"], "user", SourceUser)
			want(t, x.Env["B"], "project", SourceProject)
			want(t, x.Args, []string{"-c", "x=1"}, SourceProject)
			if got := strings.Join(x.EnvList(), " "); got != "A=user B=project" {
				t.Errorf("env %s", got)
			}
		}},
		{name: "command line and environment over files", user: user, project: project,
			o: Overrides{Commands: []string{"mine=tool --flag {prompt}"},
				Binaries: map[string]Value[string]{"codex": {Value: "/opt/codex", Source: SourceEnv + " DYNWORKFLOW_CODEX_BIN"}}},
			check: func(t *testing.T, c *Config) {
				want(t, c.Get("codex").Binary, "/opt/codex", SourceEnv+" DYNWORKFLOW_CODEX_BIN")
				want(t, *c.Get("mine").Command, []string{"tool", "--flag", "{prompt}"}, SourceFlag+" --command-executor")
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, uf := setup(t, tc.user, tc.project)
			tc.o.Trust = allowAll{}
			c, err := Load(dir, uf, builtIns, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func want[T any](t *testing.T, got Value[T], value T, source string) {
	t.Helper()
	if g, w := fmtValue(got.Value), fmtValue(value); g != w || got.Source != source {
		t.Errorf("got %s from %s, want %s from %s", g, got.Source, w, source)
	}
}

func fmtValue(v any) string {
	if s, ok := v.([]string); ok {
		return strings.Join(s, " ")
	}
	return fmt.Sprint(v)
}

// TestBadFiles: every mistake names the file, the line and what to do.
func TestBadFiles(t *testing.T) {
	tests := []struct {
		name, project, want string
	}{
		{"syntax", "{\n  \"executors\": {\n    \"codex\": {\"model\": \"m\",}\n  }\n}", "executors.json:3:"},
		{"unknown field", "{\n  \"executor\": \"codex\"\n}", `executors.json:2:`},
		{"unknown executor", "{\n  \"executors\": {\n    \"codx\": {\"model\": \"m\"}\n  }\n}", `executors.json:3: executors.codx: no such executor`},
		{"bad permissions", "{\"executors\": {\n\"pi\": {\"permissions\": \"yolo\"}}}", `executors.json:2: executors.pi: unknown permissions "yolo"`},
		{"bad default", "{\n\"defaultExecutor\": \"nope\"}", `executors.json:2: defaultExecutor "nope" is no executor`},
		{"shadowing command", "{\"commands\": {\n\"codex\": \"x {prompt}\"}}", `executors.json:2: command executor "codex" would replace the built-in`},
		{"binary for simulate", "{\"executors\": {\"simulate\": {\"binary\": \"x\"}}}", `the simulated executor runs no program`},
		{"wrong type", "{\"executors\": {\"codex\": {\"timeoutMs\": \"10s\"}}}", `executors.json:1:`},
		// 2^64 ms as nanoseconds would wrap to 448 µs, and 9.3e12 ms to a
		// negative duration: no timeout at all.
		{"timeout past 30 days", "{\"executors\": {\"codex\": {\"timeoutMs\": 18446744073710}}}", `timeoutMs must be a number of milliseconds from 1 to 2592000000`},
		{"timeout that overflows", "{\"executors\": {\"pi\": {\"timeoutMs\": 9300000000000}}}", `timeoutMs must be a number of milliseconds from 1 to 2592000000`},
		{"negative timeout", "{\"executors\": {\"pi\": {\"timeoutMs\": -1}}}", `timeoutMs must be`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, uf := setup(t, "", tc.project)
			_, err := Load(dir, uf, builtIns, Overrides{Trust: allowAll{}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ProjectFile) {
				t.Fatalf("err = %v, want one naming %s and saying %q", err, ProjectFile, tc.want)
			}
		})
	}
}

// TestUserFileFollowsXDG: $XDG_CONFIG_HOME, else ~/.config.
func TestUserFileFollowsXDG(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	if got := UserFile(); got != "/xdg/dynworkflow/executors.json" {
		t.Errorf("UserFile() = %s", got)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := UserFile(); got != "/home/u/.config/dynworkflow/executors.json" {
		t.Errorf("UserFile() = %s", got)
	}
}
