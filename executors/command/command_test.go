package command

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in       string
		name     string
		words    []string
		wantFail bool
	}{
		{in: "mytool --json {prompt}", name: "command", words: []string{"mytool", "--json", "{prompt}"}},
		{in: "aider=aider --yes -m '{prompt}'", name: "aider", words: []string{"aider", "--yes", "-m", "{prompt}"}},
		{in: "tool --flag=x", name: "command", words: []string{"tool", "--flag=x"}},
		{in: `sh -c "echo \"a b\"" 'c d' e\ f`, name: "command", words: []string{"sh", "-c", `echo "a b"`, "c d", "e f"}},
		{in: "x='unterminated", wantFail: true},
		{in: "   ", wantFail: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			s, err := ParseSpec(tc.in)
			if tc.wantFail {
				if err == nil {
					t.Fatalf("ParseSpec(%q) = %+v, want an error", tc.in, s)
				}
				return
			}
			if err != nil || s.Name != tc.name || !reflect.DeepEqual(s.Words, tc.words) {
				t.Fatalf("ParseSpec(%q) = %+v, %v; want %s %q", tc.in, s, err, tc.name, tc.words)
			}
		})
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name      string
		template  string
		schema    string
		wantText  string
		wantJSON  string
		wantUsage executors.Usage
		wantClass *executors.Class
	}{
		{name: "prompt on stdin, text out", template: `sh -c 'echo "got: $(cat)"'`, wantText: "got: hello there"},
		{name: "prompt as argument", template: `sh -c 'printf "%s|%s" "$0" "$1"' {prompt} {model}`, wantText: "hello there|m1"},
		{name: "json out with usage", template: `sh -c 'cat >/dev/null; echo "{\"text\":\"ok\",\"usage\":{\"input_tokens\":5,\"cached_input_tokens\":1,\"output_tokens\":2}}"'`,
			wantText: "ok", wantUsage: executors.Usage{InputTokens: 5, CachedInputTokens: 1, OutputTokens: 2}},
		{name: "schema file and structured", template: `sh -c 'printf "{\"structured\":%s}" "$(cat "$0")"' {schema_file}`, schema: `{"type":"object"}`,
			wantJSON: `{"type":"object"}`},
		{name: "json error class", template: `echo '{"error":{"class":"rate-limited","message":"slow down"}}'`, wantClass: ptr(executors.RateLimited)},
		{name: "exit 75 is transient", template: `sh -c 'exit 75'`, wantClass: ptr(executors.Transient)},
		{name: "exit 1 is terminal", template: `sh -c 'echo boom >&2; exit 1'`, wantClass: ptr(executors.Terminal)},
		{name: "missing binary makes it unavailable", template: `/nonexistent/tool`, wantClass: ptr(executors.Unavailable)},
		{name: "permissions placeholder", template: `echo {permissions}`, wantText: "workspace-write"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := ParseSpec(tc.template)
			if err != nil {
				t.Fatal(err)
			}
			e := New(spec, agentcli.Config{})
			req := executors.Request{Prompt: "hello there", Model: "m1", Dir: t.TempDir()}
			if tc.schema != "" {
				req.Schema = json.RawMessage(tc.schema)
			}
			res, err := e.Run(context.Background(), req, nil)
			if tc.wantClass != nil {
				var ee *executors.Error
				if !errors.As(err, &ee) || ee.Class != *tc.wantClass {
					t.Fatalf("err = %v, want class %s", err, *tc.wantClass)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantJSON != "" {
				if string(res.Structured) != tc.wantJSON {
					t.Errorf("structured = %s, want %s", res.Structured, tc.wantJSON)
				}
			} else if res.Text != tc.wantText {
				t.Errorf("text = %q, want %q", res.Text, tc.wantText)
			}
			if res.Usage != tc.wantUsage {
				t.Errorf("usage = %+v, want %+v", res.Usage, tc.wantUsage)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// Placeholders are expanded once, left to right, never inside what they
// were replaced with; a lone placeholder word whose value looks like an
// option is passed only after "--".
func TestArgs(t *testing.T) {
	vals := map[string]string{"prompt": "use {model} and {dir}", "model": "m-1", "effort": "high", "schema": "{}", "dir": "/p", "schema_file": "/s.json"}
	tests := []struct {
		template string
		vals     map[string]string
		want     []string
		wantErr  bool
	}{
		{"tool {prompt}", vals, []string{"use {model} and {dir}"}, false},
		{"tool --m={model} --p={prompt} {effort}", vals, []string{"--m=m-1", "--p=use {model} and {dir}", "high"}, false},
		{"tool {{prompt}} {unknown} {", vals, []string{"{use {model} and {dir}}", "{unknown}", "{"}, false},
		{"tool {schema}{schema_file}", vals, []string{"{}/s.json"}, false},
		{"tool {prompt}", map[string]string{"prompt": "--help"}, nil, true},
		{"tool {model} x", map[string]string{"model": "-rf"}, nil, true},
		{"tool -- {prompt}", map[string]string{"prompt": "--help"}, []string{"--", "--help"}, false},
		{"tool --prompt={prompt}", map[string]string{"prompt": "--help"}, []string{"--prompt=--help"}, false},
		{"tool x{prompt}", map[string]string{"prompt": "-x"}, []string{"x-x"}, false},
		// A value that starts a word makes it an option, lone or not.
		{"tool {model}@latest", map[string]string{"model": "--exec=id"}, nil, true},
		{"tool {effort}{model}", map[string]string{"model": "-rf"}, nil, true},
		{"tool {model}:{effort}", map[string]string{"model": "-m", "effort": "high"}, nil, true},
		{"tool -- {model}@latest", map[string]string{"model": "--exec=id"}, []string{"--", "--exec=id@latest"}, false},
		{"tool {model}@latest", map[string]string{"model": "m"}, []string{"m@latest"}, false},
		{"tool {prompt_file}", map[string]string{"prompt_file": "/tmp/p"}, []string{"/tmp/p"}, false},
	}
	for _, tc := range tests {
		spec, err := ParseSpec(tc.template)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 { // the same every time: no map order in it
			got, err := spec.Args(tc.vals)
			if tc.wantErr {
				if !errors.Is(err, ErrOptionLike) || !strings.Contains(err.Error(), "put -- before") {
					t.Fatalf("%s: Args = %q, %v; want ErrOptionLike saying what to do", tc.template, got, err)
				}
				continue
			}
			if err != nil || strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
				t.Fatalf("%s: Args = %q, %v; want %q", tc.template, got, err, tc.want)
			}
		}
	}
}

// TestConfiguredDefaults: a request that names no model or policy gets the
// executor's configured ones; one that does keeps its own.
func TestConfiguredDefaults(t *testing.T) {
	spec, err := ParseSpec(`echo {model} {permissions}`)
	if err != nil {
		t.Fatal(err)
	}
	e := New(spec, agentcli.Config{Model: "conf-model", Permissions: executors.ReadOnly})
	for _, tc := range []struct {
		req  executors.Request
		want string
	}{
		{executors.Request{}, "conf-model read-only"},
		{executors.Request{Model: "call-model", Permissions: executors.FullAccess}, "call-model full-access"},
	} {
		tc.req.Dir = t.TempDir()
		res, err := e.Run(context.Background(), tc.req, nil)
		if err != nil || res.Text != tc.want {
			t.Errorf("Run(%+v) = %q, %v; want %q", tc.req, res.Text, err, tc.want)
		}
	}
}

// TestPromptFile: {prompt_file} names a file only the user can read that
// holds the prompt, gone once the call ends; standard input is then not
// the prompt.
func TestPromptFile(t *testing.T) {
	spec, err := ParseSpec(`sh -c 'stat -c %a "$0"; cat "$0"; printf "|stdin:"; cat; echo "|$0" >&2' {prompt_file}`)
	if err != nil {
		t.Fatal(err)
	}
	if spec.PromptInArgs() {
		t.Error("a template with {prompt_file} passes the prompt in its arguments")
	}
	res, err := New(spec, agentcli.Config{}).Run(context.Background(), executors.Request{Prompt: "secret plan", Dir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "600\nsecret plan|stdin:" {
		t.Errorf("the command saw %q, want the prompt in a 0600 file and nothing on stdin", res.Text)
	}
	if p, _ := ParseSpec("aider --message {prompt}"); !p.PromptInArgs() {
		t.Error("{prompt} as an argument is not reported")
	}
}
