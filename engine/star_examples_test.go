package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// newStarRuntime is a runtime that knows both languages, over a temporary
// project (returned) and state directory.
func newStarRuntime(t *testing.T) (*engine.Runtime, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{
		Store: st, Hosts: lang.NewRegistry(jsvm.New(), star.New()),
		Executors: executors.NewSet(simulate.New(simulate.Config{})), Cwd: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rt, dir
}

// starRun runs a script to its end and returns the outcome.
func starRun(t *testing.T, rt *engine.Runtime, s lang.Script, args string, opts engine.Options) engine.Outcome {
	t.Helper()
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	r, err := rt.Start(context.Background(), engine.StartRequest{Script: s, Args: raw, Options: opts})
	if err != nil {
		t.Fatalf("start %s: %v", s.Path(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// starCalls lists a run's call records (started and finished) as what
// makes them the same call with the same answer: path, kind, fingerprint,
// label, phase, prompt and result. Timing and durations are left out, and
// the list is sorted, since branches finish in any order.
func starCalls(t *testing.T, rt *engine.Runtime, id string) []string {
	t.Helper()
	b, err := os.ReadFile(rt.Store().RunPaths(id).Journal)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range bytes.SplitSeq(bytes.TrimSpace(b), []byte("\n")) {
		var rec struct {
			Type, Path, Kind, Fp string
			Call                 *struct{ Label, Phase, Prompt string }
			Result               json.RawMessage
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("journal line %q: %v", line, err)
		}
		if !strings.HasPrefix(rec.Type, "call.") {
			continue
		}
		call := ""
		if rec.Call != nil {
			call = fmt.Sprintf("label=%q phase=%q prompt=%q", rec.Call.Label, rec.Call.Phase, rec.Call.Prompt)
		}
		out = append(out, fmt.Sprintf("%s %s %s fp=%s %s result=%s", rec.Path, rec.Type, rec.Kind, rec.Fp, call, rec.Result))
	}
	sort.Strings(out)
	return out
}

// TestExamplesInBothLanguages runs each example of examples/ in JavaScript
// and in Starlark on the simulated executor: the two must return the same
// result and journal the same calls (paths, fingerprints, answers).
func TestExamplesInBothLanguages(t *testing.T) {
	budget := func(o engine.Options) engine.Options { o.TokenBudget = 2500; return o }
	tests := []struct {
		stem  string
		args  string
		calls int
		opts  func(engine.Options) engine.Options
	}{
		{stem: "review", calls: 10},
		{stem: "review", args: `{"change":"PR 42","lenses":["correctness","tests"]}`, calls: 7},
		{stem: "pipeline", calls: 60},
		{stem: "pipeline", args: `{"items":3}`, calls: 9},
		{stem: "loop-until-dry", calls: 15},
		{stem: "loop-until-dry", args: `{"maxRounds":2}`, calls: 6},
		{stem: "loop-until-dry", calls: 9, opts: budget}, // the guard stops it after three rounds
		{stem: "release-gate", calls: 2},                 // and two checkpoints
	}
	for _, tc := range tests {
		t.Run(tc.stem+" "+tc.args, func(t *testing.T) {
			t.Parallel()
			rt, _ := newStarRuntime(t)
			opts := engine.DefaultOptions()
			if tc.opts != nil {
				opts = tc.opts(opts)
			}
			var outcomes []engine.Outcome
			var journals [][]string
			for _, ext := range []string{".workflow.js", ".workflow.star"} {
				s, err := rt.Hosts().LoadFile(filepath.Join("..", "examples", tc.stem+ext))
				if err != nil {
					t.Fatal(err)
				}
				o := starRun(t, rt, s, tc.args, opts)
				if o.Status != engine.StatusCompleted {
					t.Fatalf("%s: status %s, error %s", ext, o.Status, o.Error)
				}
				outcomes = append(outcomes, o)
				journals = append(journals, starCalls(t, rt, o.RunID))
			}
			js, st := outcomes[0], outcomes[1]
			if !bytes.Equal(js.Result, st.Result) {
				t.Errorf("results differ:\n  js:   %s\n  star: %s", js.Result, st.Result)
			}
			if !reflect.DeepEqual(journals[0], journals[1]) {
				t.Errorf("journals differ:\n  js:\n    %s\n  star:\n    %s", strings.Join(journals[0], "\n    "), strings.Join(journals[1], "\n    "))
			}
			if got := js.Stats.Live; got != tc.calls {
				t.Errorf("%d calls, want %d", got, tc.calls)
			}
		})
	}
}
