package gate_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/internal/gate"
)

// A call at a closed gate waits for its release, or for its context; a
// call with no gate, or at a released one, runs at once on the wrapped
// executor.
func TestGates(t *testing.T) {
	var g gate.Gates
	sim := simulate.New(simulate.Config{})
	e := g.Wrap(sim)
	if e.Name() != sim.Name() || !reflect.DeepEqual(executors.Describe(e), executors.Describe(sim)) {
		t.Errorf("the wrapped executor is %q %+v, want %q %+v", e.Name(), executors.Describe(e), sim.Name(), executors.Describe(sim))
	}
	run := func(ctx context.Context, prompt string) <-chan error {
		done := make(chan error, 1)
		go func() {
			res, err := e.Run(ctx, executors.Request{Prompt: prompt, Attempt: 1}, func(executors.Progress) {})
			if err == nil && res.Text == "" {
				err = errors.New("no answer")
			}
			done <- err
		}()
		return done
	}
	if err := <-run(t.Context(), "no gate here"); err != nil {
		t.Fatalf("a call without a gate: %v", err)
	}
	held := run(t.Context(), "task [gate:a]")
	other := run(t.Context(), "task [gate:b]")
	ctx, cancel := context.WithCancel(t.Context())
	cancelled := run(ctx, "task [gate:b]")
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("a held call whose context ended: %v, want context.Canceled", err)
	}
	g.Release("a")
	if err := <-held; err != nil {
		t.Errorf("a released call: %v", err)
	}
	select {
	case err := <-other:
		t.Fatalf("a call at another gate ran (%v)", err)
	default:
	}
	g.Release("b")
	g.Release("b")
	if err := <-other; err != nil {
		t.Errorf("a released call: %v", err)
	}
	if err := <-run(t.Context(), "again [gate:a]"); err != nil {
		t.Errorf("a call at an open gate: %v", err)
	}
}
