package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/dynworkflow/dynworkflow/lang"
)

// frame is one workflow running inside a run: the main script, or a child
// started by workflow(). It implements lang.Env for its script. Each frame
// has its own replay mode, because a child script can change while its
// parent does not.
type frame struct {
	run    *Run
	path   string // "" for the main script; the workflow() call's path for a child
	depth  int
	mode   replayMode
	script lang.Script
	args   json.RawMessage
	root   *scope
}

func newFrame(r *Run, path string, depth int, mode replayMode, script lang.Script, args json.RawMessage, broken bool, phase string) *frame {
	f := &frame{run: r, path: path, depth: depth, mode: mode, script: script, args: args}
	f.root = &scope{path: path, frame: f, flow: &flow{broken: broken}, phase: phase}
	return f
}

var _ lang.Env = (*frame)(nil)

func (f *frame) Args() json.RawMessage { return f.args }
func (f *frame) Root() lang.Scope      { return f.root }
func (f *frame) Cwd() string           { return f.run.rt.cfg.Cwd }

// Scheduler runs a host's branches on goroutines: a local run has no
// determinism to keep beyond the call order the scopes already fix. A
// branch that panics fails the run (see crash.go).
func (f *frame) Scheduler() lang.Scheduler { return runGoroutines{run: f.run} }

func (f *frame) Agent(ctx context.Context, s lang.Scope, prompt string, opts lang.AgentOptions, done lang.Done) {
	f.run.startAgent(ctx, f, s.(*scope), prompt, opts, done)
}

func (f *frame) Checkpoint(ctx context.Context, s lang.Scope, req lang.CheckpointRequest, done lang.Done) {
	f.run.startCheckpoint(ctx, f, s.(*scope), req, done)
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
	base := sc.path + "/" + sc.next(kind)
	if limit := f.run.opts.MaxItems; n > limit {
		f.run.limitHit("items", fmt.Sprintf("%s got %d items, over the cap of %d per call", fn, n, limit))
		return nil, ItemLimitError(fn, n, limit)
	}
	broken, phase := sc.flow.isBroken(), sc.currentPhase()
	scopes := make([]lang.Scope, n)
	for i := range scopes {
		scopes[i] = &scope{path: base + "/" + strconv.Itoa(i), frame: f, flow: &flow{broken: broken}, phase: phase}
	}
	return scopes, nil
}

func (f *frame) Stage(item lang.Scope, k int) lang.Scope { return item.(*scope).stage(k) }

func (f *frame) BranchFailed(s lang.Scope, err error) {
	f.run.logLine(s.(*scope), "warn", fmt.Sprintf("branch %s became null: %v", s.Path(), err))
}

func (f *frame) Phase(s lang.Scope, title string) {
	sc := s.(*scope)
	sc.setPhase(title)
	f.run.setPhase(sc, title)
}

func (f *frame) Log(s lang.Scope, level, msg string) { f.run.logLine(s.(*scope), level, msg) }

func (f *frame) Budget() lang.Budget { return budgetView{f.run} }

// budgetView is the script's budget object.
type budgetView struct{ r *Run }

func (b budgetView) Total() (int64, bool) {
	return b.r.opts.TokenBudget, b.r.opts.TokenBudget > 0
}

func (b budgetView) Spent() int64 { return b.r.spent.Load() }

func (b budgetView) Remaining() (int64, bool) {
	total, ok := b.Total()
	if !ok {
		return 0, false
	}
	return max(0, total-b.Spent()), true
}
