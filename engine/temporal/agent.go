package temporal

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// maxWorkerLosses bounds how often one attempt of a call may be lost with
// its worker (the heartbeat stops) before the attempt counts as a fault of
// ours, which the call policy retries and, when it persists, pauses the
// run for: an agent that kills every worker it lands on must not go round
// for ever.
const maxWorkerLosses = 10

// agentCall is one live agent() call waiting for, or holding, a slot.
type agentCall struct {
	*callpolicy.Call
	// input is what each attempt's activity gets, but for its prompt and
	// attempt number.
	input AgentInput
	done  lang.Done
	// batch is the fan-out the call was made in, if any (see lang.Batch),
	// and waited says the call found the concurrency cap reached: it
	// waited for a slot, and a cancelled batch ends it before it starts.
	batch  *lang.Batch
	waited bool
}

// startAgent has the call policy fix the call (on the script's coroutine,
// in program order), answers it from an earlier execution when the policy
// says so, and otherwise queues it for a concurrency slot.
func (x *execution) startAgent(sc *scope, prompt string, opts lang.AgentOptions, batch *lang.Batch, done lang.Done) {
	pc, err := x.policy.Agent(x.goctx, sc, prompt, opts)
	if err != nil {
		done(nil, err)
		return
	}
	if p := pc.Prior; p != nil {
		if p.Epoch >= x.in.Chain {
			x.chainReplays++
		}
		done(x.answerOf(p), nil)
		return
	}
	if x.settle(pc, done) {
		return
	}
	c := &agentCall{Call: pc, done: done, batch: batch, input: AgentInput{
		Path: pc.Path, Fingerprint: pc.FP, Prompt: prompt, Label: opts.Label, Phase: pc.Phase,
		Executor: pc.Executor, Model: pc.Model, Effort: pc.Effort, Permissions: pc.Permissions,
		AgentType: opts.AgentType, Isolation: opts.Isolation, Schema: opts.Schema, Cwd: x.in.Cwd,
		TimeoutMs: pc.Timeout.Milliseconds(), IdleTimeoutMs: pc.Bounds().Idle.Milliseconds(), UnreachableMs: pc.Bounds().Unreachable.Milliseconds(),
	}}
	if x.scriptEnded {
		// A child script still makes calls after the main one returned.
		done(nil, callpolicy.ErrScriptEnded)
		return
	}
	c.waited = x.active >= x.in.Options.Concurrency
	x.queue = append(x.queue, c)
	x.pump()
}

// pump starts queued calls, in the order the script made them, while the
// run's concurrency cap allows. The cap counts activities outstanding
// across every worker, so it holds however many workers there are.
func (x *execution) pump() {
	for !x.rolling && x.active < x.in.Options.Concurrency && len(x.queue) > 0 {
		c := x.queue[0]
		x.queue[0] = nil
		x.queue = x.queue[1:]
		x.active++
		workflow.Go(x.calls, func(wc workflow.Context) {
			x.runLive(wc, c)
			x.active--
			x.pump()
		})
	}
}

// runLive runs a call by the call policy, each attempt an activity that
// any worker may take, so that a retry may land on another worker and
// every attempt fits its activity's timeout.
func (x *execution) runLive(wc workflow.Context, c *agentCall) {
	// A sibling met the agent cap while this call waited for a slot. (A
	// call that found a slot is under way, as in the Node runtime.)
	if err := c.batch.Err(); err != nil && c.waited {
		c.done(nil, err)
		return
	}
	if err := c.Begin(x.goctx); err != nil {
		if errors.Is(err, callpolicy.ErrCostCap) {
			// As locally: the run pauses once the calls within the cap
			// have ended, and this one runs on resume.
			x.pauseWhenIdle(x.policy.CapReason())
			_ = workflow.Await(wc, func() bool { return x.goctx.Err() != nil || x.scriptEnded })
			c.done(nil, cmp.Or(context.Cause(x.goctx), callpolicy.ErrScriptEnded))
			return
		}
		c.done(nil, err)
		return
	}
	x.running++
	ctl := &callControl{}
	x.controls[c.Path] = ctl
	defer func() {
		x.running--
		delete(x.controls, c.Path)
	}()
	out := c.RunLive(x.goctx, activities{x: x, wc: wc, c: c, ctl: ctl})
	x.addUsage(out.Usage)
	switch out.Kind {
	case callpolicy.Interrupted:
		// Paused or stopped: the call did not finish and will run again.
		c.done(nil, out.Err)
	case callpolicy.Paused:
		x.pauseFor(out.PauseReason)
		c.done(nil, out.Err)
	case callpolicy.GaveUp:
		x.policy.Counts.Failed.Add(1)
		value, err := c.ForScript(out)
		x.gaveUpWith(c.Call, err)
		c.done(value, err)
	default:
		x.policy.Counts.Live.Add(1)
		c.done(out.Value, nil)
	}
}

// activities runs a call's attempts as activities, and waits between them
// on the workflow's timer.
type activities struct {
	x   *execution
	wc  workflow.Context
	c   *agentCall
	ctl *callControl
}

func (l activities) Launch(_ context.Context, a callpolicy.Attempt) callpolicy.AttemptResult {
	x := l.x
	in := l.c.input
	in.Attempt = a.N
	if a.Prompt != in.Prompt {
		in.Ask = a.Prompt
	}
	wc, end, err := l.ctl.begin(l.wc)
	if err != nil {
		return callpolicy.AttemptResult{Err: err} // stopped between attempts
	}
	var out AgentOutput
	err = workflow.ExecuteActivity(x.activityOptions(wc, l.c, a.N), AgentActivity, in).Get(wc, &out)
	defer x.maybeRoll()
	if cause := end(); cause != nil && x.goctx.Err() == nil {
		// The user stopped or restarted the attempt: what it cost on its
		// worker is not known here.
		return callpolicy.AttemptResult{Err: cause}
	}
	if err == nil {
		value := out.Value
		if out.ValueBlob != "" {
			value = x.blob(out.ValueBlob)
		}
		return callpolicy.AttemptResult{Value: value,
			Result: executors.Result{Usage: out.Usage, Provider: out.Provider, Model: out.Model, History: out.History}}
	}
	f, err := agentFailure(err)
	return callpolicy.AttemptResult{Result: executors.Result{Usage: f.Usage}, Err: err, Took: time.Duration(f.DurMs) * time.Millisecond}
}

func (l activities) Wait(ctx context.Context, d time.Duration) error {
	wc, end, err := l.ctl.begin(l.wc)
	if err != nil {
		return err
	}
	if workflow.Sleep(wc, d) != nil {
		if cause := end(); cause != nil && ctx.Err() == nil {
			return cause
		}
		if err := context.Cause(ctx); err != nil {
			return err
		}
		return l.x.stopped()
	}
	end()
	return nil
}

// Retrying needs nothing more: the history has every attempt, and the
// policy counts the retry.
func (activities) Retrying(callpolicy.Retry) {}

// activityOptions are an attempt's: its id is the call's path (with the
// attempt after the first), a silent worker loses it after the heartbeat
// timeout, and Temporal retries only such losses, never the agent's own
// failures, which the activity reports as non-retryable.
func (x *execution) activityOptions(wc workflow.Context, c *agentCall, attempt int) workflow.Context {
	id := c.Path
	if attempt > 1 {
		id += "#" + strconv.Itoa(attempt)
	}
	startToClose := defaultAgentTimeout
	if c.input.TimeoutMs > 0 {
		// The activity enforces the agent's timeout itself, as a transient
		// failure; this only catches a worker that hangs past it. One
		// activity is one attempt, so it fits.
		startToClose = time.Duration(c.input.TimeoutMs)*time.Millisecond + time.Minute
	}
	return workflow.WithActivityOptions(wc, workflow.ActivityOptions{
		ActivityID:          id,
		StartToCloseTimeout: startToClose,
		HeartbeatTimeout:    x.in.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
			MaximumAttempts:    maxWorkerLosses,
		},
	})
}

// agentFailure turns an activity's failure back into the error the
// executor gave on its worker, as the call policy judges it locally: its
// class, words, fix, Retry-After and whether it ran out of time; a schema
// violation; or, for an attempt Temporal gave up on (its workers kept
// getting lost), a fault of ours.
func agentFailure(err error) (AgentFailure, error) {
	var f AgentFailure
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return f, &executors.Error{Class: executors.Infrastructure,
			Message: "the call was lost with its worker, again and again", Err: err}
	}
	if app.HasDetails() {
		_ = app.Details(&f)
	}
	msg := cmp.Or(f.Message, app.Message())
	class := executors.Terminal
	switch app.Type() {
	case errSchema:
		return f, &callpolicy.SchemaViolation{Err: errors.New(cmp.Or(f.Reason, msg))}
	case errIsolation:
		return f, callpolicy.IsolationUnavailableError(msg)
	case errTransient:
		class = executors.Transient
	case errRateLimited:
		class = executors.RateLimited
	case errUnavailable:
		class = executors.Unavailable
	case errInfrastructure:
		class = executors.Infrastructure
	}
	var out error = &executors.Error{Class: class, Message: msg, Fix: f.Fix, RetryAfter: f.RetryAfter, Unreachable: f.Unreachable}
	if f.TimedOut {
		out = timedOut{out}
	}
	return f, out
}

// timedOut is a failure that ran out of its time on a worker: errors.Is
// finds context.DeadlineExceeded in it, as in the error the local engine
// sees, so that a required call throws AGENT_TIMEOUT on both.
type timedOut struct{ error }

func (e timedOut) Is(target error) bool { return target == context.DeadlineExceeded }
func (e timedOut) Unwrap() error        { return e.error }
