//go:build linux

package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/journal"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/lang"
)

// funcScript is a script written against the host contract directly: Run
// calls run. It lets a test act at moments no real script can name.
type funcScript struct {
	path string
	run  func(ctx context.Context, env lang.Env) (json.RawMessage, error)
}

func (s *funcScript) Path() string { return s.path }
func (s *funcScript) Meta() lang.Meta {
	return lang.Meta{Name: "func", Description: "a Go function as a script"}
}
func (s *funcScript) Text() []byte    { return []byte("// a Go function") }
func (s *funcScript) Hash() string    { return "func" }
func (s *funcScript) Files() []string { return []string{s.path} }
func (s *funcScript) Run(ctx context.Context, env lang.Env) (json.RawMessage, error) {
	return s.run(ctx, env)
}

// oneCallThen makes one agent call and then runs hook as its "last
// computation" before it returns: the moment a real script spends
// computing its result.
func oneCallThen(path string, hook func()) *funcScript {
	return &funcScript{path: path, run: func(ctx context.Context, env lang.Env) (json.RawMessage, error) {
		answered := make(chan error, 1)
		env.Agent(ctx, env.Root(), "the one call", lang.AgentOptions{}, func(_ json.RawMessage, err error) { answered <- err })
		if err := <-answered; err != nil {
			return nil, err
		}
		hook()
		return json.RawMessage(`"done"`), nil
	}}
}

func newFuncRuntime(t *testing.T, execs ...executors.Executor) *Runtime {
	t.Helper()
	cwd := t.TempDir()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), cwd)
	if err != nil {
		t.Fatal(err)
	}
	if len(execs) == 0 {
		execs = append(execs, simulate.New(simulate.Config{}))
	}
	rt, err := New(Config{Store: st, Hosts: lang.NewRegistry(), Executors: executors.NewSet(execs...), Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// A run is completed only once its end record is durable. If the end
// cannot be journaled it is paused, never completed: without its end
// record the journal says the run was cut short, which is what the next
// listing shows, and it resumes once its state can be written again.
func TestEndRecordDecidesTheOutcome(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hook   func(t *testing.T, r *Run)
		want   Status
		reason string
	}{
		{"lease lost", func(t *testing.T, r *Run) {
			// Another owner replaces the lock file.
			if err := os.Remove(r.paths.Lock); err != nil {
				t.Error(err)
			}
			if err := os.WriteFile(r.paths.Lock, []byte("{}"), 0o600); err != nil {
				t.Error(err)
			}
		}, StatusPaused, "lease was lost"},
		{"journal broken", func(t *testing.T, r *Run) {
			if err := r.journal.Close(); err != nil {
				t.Error(err)
			}
		}, StatusPaused, "could not be written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newFuncRuntime(t)
			// The hook needs the run, which Start returns once the
			// script may already be running.
			var r *Run
			ready := make(chan struct{})
			s := oneCallThen(filepath.Join(t.TempDir(), "hook.workflow.js"), func() { <-ready; tc.hook(t, r) })
			r, err := rt.Start(context.Background(), StartRequest{Script: s, Options: DefaultOptions()})
			if err != nil {
				t.Fatal(err)
			}
			close(ready)
			o, err := r.Wait(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != tc.want || o.Error == "" || string(o.Result) != "null" {
				t.Fatalf("status %s, result %s, error %q; want %s with an error and no result", o.Status, o.Result, o.Error, tc.want)
			}
			if !strings.Contains(o.PauseReason, tc.reason) {
				t.Errorf("pause reason %q, want one saying %q", o.PauseReason, tc.reason)
			}
		})
	}
}

// Start honours its context: cancelled, it starts nothing.
func TestStartHonoursItsContext(t *testing.T) {
	rt := newFuncRuntime(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := oneCallThen(filepath.Join(t.TempDir(), "x.workflow.js"), func() {})
	if _, err := rt.Start(ctx, StartRequest{Script: s, Options: DefaultOptions()}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a cancelled context: %v, want context.Canceled", err)
	}
	if sums, err := rt.List(); err != nil || len(sums) != 0 {
		t.Fatalf("runs after a cancelled Start: %d (%v), want none", len(sums), err)
	}
}

// blocker is an executor whose calls run until their context ends, and
// says so.
type blocker struct{ started, ended chan error }

func (blocker) Name() string { return "blocker" }

func (b blocker) Run(ctx context.Context, _ executors.Request, _ executors.Observer) (executors.Result, error) {
	b.started <- nil
	<-ctx.Done()
	b.ended <- context.Cause(ctx)
	return executors.Result{}, ctx.Err()
}

// A host may abandon a call by cancelling the context it passed: the call
// is answered with the host's cause and its agent is cancelled, while the
// run goes on.
func TestEnvCallsHonourTheHostContext(t *testing.T) {
	b := blocker{started: make(chan error, 1), ended: make(chan error, 1)}
	rt := newFuncRuntime(t, b)
	errGaveUp := errors.New("the host gave up on the call")
	s := &funcScript{path: filepath.Join(t.TempDir(), "x.workflow.js"), run: func(ctx context.Context, env lang.Env) (json.RawMessage, error) {
		callCtx, cancel := context.WithCancelCause(ctx)
		answered := make(chan error, 1)
		env.Agent(callCtx, env.Root(), "a long call", lang.AgentOptions{}, func(_ json.RawMessage, err error) { answered <- err })
		<-b.started
		cancel(errGaveUp)
		if err := <-answered; !errors.Is(err, errGaveUp) {
			return nil, fmt.Errorf("the abandoned call answered %v, want the host's cause", err)
		}
		if err := <-b.ended; !errors.Is(err, errGaveUp) {
			return nil, fmt.Errorf("the agent's context ended with %v, want the host's cause", err)
		}
		// A call made with a context already done is answered at once.
		env.Agent(callCtx, env.Root(), "too late", lang.AgentOptions{}, func(_ json.RawMessage, err error) { answered <- err })
		if err := <-answered; !errors.Is(err, errGaveUp) {
			return nil, fmt.Errorf("a call on a done context answered %v", err)
		}
		return json.RawMessage(`"went on"`), nil
	}}
	opts := DefaultOptions()
	opts.Executor = "blocker"
	r, err := rt.Start(context.Background(), StartRequest{Script: s, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	o, err := r.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != StatusCompleted || string(o.Result) != `"went on"` {
		t.Fatalf("status %s, result %s, error %q", o.Status, o.Result, o.Error)
	}
}

// A run that could not start still ends: whoever already waits on it (a
// Close racing the failed Start) is let go.
func TestAbandonedRunEnds(t *testing.T) {
	rt := newFuncRuntime(t)
	s := oneCallThen(filepath.Join(t.TempDir(), "x.workflow.js"), func() {})
	r, err := rt.Start(context.Background(), StartRequest{Script: s, Options: DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A second execution that fails before it runs, as a failed journal
	// write would make it.
	id := r.ID()
	lease, err := rt.store.AcquireLease(id, "test")
	if err != nil {
		t.Fatal(err)
	}
	jw, err := journal.Open(rt.store.RunPaths(id).Journal, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	failed := rt.newRun(id, rt.store.RunPaths(id), runHeader{}, s, nil, DefaultOptions(), 1, callpolicy.RuleCrash, nil, rt.cfg.Executors, jw, lease, now, now)
	closed := make(chan error, 1)
	go func() { closed <- rt.Close(context.Background()) }()
	rt.abandon(failed, errors.New("could not write the resume record"))
	select {
	case <-failed.Done():
	default:
		t.Fatal("an abandoned run's Done channel is still open")
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if o := failed.Outcome(); o.Status != StatusFailed || !strings.Contains(o.Error, "resume record") {
		t.Fatalf("abandoned run: %s %q, want failed with the reason", o.Status, o.Error)
	}
}

// Deleting a live run is refused with ErrRunning, which the server maps to
// 409 rather than 500.
func TestDeleteLiveRun(t *testing.T) {
	b := blocker{started: make(chan error, 1), ended: make(chan error, 1)}
	rt := newFuncRuntime(t, b)
	opts := DefaultOptions()
	opts.Executor = "blocker"
	r, err := rt.Start(context.Background(), StartRequest{Script: oneCallThen(filepath.Join(t.TempDir(), "x.workflow.js"), func() {}), Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	<-b.started
	if err := rt.Delete(r.ID()); !errors.Is(err, ErrRunning) {
		t.Fatalf("Delete of a live run: %v, want ErrRunning", err)
	}
	_ = r.Stop()
	<-b.ended
	if _, err := r.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rt.Delete(r.ID()); err != nil {
		t.Fatalf("Delete once stopped: %v", err)
	}
}
