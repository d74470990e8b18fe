package star

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/langtest"
)

// load loads a script from text, failing the test on an error.
func load(t *testing.T, h *Host, name, text string) lang.Script {
	t.Helper()
	s, err := h.Load(lang.Source{Path: name, Text: []byte(text)})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return s
}

func runScript(t *testing.T, s lang.Script, env *langtest.Env) (json.RawMessage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.Run(ctx, env)
}

// TestBranchLocalState runs 200 branches at once, each building its own
// lists and dicts around several agent calls whose answers arrive from
// other goroutines in any order. Run it under -race.
func TestBranchLocalState(t *testing.T) {
	const n = 200
	s := load(t, New(), "local.workflow.star", `
meta = {"name": "local", "description": "200 branches with local state"}

def branch(item, i):
    notes = []
    seen = {}
    for k in range(3):
        answer = agent("%s step %d" % (item, k))
        notes.append(answer)
        seen[answer] = k
    notes = sorted(notes)
    return {"i": i, "count": len(seen), "first": notes[0]}

def main(args):
    items = ["item-%d" % i for i in range(args["n"])]
    out = parallel(items, branch)
    out.append("parent may change its own list")
    return out
`)
	env := langtest.NewEnv()
	env.SetArgs(json.RawMessage(fmt.Sprintf(`{"n": %d}`, n)))
	out, err := runScript(t, s, env)
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	if err := json.Unmarshal(out, &got); err != nil || len(got) != n+1 {
		t.Fatalf("result %.200s: %v", out, err)
	}
	for i, v := range got[:n] {
		m, _ := v.(map[string]any)
		if m["i"] != float64(i) || m["count"] != float64(3) || m["first"] != fmt.Sprintf("echo: item-%d step 0", i) {
			t.Fatalf("branch %d returned %v", i, v)
		}
	}
	if len(env.Calls()) != 3*n || len(env.Failures()) != 0 || env.Overlaps() != 0 {
		t.Fatalf("%d calls, failures %v, %d overlapping env calls", len(env.Calls()), env.Failures(), env.Overlaps())
	}
}

// TestSharedStateIsFrozen shares the parent's list and dict with 200
// branches: each branch fails with Starlark's frozen-value error, which is
// reported for its scope; nothing races, and the parent's values stay as
// they were.
func TestSharedStateIsFrozen(t *testing.T) {
	const n = 200
	s := load(t, New(), "shared.workflow.star", `
meta = {"name": "shared", "description": "branches mutate the parent's state"}

def main(args):
    found = []
    counts = {}
    def branch(item, i):
        answer = agent(item)
        if i % 2 == 0:
            found.append(answer)
        else:
            counts[item] = 1
        return answer
    results = parallel(["item-%d" % i for i in range(args["n"])], branch)
    return {"results": results, "found": found, "counts": counts}
`)
	env := langtest.NewEnv()
	env.SetArgs(json.RawMessage(fmt.Sprintf(`{"n": %d}`, n)))
	out, err := runScript(t, s, env)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Results []any
		Found   []any
		Counts  map[string]any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for i, r := range got.Results {
		if r != nil {
			t.Fatalf("branch %d returned %v, want None", i, r)
		}
	}
	if len(got.Found) != 0 || len(got.Counts) != 0 {
		t.Fatalf("the parent's state changed: %s", out)
	}
	if len(env.Failures()) != n {
		t.Fatalf("%d failures reported, want %d", len(env.Failures()), n)
	}
	for _, f := range env.Failures() {
		if !strings.Contains(f, "shared.workflow.star:10:") && !strings.Contains(f, "shared.workflow.star:12:") ||
			!strings.Contains(f, "cannot append to frozen list") && !strings.Contains(f, "cannot insert into frozen hash table") {
			t.Fatalf("failure %q does not name the line and the frozen value", f)
		}
	}
}

// TestStop cancels a run while its branches wait for agents, and one
// while main spins in a loop: every thread stops, and Run reports the stop
// and no branch failure.
func TestStop(t *testing.T) {
	tests := []struct {
		name, body string
		started    int // the calls that start before the stop
	}{
		{name: "waiting branches", body: `return parallel([lambda: agent("wait")] * 5)`, started: 5},
		{name: "spinning main", body: "agent(\"go\")\n    n = 0\n    while True:\n        n += 1", started: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := load(t, New(), "stop.workflow.star", "meta = {\"name\": \"stop\", \"description\": \"stopped mid-run\"}\n\ndef main(args):\n    "+tc.body+"\n")
			env := langtest.NewEnv()
			started := make(chan struct{}, tc.started)
			env.Answer = func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
				started <- struct{}{}
				if c.Prompt == "go" {
					return json.RawMessage(`"go"`), nil
				}
				<-ctx.Done()
				return nil, ctx.Err()
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := s.Run(ctx, env)
				errc <- err
			}()
			for range tc.started {
				<-started
			}
			stop := errors.New("stopped by the test")
			cancel(stop)
			select {
			case err := <-errc:
				if !errors.Is(err, stop) || !errors.Is(err, context.Canceled) {
					t.Fatalf("Run returned %v, want the stop cause", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return after its context was cancelled")
			}
			if len(env.Failures()) != 0 {
				t.Errorf("a stop reported branch failures: %v", env.Failures())
			}
		})
	}
}

// TestDefaultStepLimit shows that the default limit ends a runaway loop in
// reasonable time.
func TestDefaultStepLimit(t *testing.T) {
	s := load(t, New(), "runaway.workflow.star", `
meta = {"name": "runaway", "description": "never stops"}

def main(args):
    n = 0
    while True:
        n += 1
`)
	t0 := time.Now()
	// 50 million steps take seconds, and half a minute under -race on a
	// busy machine: the deadline is only a safety net.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err := s.Run(ctx, langtest.NewEnv())
	var le *lang.Error
	if !errors.As(err, &le) || le.Line != 7 || !strings.Contains(le.Message, "steps") {
		t.Fatalf("error %v, want a step-limit error at line 7", err)
	}
	t.Logf("the default limit of %d steps stopped the loop after %v", DefaultMaxSteps, time.Since(t0).Round(time.Millisecond))
}

// TestEngineErrors passes the engine's errors through: a failed agent in
// main fails the run and still matches with errors.Is; in a branch it
// makes the branch None.
func TestEngineErrors(t *testing.T) {
	errBudget := errors.New("token budget exhausted")
	tests := []struct {
		name, body string
		wantErr    bool
		wantFail   int
	}{
		{name: "main", body: `return agent("spend")`, wantErr: true},
		{name: "branch", body: `return parallel([lambda: agent("spend"), lambda: "fine"])`, wantFail: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := load(t, New(), "budget.workflow.star", "meta = {\"name\": \"b\", \"description\": \"d\"}\n\ndef main(args):\n    "+tc.body+"\n")
			env := langtest.NewEnv()
			env.Answer = func(context.Context, langtest.Call) (json.RawMessage, error) { return nil, errBudget }
			out, err := runScript(t, s, env)
			if tc.wantErr {
				var le *lang.Error
				if !errors.Is(err, errBudget) || !errors.As(err, &le) || le.Line != 4 || !strings.Contains(le.Backtrace, "budget.workflow.star:4:") {
					t.Fatalf("error %v (%#v), want the engine's error at line 4 with a backtrace", err, le)
				}
				return
			}
			if err != nil || string(out) != `[null,"fine"]` || len(env.Failures()) != tc.wantFail {
				t.Fatalf("result %s, error %v, failures %v", out, err, env.Failures())
			}
		})
	}
}

// TestLoadedFiles checks that load()ed files are listed and hashed, so
// that watch mode follows them and edit-and-resume sees them change.
func TestLoadedFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	main := `load("lib/a.star", "A")
meta = {"name": "m", "description": "d"}
def main(args):
    return A
`
	mainPath := write("m.workflow.star", main)
	write("lib/a.star", "load(\"b.star\", \"B\")\nA = B + 1\n")
	write("lib/b.star", "B = 1\n")
	h := New()
	s1 := load(t, h, mainPath, main)
	want := []string{mainPath, filepath.Join(dir, "lib/a.star"), filepath.Join(dir, "lib/b.star")}
	if got := s1.Files(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Files() = %v, want %v", got, want)
	}
	out, err := runScript(t, s1, langtest.NewEnv())
	if err != nil || string(out) != "2" {
		t.Fatalf("result %s, error %v", out, err)
	}
	write("lib/b.star", "B = 2\n")
	s2 := load(t, h, mainPath, main)
	if s1.Hash() == s2.Hash() {
		t.Error("editing a loaded file did not change the script's hash")
	}
	plain := "meta = {\"name\": \"p\", \"description\": \"d\"}\ndef main(args):\n    return 1\n"
	noLoads := load(t, h, "plain.workflow.star", plain)
	if sum := sha256.Sum256([]byte(plain)); noLoads.Hash() != hex.EncodeToString(sum[:]) || len(noLoads.Files()) != 1 {
		t.Error("a script without loads does not hash as its text alone, as a JavaScript one does")
	}
	write("lib/b.star", "load(\"../m.workflow.star\", \"meta\")\nB = 1\n")
	if _, err := h.Load(lang.Source{Path: mainPath, Text: []byte(main)}); err == nil || !strings.Contains(err.Error(), "load cycle") {
		t.Errorf("a load cycle gave %v", err)
	}
}
