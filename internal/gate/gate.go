// Package gate lets a test decide how long a run goes on, however slow the
// machine: its executor holds every agent call whose prompt carries
// [gate:NAME] until the test releases NAME, then hands the call to the
// executor it wraps. A test that must see a run still going, or a call
// still running, holds it with a gate instead of racing a sleep.
package gate

import (
	"context"
	"strings"
	"sync"

	"github.com/dynworkflow/dynworkflow/executors"
)

// Gates are named gates, each closed until released. The zero value is
// ready to use.
type Gates struct {
	mu    sync.Mutex
	gates map[string]chan struct{}
}

func (g *Gates) gate(name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gates == nil {
		g.gates = map[string]chan struct{}{}
	}
	if g.gates[name] == nil {
		g.gates[name] = make(chan struct{})
	}
	return g.gates[name]
}

// Release opens gate name: the calls held there run, and later ones pass.
// Releasing an open gate does nothing.
func (g *Gates) Release(name string) {
	ch := g.gate(name)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// Wrap returns e behind the gates; its name, defaults and description
// are e's.
func (g *Gates) Wrap(e executors.Executor) executors.Executor {
	return gated{e: e, gates: g}
}

type gated struct {
	e     executors.Executor
	gates *Gates
}

func (x gated) Name() string                   { return x.e.Name() }
func (x gated) Defaults() executors.Defaults   { return executors.DefaultsOf(x.e) }
func (x gated) Describe() executors.Definition { return executors.Describe(x.e) }

// Run holds the call at the gate its prompt names, if any, until the gate
// is released or ctx ends.
func (x gated) Run(ctx context.Context, req executors.Request, observe executors.Observer) (executors.Result, error) {
	if _, rest, ok := strings.Cut(req.Prompt, "[gate:"); ok {
		name, _, _ := strings.Cut(rest, "]")
		select {
		case <-x.gates.gate(name):
		case <-ctx.Done():
			return executors.Result{}, ctx.Err()
		}
	}
	return x.e.Run(ctx, req, observe)
}
