package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/lang"
)

// replayMode says how a frame reuses what earlier executions finished, as
// in the local engine.
type replayMode int

const (
	fresh replayMode = iota // the first execution: nothing to replay
	crash                   // same script and args: replay every matching call
	edit                    // edited: the prefix rule applies per scope
)

func modeOf(rule string) replayMode {
	switch rule {
	case "crash":
		return crash
	case "edit":
		return edit
	}
	return fresh
}

func (m replayMode) String() string {
	switch m {
	case crash:
		return "crash"
	case edit:
		return "edit"
	}
	return "fresh"
}

// frame is one workflow running inside an execution: the main script, or a
// child started by workflow(). It is the lang.Env of its script.
type frame struct {
	x      *execution
	path   string // "" for the main script; the frame path for a child
	depth  int
	mode   replayMode
	script lang.Script
	args   json.RawMessage
	root   *scope
}

var _ lang.Env = (*frame)(nil)

func newFrame(x *execution, path string, depth int, mode replayMode, script lang.Script, args json.RawMessage, broken bool, phase string) *frame {
	f := &frame{x: x, path: path, depth: depth, mode: mode, script: script, args: args}
	f.root = &scope{path: path, frame: f, flow: &flow{broken: broken}, phase: phase}
	return f
}

func (f *frame) Args() json.RawMessage     { return f.args }
func (f *frame) Root() lang.Scope          { return f.root }
func (f *frame) Scheduler() lang.Scheduler { return coroutines{} }
func (f *frame) Budget() lang.Budget       { return budgetView{f.x} }
func (f *frame) Cwd() string               { return f.x.in.Cwd }

func (f *frame) Agent(ctx context.Context, s lang.Scope, prompt string, opts lang.AgentOptions, done lang.Done) {
	f.x.startAgent(f, s.(*scope), prompt, opts, lang.BatchOf(ctx), done)
}

func (f *frame) Checkpoint(_ context.Context, s lang.Scope, req lang.CheckpointRequest, done lang.Done) {
	f.x.startCheckpoint(f, s.(*scope), req, done)
}

func (f *frame) Workflow(_ context.Context, s lang.Scope, ref string, args json.RawMessage, done lang.Done) {
	f.x.startWorkflow(f, s.(*scope), ref, args, done)
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
	if limit := f.x.in.Options.MaxItems; n > limit {
		f.x.limitHit(fmt.Sprintf("%s got %d items, over the cap of %d per call", fn, n, limit))
		return nil, engine.ItemLimitError(fn, n, limit)
	}
	scopes := make([]lang.Scope, n)
	for i := range scopes {
		scopes[i] = &scope{path: base + "/" + strconv.Itoa(i), frame: f, flow: &flow{broken: sc.flow.broken}, phase: sc.phase}
	}
	return scopes, nil
}

func (f *frame) Stage(item lang.Scope, k int) lang.Scope { return item.(*scope).stage(k) }

func (f *frame) BranchFailed(s lang.Scope, err error) {
	f.x.log(s.(*scope).path, "warn", fmt.Sprintf("branch %s became null: %v", s.Path(), err))
}

func (f *frame) Phase(s lang.Scope, title string) {
	sc := s.(*scope)
	sc.phase = title
	f.x.state.Phase = title
	f.x.log(sc.path, "phase", title)
}

func (f *frame) Log(s lang.Scope, level, msg string) { f.x.log(s.(*scope).path, level, msg) }

// budgetView is the script's budget object.
type budgetView struct{ x *execution }

func (b budgetView) Total() (int64, bool) {
	return b.x.in.Options.TokenBudget, b.x.in.Options.TokenBudget > 0
}

func (b budgetView) Spent() int64 { return b.x.spent }

func (b budgetView) Remaining() (int64, bool) {
	total, ok := b.Total()
	if !ok {
		return 0, false
	}
	return max(0, total-b.x.spent), true
}
