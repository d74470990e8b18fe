package star

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

// TestScripts runs every testdata/*.workflow.star. A script states what it
// expects in comments at its top, so each file reads as its own test:
//
//	# args: <JSON>            the run's args
//	# meta: <JSON>            the meta Load must read
//	# want: <JSON>            the result
//	# load-error: <text>      Load fails; the error, after "file:", starts with text
//	# run-error: <text>       Run fails likewise
//	# error-file: <name>      the failing file, when it is not the script (a load()ed one)
//	# calls: <path> <prompt>  one per call, in any order
//	# logs: <level> <path> <message>  one per line logged, in order
//	# failures: <path> <text> one per branch that became None, in any order; the
//	                          error after the path contains text
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.workflow.star")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test scripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want := langtest.Directives(string(text), "# ")
			errFile := file
			if f, ok := want["error-file"]; ok {
				errFile = filepath.Join("testdata", f[0])
			}
			s, err := NewWithConfig(Config{MaxSteps: 1_000_000}).Load(lang.Source{Path: file, Text: text})
			if exp, ok := want["load-error"]; ok {
				checkError(t, errFile, err, exp[0])
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
				checkError(t, errFile, err, exp[0])
			} else if err != nil {
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
			if exp, ok := want["failures"]; ok {
				checkFailures(t, env.Failures(), exp)
			}
			if n := env.Overlaps(); n > 0 {
				t.Errorf("%d calls into the env overlapped another", n)
			}
		})
	}
}

func checkError(t *testing.T, file string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", want)
	}
	got, ok := strings.CutPrefix(err.Error(), file+":")
	if !ok || !strings.HasPrefix(got, want) {
		t.Errorf("error =\n  %s\nwant\n  %s:%s...", err, file, want)
	}
}

// checkFailures matches "path error" lines against "path text" wants.
func checkFailures(t *testing.T, got, want []string) {
	t.Helper()
	sort.Strings(got)
	sort.Strings(want)
	if len(got) != len(want) {
		t.Fatalf("failures =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for i := range want {
		path, text, _ := strings.Cut(want[i], " ")
		if !strings.HasPrefix(got[i], path+" ") || !strings.Contains(got[i], text) {
			t.Errorf("failure %q, want %q", got[i], want[i])
		}
	}
}
