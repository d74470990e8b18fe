package temporal

import (
	"errors"

	"go.temporal.io/sdk/workflow"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
)

// callControl lets the user stop or restart a running call, as the local
// engine's does: each attempt (an activity) and each wait before a retry
// runs under a workflow context that the CallSignal cancels, and the call
// policy decides what follows from the cause.
type callControl struct {
	cancel  workflow.CancelFunc // of the attempt or wait going on; nil between
	cause   error
	stopped bool
}

// begin starts an attempt or a wait under the control; end lets go of it
// and says whether the user cut it short, and why.
func (k *callControl) begin(wc workflow.Context) (workflow.Context, func() error, error) {
	if k.stopped {
		return nil, nil, callpolicy.ErrCallStopped
	}
	actx, cancel := workflow.WithCancel(wc)
	k.cancel, k.cause = cancel, nil
	return actx, func() error {
		k.cancel = nil
		cause := k.cause
		k.cause = nil
		cancel()
		return cause
	}, nil
}

// act stops (callpolicy.ErrCallStopped) or restarts
// (callpolicy.ErrCallRestarted) the call.
func (k *callControl) act(cause error) {
	if errors.Is(cause, callpolicy.ErrCallStopped) {
		k.stopped = true
	}
	if k.cancel != nil {
		k.cause = cause
		k.cancel()
	}
}

// control applies a CallSignal: a call that is not running is left alone
// (it ended, or waits for a slot).
func (x *execution) control(a CallAction) {
	k, ok := x.controls[a.Path]
	if !ok {
		x.log("", "warn", "no agent call "+a.Path+" is running to "+a.Action)
		return
	}
	switch a.Action {
	case "stop":
		k.act(callpolicy.ErrCallStopped)
	case "restart":
		k.act(callpolicy.ErrCallRestarted)
	}
}

// pauseWhenIdle pauses the execution for reason once no call runs (the
// dollar cap refused a call; those running were within it).
func (x *execution) pauseWhenIdle(reason string) {
	if x.capping {
		return
	}
	x.capping = true
	workflow.Go(x.calls, func(wc workflow.Context) {
		if workflow.Await(wc, func() bool { return x.running == 0 || x.goctx.Err() != nil }) != nil || x.goctx.Err() != nil {
			return
		}
		x.pauseFor(reason)
	})
}
