//go:build linux

package engine

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/lang"
)

// boomExec panics on every call, as an executor with a bug would on an
// answer it did not expect.
type boomExec struct{}

func (boomExec) Name() string { return "boom" }
func (boomExec) Run(_ context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	var answers []string
	return executors.Result{Text: answers[len(req.Prompt)]}, nil // index out of range: a runtime panic, as a bug makes
}

// awaitAgent makes one agent call from a funcScript and waits for it.
func awaitAgent(ctx context.Context, env lang.Env, prompt string, opts lang.AgentOptions) (json.RawMessage, error) {
	answered := make(chan struct {
		v   json.RawMessage
		err error
	}, 1)
	env.Agent(ctx, env.Root(), prompt, opts, func(v json.RawMessage, err error) {
		answered <- struct {
			v   json.RawMessage
			err error
		}{v, err}
	})
	a := <-answered
	return a.v, a.err
}

// A panic in one run, wherever it happens (its script's host, one of its
// branches, an executor running one of its calls), fails that run with an
// error that says so, and leaves the runtime and every other run going:
// under serve they share a process.
func TestPanicFailsOnlyItsRun(t *testing.T) {
	rt := newFuncRuntime(t, simulate.New(simulate.Config{}), boomExec{})
	dir := t.TempDir()
	crashers := map[string]*funcScript{
		"executor": {path: filepath.Join(dir, "executor.js"), run: func(ctx context.Context, env lang.Env) (json.RawMessage, error) {
			return awaitAgent(ctx, env, "x", lang.AgentOptions{Executor: "boom"})
		}},
		"host": {path: filepath.Join(dir, "host.js"), run: func(ctx context.Context, env lang.Env) (json.RawMessage, error) {
			if _, err := awaitAgent(ctx, env, "first", lang.AgentOptions{}); err != nil {
				return nil, err
			}
			var s []int
			return json.RawMessage(`"` + string(rune(s[3])) + `"`), nil
		}},
		"branch": {path: filepath.Join(dir, "branch.js"), run: func(ctx context.Context, env lang.Env) (json.RawMessage, error) {
			wake := env.Scheduler().NewWake()
			env.Scheduler().Go(ctx, func(context.Context) { panic("a branch fell over") })
			return nil, wake.Wait(ctx) // the branch never wakes it: only the run's end does
		}},
	}
	steady := &funcScript{path: filepath.Join(dir, "steady.js"), run: func(ctx context.Context, env lang.Env) (json.RawMessage, error) {
		for i := range 20 {
			if _, err := awaitAgent(ctx, env, "step "+string(rune('a'+i)), lang.AgentOptions{}); err != nil {
				return nil, err
			}
		}
		return json.RawMessage(`"steady"`), nil
	}}
	var runs sync.Map
	var wg sync.WaitGroup
	for name, s := range map[string]*funcScript{"executor": crashers["executor"], "host": crashers["host"], "branch": crashers["branch"], "steady": steady} {
		r, err := rt.Start(context.Background(), StartRequest{Script: s, Options: DefaultOptions()})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			o, err := r.Wait(ctx)
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			runs.Store(name, o)
		}()
	}
	wg.Wait()
	for name := range crashers {
		v, _ := runs.Load(name)
		o := v.(Outcome)
		if o.Status != StatusFailed || !strings.Contains(o.Error, "internal error in") || !strings.Contains(o.Error, "no other run was affected") {
			t.Errorf("%s: %s %q; want failed on an internal error", name, o.Status, o.Error)
		}
		d, err := rt.Inspect(o.RunID)
		if err != nil || d.Summary.Status != string(StatusFailed) || d.Summary.ErrorCode != CodeInternal || d.TornBytes != 0 {
			t.Errorf("%s: the journal says %+v, %v", name, d.Summary, err)
		}
	}
	v, _ := runs.Load("steady")
	if o := v.(Outcome); o.Status != StatusCompleted || string(o.Result) != `"steady"` || o.Stats.Live != 20 {
		t.Errorf("the run beside them: %s %s, %d live (%s)", o.Status, o.Result, o.Stats.Live, o.Error)
	}
	// The runtime goes on taking runs.
	r, err := rt.Start(context.Background(), StartRequest{Script: steady, Options: DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := r.Wait(context.Background()); o.Status != StatusCompleted {
		t.Errorf("a run after the panics: %s (%s)", o.Status, o.Error)
	}
}

// countingGate counts the calls it starts, and holds each until released.
type countingGate struct {
	started atomic.Int32
	running chan struct{}
	release chan struct{}
}

func (g *countingGate) Name() string { return "gate" }
func (g *countingGate) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	g.started.Add(1)
	g.running <- struct{}{}
	select {
	case <-g.release:
		return executors.Result{Text: "ok"}, nil
	case <-ctx.Done():
		return executors.Result{}, ctx.Err()
	}
}

// Once the journal cannot be written, no agent starts: it would be paid
// for, and its answer lost.
func TestBrokenJournalStartsNoAgent(t *testing.T) {
	g := &countingGate{running: make(chan struct{}, 10), release: make(chan struct{})}
	rt := newFuncRuntime(t, g)
	s := &funcScript{path: filepath.Join(t.TempDir(), "fan.js"), run: func(ctx context.Context, env lang.Env) (json.RawMessage, error) {
		var wg sync.WaitGroup
		for range 10 {
			wg.Add(1)
			env.Agent(ctx, env.Root(), "task", lang.AgentOptions{}, func(json.RawMessage, error) { wg.Done() })
		}
		wg.Wait()
		return nil, nil
	}}
	opts := DefaultOptions()
	opts.Executor, opts.Concurrency = "gate", 2
	r, err := rt.Start(context.Background(), StartRequest{Script: s, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	<-g.running
	<-g.running
	// The file system goes away under the journal.
	if err := r.journal.Close(); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	o, _ := r.Wait(context.Background())
	if n := g.started.Load(); n != 2 {
		t.Errorf("%d agents started; the 2 running when the journal broke are all there may be", n)
	}
	if o.Status != StatusPaused || !strings.Contains(o.PauseReason, "could not be written") {
		t.Errorf("run %s (%q), want paused because its state could not be written", o.Status, o.PauseReason)
	}
}

// deepExec answers every call with JSON nested 3,000 levels deep.
type deepExec struct{}

func (deepExec) Name() string { return "deep" }
func (deepExec) Run(context.Context, executors.Request, executors.Observer) (executors.Result, error) {
	return executors.Result{Structured: json.RawMessage(strings.Repeat(`{"a":`, 3000) + "1" + strings.Repeat("}", 3000))}, nil
}

// Values nested past the limit are refused wherever they reach the engine,
// whichever host let them through, and the message names the limit: the
// run's args, a result, a child's args, an agent's answer.
func TestEngineRefusesDeepValues(t *testing.T) {
	rt := newFuncRuntime(t, simulate.New(simulate.Config{}), deepExec{})
	deep := json.RawMessage(strings.Repeat("[", 1001) + strings.Repeat("]", 1001))
	dir := t.TempDir()
	returns := &funcScript{path: filepath.Join(dir, "r.js"), run: func(context.Context, lang.Env) (json.RawMessage, error) { return deep, nil }}
	if _, err := rt.Start(context.Background(), StartRequest{Script: returns, Args: deep, Options: DefaultOptions()}); !errors.Is(err, lang.ErrTooDeep) ||
		!strings.Contains(err.Error(), "the run's args: nested more than 1000 levels deep") {
		t.Errorf("Start with deep args = %v", err)
	}
	run := func(s *funcScript) Outcome {
		t.Helper()
		r, err := rt.Start(context.Background(), StartRequest{Script: s, Options: DefaultOptions()})
		if err != nil {
			t.Fatal(err)
		}
		o, _ := r.Wait(context.Background())
		return o
	}
	if o := run(returns); o.Status != StatusFailed || !strings.Contains(o.Error, "the workflow's result: nested more than 1000 levels deep") {
		t.Errorf("a deep result: %s %q", o.Status, o.Error)
	}
	child := &funcScript{path: filepath.Join(dir, "c.js"), run: func(ctx context.Context, env lang.Env) (json.RawMessage, error) {
		errc := make(chan error, 1)
		env.Workflow(ctx, env.Root(), "child", deep, func(_ json.RawMessage, err error) { errc <- err })
		return nil, <-errc
	}}
	if o := run(child); o.Status != StatusFailed || !strings.Contains(o.Error, `workflow("child"): the args: nested more than 1000 levels deep`) {
		t.Errorf("deep child args: %s %q", o.Status, o.Error)
	}
	answer := &funcScript{path: filepath.Join(dir, "a.js"), run: func(ctx context.Context, env lang.Env) (json.RawMessage, error) {
		return awaitAgent(ctx, env, "x", lang.AgentOptions{Executor: "deep", Schema: json.RawMessage(`{"type":"object"}`)})
	}}
	if o := run(answer); o.Status != StatusFailed || !strings.Contains(o.Error, "the answer nests more than 1000 levels deep") {
		t.Errorf("a deep answer: %s %q", o.Status, o.Error)
	}
}
