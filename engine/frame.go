package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/lang"
)

// frame is one workflow running inside a run: the main script, or a child
// started by workflow(). It implements lang.Env for its script.
type frame struct {
	run    *Run
	path   string // "" for the main script; the workflow() call's path for a child
	depth  int
	rule   string // how it resumed (callpolicy.RuleCrash, ...), for the journal and the log
	script lang.Script
	args   json.RawMessage
	policy *callpolicy.Frame
}

// newFrame returns the frame at path running script with args; parent is
// the scope of its workflow() call, nil for the main script.
func newFrame(r *Run, path string, depth int, script lang.Script, args json.RawMessage, parent *scope) *frame {
	return &frame{run: r, path: path, depth: depth, script: script, args: args,
		policy: callpolicy.NewFrame(path, callpolicy.IdentityOf(script.Hash(), args), script.Meta(), parent)}
}

var _ lang.Env = (*frame)(nil)

func (f *frame) Args() json.RawMessage { return f.args }
func (f *frame) Root() lang.Scope      { return f.policy.Root() }
func (f *frame) Cwd() string           { return f.run.rt.cfg.Cwd }

// Scheduler runs a host's branches on goroutines: a local run has no
// determinism to keep beyond the call order the scopes already fix. A
// branch that panics fails the run (see crash.go).
func (f *frame) Scheduler() lang.Scheduler { return runGoroutines{run: f.run} }

func (f *frame) Agent(ctx context.Context, s lang.Scope, prompt string, opts lang.AgentOptions, done lang.Done) {
	f.run.startAgent(ctx, s.(*scope), prompt, opts, done)
}

func (f *frame) Checkpoint(ctx context.Context, s lang.Scope, req lang.CheckpointRequest, done lang.Done) {
	f.run.startCheckpoint(ctx, s.(*scope), req, done)
}

func (f *frame) Workflow(ctx context.Context, s lang.Scope, ref string, args json.RawMessage, done lang.Done) {
	f.run.startWorkflow(ctx, f, s.(*scope), ref, args, done)
}

func (f *frame) Parallel(s lang.Scope, n int) ([]lang.Scope, error) {
	return f.open(s.(*scope), "par", "parallel()", n)
}

func (f *frame) Pipeline(s lang.Scope, items, stages int) ([]lang.Scope, error) {
	if stages < 1 {
		return nil, fmt.Errorf("pipeline(): give at least one stage function after the items")
	}
	return f.open(s.(*scope), "pipe", "pipeline()", items)
}

// open opens n child scopes for one parallel or pipeline call.
func (f *frame) open(sc *scope, kind, fn string, n int) ([]lang.Scope, error) {
	opened, err := f.run.policy.Open(sc, kind, fn, n)
	if err != nil {
		return nil, err
	}
	scopes := make([]lang.Scope, len(opened))
	for i, s := range opened {
		scopes[i] = s
	}
	return scopes, nil
}

func (f *frame) Stage(item lang.Scope, k int) lang.Scope { return item.(*scope).Stage(k) }

func (f *frame) BranchFailed(s lang.Scope, err error) { f.run.scriptError(s.(*scope), err) }

func (f *frame) Phase(s lang.Scope, title string) {
	sc := s.(*scope)
	sc.SetPhase(title)
	f.run.setPhase(sc, title)
}

func (f *frame) Log(s lang.Scope, level, msg string) { f.run.logLine(s.(*scope), level, msg) }

func (f *frame) Budget() lang.Budget { return f.run.policy.Budget() }
