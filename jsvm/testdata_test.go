package jsvm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/langtest"
)

// TestScripts runs every testdata/*.workflow.js. A script states what it
// expects in comments at its top, so each file reads as its own test:
//
//	// args: <JSON>          the run's args
//	// meta: <JSON>          the meta Load must read
//	// want: <JSON>          the result
//	// load-error: <text>    Load fails; the error, after "file:", starts with text
//	// run-error: <text>     Run fails likewise
//	// calls: <path> <prompt>  one per call, in any order
//	// logs: <level> <path> <message>  one per line logged, in order
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.workflow.js")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test scripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want := langtest.Directives(string(text), "// ")
			s, err := New().Load(lang.Source{Path: file, Text: text})
			if exp, ok := want["load-error"]; ok {
				checkError(t, file, err, exp[0])
				return
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if exp, ok := want["meta"]; ok {
				got, _ := json.Marshal(s.Meta())
				if string(got) != exp[0] {
					t.Errorf("meta = %s\nwant   %s", got, exp[0])
				}
			}
			env := langtest.NewEnv()
			if args, ok := want["args"]; ok {
				env.SetArgs(json.RawMessage(args[0]))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out, err := s.Run(ctx, env)
			if exp, ok := want["run-error"]; ok {
				checkError(t, file, err, exp[0])
				return
			}
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if exp, ok := want["want"]; ok && !langtest.SameJSON(out, exp[0]) {
				t.Errorf("result = %s\nwant     %s", out, exp[0])
			}
			if exp, ok := want["calls"]; ok {
				sort.Strings(exp)
				if got := env.CallList(); !reflect.DeepEqual(got, exp) {
					t.Errorf("calls =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(exp, "\n  "))
				}
			}
			if exp, ok := want["logs"]; ok && !reflect.DeepEqual(env.Logs(), exp) {
				t.Errorf("logs = %q, want %q", env.Logs(), exp)
			}
		})
	}
}

func checkError(t *testing.T, file string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", want)
	}
	if got := strings.TrimPrefix(err.Error(), file+":"); !strings.HasPrefix(got, want) {
		t.Errorf("error =\n  %s\nwant prefix\n  %s", got, want)
	}
}
