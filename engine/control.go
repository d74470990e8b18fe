package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/executors"
)

// callControl lets the user stop or restart a call while it runs: each
// attempt, and each wait before a retry, runs under a context that a stop
// or a restart cancels with its cause (callpolicy.ErrCallStopped,
// ErrCallRestarted), and the call policy decides what follows.
type callControl struct {
	mu      sync.Mutex
	cancel  context.CancelCauseFunc // of the attempt or wait going on; nil between
	stopped bool
}

// begin starts an attempt or a wait under the control. end lets go of it
// and says whether the user cut it short, and why.
func (k *callControl) begin(ctx context.Context) (actx context.Context, end func() error, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return nil, nil, callpolicy.ErrCallStopped
	}
	actx, cancel := context.WithCancelCause(ctx)
	k.cancel = cancel
	return actx, func() error {
		k.mu.Lock()
		k.cancel = nil
		k.mu.Unlock()
		cause := context.Cause(actx)
		cancel(nil)
		if errors.Is(cause, callpolicy.ErrCallStopped) || errors.Is(cause, callpolicy.ErrCallRestarted) {
			return cause
		}
		return nil
	}, nil
}

// act stops (callpolicy.ErrCallStopped) or restarts
// (callpolicy.ErrCallRestarted) the call.
func (k *callControl) act(cause error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if errors.Is(cause, callpolicy.ErrCallStopped) {
		k.stopped = true
	}
	if k.cancel != nil {
		k.cancel(cause)
	}
}

// StopCall stops the agent call at path, which must be running: its
// attempt is killed, and the script gets null from it (a required call
// throws), as from a call that failed for good; it is journaled as failed,
// with class "stopped", so a resume runs it again.
func (r *Run) StopCall(path string) error { return r.controlCall(path, callpolicy.ErrCallStopped) }

// RestartCall kills the running attempt of the agent call at path and runs
// it again at once; what the killed attempt cost stays counted.
func (r *Run) RestartCall(path string) error { return r.controlCall(path, callpolicy.ErrCallRestarted) }

func (r *Run) controlCall(path string, cause error) error {
	v, ok := r.controls.Load(path)
	if !ok {
		return fmt.Errorf("%w: no agent call %s is running in %s (a call waiting for a slot has not started; one that ended cannot be stopped)",
			ErrCallNotRunning, path, r.id)
	}
	v.(*agentCall).ctl.act(cause)
	return nil
}

// StopCall stops a running agent call of a run executing here (see
// Run.StopCall).
func (rt *Runtime) StopCall(id, path string) error {
	r, ok := rt.Live(id)
	if !ok {
		return rt.notLive(id)
	}
	return r.StopCall(path)
}

// RestartCall restarts a running agent call of a run executing here (see
// Run.RestartCall).
func (rt *Runtime) RestartCall(id, path string) error {
	r, ok := rt.Live(id)
	if !ok {
		return rt.notLive(id)
	}
	return r.RestartCall(path)
}

// RunningCalls lists the paths of the agent calls running now.
func (r *Run) RunningCalls() []string {
	var out []string
	r.controls.Range(func(k, _ any) bool {
		out = append(out, k.(string))
		return true
	})
	return out
}

// giveAnswer journals the answer a fork gave an agent call instead of
// running it, and hands it to the script once it is durable.
func (r *Run) giveAnswer(c *agentCall) {
	rec := &record{Type: recFinished, Path: c.Path, Kind: "agent", Fingerprint: c.FP, Result: c.Given,
		Call:   &callInfo{Label: c.Opts.Label, Phase: c.Phase, Prompt: c.Prompt, Executor: c.Executor, Model: c.Model, Effort: c.Effort},
		Answer: &answerInfo{Source: sourceGiven}}
	r.calls.Add(1)
	r.appendThen(rec, func(err error) {
		defer r.calls.Done()
		if err != nil {
			r.fail(fmt.Errorf("journal call %s: %w", c.Path, err))
			c.done(nil, err)
			return
		}
		r.settled.note(c, c.Given, executors.Usage{}, nil)
		r.rt.bus.Publish(r.id, EventCallFinished, CallPayload{Path: c.Path, Label: c.Opts.Label, Phase: c.Phase, Executor: c.Executor}.
			withPrompt(c.Prompt).withResult(c.Given))
		c.done(c.Given, nil)
	})
}

// pauseWhenIdle pauses the run with cause once no call runs: the dollar
// cap or a spent quota let the running calls start, so they finish, and
// the run pauses after them. The first cause wins.
func (r *Run) pauseWhenIdle(cause *pauseCause) {
	r.capOnce.Do(func() {
		go func() {
			for r.running.Load() > 0 {
				select {
				case <-r.idle:
				case <-r.ctx.Done():
					return
				}
			}
			r.cancel(cause)
		}()
	})
}

// poke wakes pauseWhenIdle after a call ended.
func (r *Run) poke() {
	select {
	case r.idle <- struct{}{}:
	default:
	}
}

// publishSpend tells clients what the run has spent, against its cap.
func (r *Run) publishSpend() {
	_, held, limit := r.policy.Spend()
	r.mu.Lock()
	u := r.usage
	r.mu.Unlock()
	r.rt.bus.Publish(r.id, EventRunSpend, SpendPayload{CostUSD: u.CostUSD, ExpectedUSD: held, MaxCostUSD: limit,
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens})
}
