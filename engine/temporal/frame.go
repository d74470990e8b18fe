package temporal

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/lang"
)

// frame is one workflow running inside an execution: the main script, or a
// child started by workflow(). It is the lang.Env of its script.
type frame struct {
	x      *execution
	path   string // "" for the main script; the frame path for a child
	depth  int
	rule   string // how it resumed (callpolicy.RuleCrash, ...), for the log
	script lang.Script
	args   json.RawMessage
	policy *callpolicy.Frame
}

var _ lang.Env = (*frame)(nil)

// newFrame returns the frame at path running script with args; parent is
// the scope of its workflow() call, nil for the main script.
func newFrame(x *execution, path string, depth int, rule string, script lang.Script, args json.RawMessage, parent *scope) *frame {
	return &frame{x: x, path: path, depth: depth, rule: rule, script: script, args: args,
		policy: callpolicy.NewFrame(path, callpolicy.IdentityOf(script.Hash(), args), script.Meta(), parent)}
}

func (f *frame) Args() json.RawMessage     { return f.args }
func (f *frame) Root() lang.Scope          { return f.policy.Root() }
func (f *frame) Scheduler() lang.Scheduler { return coroutines{} }
func (f *frame) Budget() lang.Budget       { return f.x.policy.Budget() }
func (f *frame) Cwd() string               { return f.x.in.Cwd }

func (f *frame) Agent(ctx context.Context, s lang.Scope, prompt string, opts lang.AgentOptions, done lang.Done) {
	f.x.startAgent(s.(*scope), prompt, opts, lang.BatchOf(ctx), done)
}

func (f *frame) Checkpoint(_ context.Context, s lang.Scope, req lang.CheckpointRequest, done lang.Done) {
	f.x.startCheckpoint(s.(*scope), req, done)
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
	opened, err := f.x.policy.Open(sc, kind, fn, n)
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

func (f *frame) BranchFailed(s lang.Scope, err error) { f.x.scriptError(s.(*scope), err) }

func (f *frame) Phase(s lang.Scope, title string) {
	sc := s.(*scope)
	sc.SetPhase(title)
	f.x.state.Phase = title
	f.x.log(sc.Prefix(), "phase", title)
}

func (f *frame) Log(s lang.Scope, level, msg string) { f.x.log(s.(*scope).Prefix(), level, msg) }
