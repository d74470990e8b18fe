package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// recorder is an executor that notes the prompts it is asked, in the order
// the calls start, and can hold a run still once it has answered a number
// of calls, so a test can pause it at a known point.
type recorder struct {
	mu      sync.Mutex
	prompts []string
	// After holdAfter answers, further calls signal held (once) and wait
	// for the run to be paused. 0 never holds.
	holdAfter int
	answered  int
	held      chan struct{}
}

func (x *recorder) Name() string { return "recorder" }

func (x *recorder) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	x.mu.Lock()
	x.prompts = append(x.prompts, req.Prompt)
	hold := x.holdAfter > 0 && x.answered >= x.holdAfter
	if hold && x.held != nil {
		close(x.held)
		x.held = nil
	}
	if !hold {
		x.answered++
	}
	x.mu.Unlock()
	if hold {
		<-ctx.Done()
		return executors.Result{}, ctx.Err()
	}
	return executors.Result{Text: "answer to " + req.Prompt, Usage: executors.Usage{InputTokens: 10, OutputTokens: 5}}, nil
}

func (x *recorder) order() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.prompts)
}

func newOrderRuntime(t testing.TB, x *recorder) *engine.Runtime {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{
		Store: st, Hosts: lang.NewRegistry(jsvm.New(), star.New()),
		Executors: executors.NewSet(x), Cwd: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func loadText(t testing.TB, rt *engine.Runtime, name, text string) lang.Script {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := rt.Hosts().LoadFile(path)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return s
}

// The same fan-out in both languages: every branch makes two calls, the
// first of them a replay on resume.
var orderScripts = map[string]string{
	".workflow.js": `export const meta = { name: 'order', description: 'two calls per branch' }
return await parallel(Array.from({ length: args.n }, (_, i) => async () => {
  const a = await agent('first ' + i)
  return agent('second ' + i)
}))
`,
	".workflow.star": `meta = {"name": "order", "description": "two calls per branch"}

def branch(i):
    agent("first %d" % i)
    return agent("second %d" % i)

def main(args):
    return parallel(list(range(args["n"])), lambda _, i: branch(i))
`,
}

func orderOptions(conc int) engine.Options {
	o := engine.DefaultOptions()
	o.Executor, o.Concurrency = "recorder", conc
	o.RetryBackoff = time.Millisecond
	return o
}

func runToEnd(t testing.TB, rt *engine.Runtime, r *engine.Run, err error) engine.Outcome {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Branches start in index order, in both languages, run after run: at
// concurrency 1 the calls reach the executor in the order the script made
// them, so that order is the whole story. Starlark used to start its
// branches in whatever order goroutines won the interpreter lock.
func TestBranchesStartInIndexOrder(t *testing.T) {
	const n = 30
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("first %d", i))
	}
	for i := range n {
		want = append(want, fmt.Sprintf("second %d", i))
	}
	for ext, text := range orderScripts {
		t.Run(ext, func(t *testing.T) {
			for range 20 {
				x := &recorder{}
				rt := newOrderRuntime(t, x)
				r, err := rt.Start(context.Background(), engine.StartRequest{
					Script: loadText(t, rt, "order"+ext, text), Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), Options: orderOptions(1)})
				o := runToEnd(t, rt, r, err)
				if o.Status != engine.StatusCompleted {
					t.Fatalf("status %s: %s", o.Status, o.Error)
				}
				if got := x.order(); !slices.Equal(got, want) {
					t.Fatalf("calls started in this order:\n%v\nwant\n%v", got, want)
				}
			}
		})
	}
}

// capScripts fan out 40 branches of two calls each under a cap of 60
// agents: the 21st second call is over the cap, and, as in the Node
// runtime, the run fails there. Which call meets the cap must be the same
// on every execution, or a resume would pay again for calls that finished
// and end otherwise.
var capScripts = map[string]string{
	".workflow.js": `export const meta = { name: 'cap', description: '40 branches, 60 agents' }
return await parallel(Array.from({ length: 40 }, (_, i) => async () => {
  await agent('first ' + i)
  return agent('second ' + i)
}))
`,
	".workflow.star": `meta = {"name": "cap", "description": "40 branches, 60 agents"}

def branch(i):
    agent("first %d" % i)
    return agent("second %d" % i)

def main(args):
    return parallel(list(range(40)), lambda _, i: branch(i))
`,
}

// A run with an agent cap, paused after some calls finished and resumed,
// runs none of its finished calls again and fails at the cap as an
// uninterrupted run does, 20 times in each language.
func TestResumeUnderAgentCapPaysNothingTwice(t *testing.T) {
	// The error names the script's file, which is another one every time.
	where := func(o engine.Outcome) string {
		_, at, _ := strings.Cut(o.Error, "cap.workflow.")
		return at
	}
	for ext, text := range capScripts {
		t.Run(ext, func(t *testing.T) {
			opts := orderOptions(4)
			opts.MaxAgents = 60
			clean := &recorder{}
			rt := newOrderRuntime(t, clean)
			script := loadText(t, rt, "cap"+ext, text)
			r, err := rt.Start(context.Background(), engine.StartRequest{Script: script, Options: opts})
			want := runToEnd(t, rt, r, err)
			if want.Status != engine.StatusFailed || !strings.Contains(want.Error, "cap of 60 agents") {
				t.Fatalf("uninterrupted run: %s %s, want failed at the cap", want.Status, want.Error)
			}
			for k := range 20 {
				x := &recorder{holdAfter: 1 + k%15, held: make(chan struct{})}
				rt := newOrderRuntime(t, x)
				script := loadText(t, rt, "cap"+ext, text)
				held := x.held
				r, err := rt.Start(context.Background(), engine.StartRequest{Script: script, Options: opts})
				if err != nil {
					t.Fatal(err)
				}
				<-held
				if err := r.Pause(); err != nil {
					t.Fatal(err)
				}
				paused := runToEnd(t, rt, r, nil)
				if paused.Status != engine.StatusPaused {
					t.Fatalf("status %s, want paused (%s)", paused.Status, paused.Error)
				}
				answered := x.order()[:x.holdAfter]
				x.mu.Lock()
				x.prompts, x.holdAfter = nil, 0
				x.mu.Unlock()
				r, err = rt.Resume(context.Background(), r.ID(), engine.ResumeRequest{})
				got := runToEnd(t, rt, r, err)
				if got.Status != engine.StatusFailed || where(got) != where(want) {
					t.Fatalf("round %d: resumed: %s %s\nwant failed as the uninterrupted run: %s", k, got.Status, got.Error, want.Error)
				}
				for _, p := range x.order() {
					if slices.Contains(answered, p) {
						t.Fatalf("round %d: %q finished before the pause and ran again", k, p)
					}
				}
				if got.Stats.Replayed != len(answered) {
					t.Fatalf("round %d: %d calls replayed, want the %d that finished", k, got.Stats.Replayed, len(answered))
				}
			}
		})
	}
}
