package temporal

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/lang"
)

// ChildInfo is a child workflow an execution ran.
type ChildInfo struct {
	engine.ScriptInfo
	Args json.RawMessage `json:"args,omitempty"`
}

// startWorkflow runs a child workflow inside this execution, one level
// deep, as the local engine does: it shares the run's concurrency, agent
// cap and budget, and its calls live under the workflow() call's path. A
// child Temporal workflow would give it none of that for free, and its
// calls would belong to another execution's history.
//
// The child's script is found on a worker (a local activity, so the answer
// is recorded in the history and a replay does not look again) and comes
// back as a bundle.
func (x *execution) startWorkflow(f *frame, sc *scope, ref string, args json.RawMessage, done lang.Done) {
	elem := sc.Next("wf")
	if x.goctx.Err() != nil {
		done(nil, x.stopped())
		return
	}
	if err := callpolicy.Nest(f.depth, ref); err != nil {
		done(nil, err)
		return
	}
	call := sc.Prefix() + "/" + elem
	workflow.Go(x.calls, func(wc workflow.Context) {
		b, found := x.in.Children[call]
		if !found {
			lctx := workflow.WithLocalActivityOptions(wc, workflow.LocalActivityOptions{
				StartToCloseTimeout: time.Minute,
				RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
			})
			in := ResolveInput{Ref: ref, Dir: filepath.Dir(f.script.Path()), Cwd: x.in.Cwd}
			if err := workflow.ExecuteLocalActivity(lctx, ResolveActivity, in).Get(wc, &b); err != nil {
				if x.goctx.Err() != nil {
					done(nil, x.stopped())
					return
				}
				done(nil, fmt.Errorf("workflow(%q): %s", ref, failureMessage(err)))
				return
			}
		}
		// The chain this execution belongs to runs these files from now
		// on (RunInput.Children).
		x.children[call] = b
		script, err := b.Load(x.hosts)
		if err != nil {
			done(nil, fmt.Errorf("workflow(%q): %w", ref, err))
			return
		}
		framePath := callpolicy.ChildFramePath(sc, elem, script.Meta().Name)
		child := newFrame(x, framePath, f.depth+1, "", script, args, sc)
		child.rule = x.policy.Ledger().Rule(framePath, child.policy.Identity, f.rule)
		x.state.Children = append(x.state.Children, ChildInfo{ScriptInfo: engine.ScriptInfo{
			Frame: framePath, Name: script.Meta().Name, Path: script.Path(), Hash: script.Hash()}, Args: args})
		x.log(sc.Prefix(), "info", fmt.Sprintf("workflow %s started (%s)", script.Meta().Name, child.rule))
		done(script.Run(withWorkflow(x.goctx, wc), child))
	})
}

// failureMessage is the message of the innermost failure: the worker's
// own words, not Temporal's wrapping.
func failureMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	return err.Error()
}
