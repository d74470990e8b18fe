package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal/blobs"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// maxLogs bounds the log lines an execution keeps: its state travels as
// one Temporal payload, which has a size limit. The oldest lines go first.
const maxLogs = 2000

// workflows holds what the workflow function needs besides its input.
type workflows struct {
	hosts *lang.Registry
	// blobs holds the answers and ledger pages too large for a history;
	// the workflow reads them by key (see rollover.go).
	blobs *blobs.Store
}

// run is the Temporal workflow function: one execution of a run.
func (w *workflows) run(ctx workflow.Context, in RunInput) (*State, error) {
	x := newExecution(ctx, w.hosts, w.blobs, in)
	if err := workflow.SetQueryHandler(ctx, StateQuery, func() (State, error) { return x.snapshot(), nil }); err != nil {
		return nil, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, RespondUpdate, x.respond,
		workflow.UpdateHandlerOptions{Validator: x.validateResponse}); err != nil {
		return nil, err
	}
	workflow.Go(x.host, func(wc workflow.Context) {
		pauses := workflow.GetSignalChannel(wc, PauseSignal)
		for {
			var p Pause
			pauses.Receive(wc, &p)
			x.pauseFor(p.Reason)
		}
	})
	workflow.Go(x.host, func(wc workflow.Context) {
		actions := workflow.GetSignalChannel(wc, CallSignal)
		for {
			var a CallAction
			actions.Receive(wc, &a)
			x.control(a)
		}
	})
	// Stop is Temporal's cancellation of the workflow. The script runs under
	// a disconnected context, so it hears of it here, in workflow code.
	workflow.Go(ctx, func(wc workflow.Context) {
		wc.Done().Receive(wc, nil)
		x.stop()
	})

	if in.Rule == ruleStop {
		return x.markStopped()
	}
	if in.PauseReason != "" {
		x.pauseFor(in.PauseReason)
	}
	script, err := in.Script.Load(w.hosts)
	if err != nil {
		return x.finish(nil, err)
	}
	x.state.Name, x.meta = script.Meta().Name, script.Meta()
	main := newFrame(x, "", 0, in.Rule, script, in.Args, nil)
	result, err := script.Run(x.goctx, main)
	return x.finish(result, err)
}

// markStopped is a stop execution: it runs nothing, keeps the figures of
// the execution it follows, and ends stopped.
func (x *execution) markStopped() (*State, error) {
	if e := x.in.Ended; e != nil {
		x.state.Phase = e.Phase
		stats := e.Stats
		x.ended = &stats
		x.usage = executors.Usage{InputTokens: e.Stats.InputTokens, CachedInputTokens: e.Stats.CachedInputTokens,
			OutputTokens: e.Stats.OutputTokens, CostUSD: e.Stats.CostUSD}
	}
	x.stop()
	return x.finish(nil, nil)
}

// execution is the state of one execution, owned by workflow code: one
// coroutine runs at a time, so nothing here locks.
type execution struct {
	in    RunInput
	hosts *lang.Registry
	blobs *blobs.Store
	// wf is the workflow's own context, which Temporal cancels on a stop.
	wf workflow.Context
	// host is the workflow context the script and its calls run under. It
	// is disconnected from the workflow's own, so that a stop reaches them
	// only through goctx, at one deterministic point.
	host workflow.Context
	// calls is the context of live calls and their timers: ending the
	// execution cancels it, and the activities with it.
	calls       workflow.Context
	cancelCalls workflow.CancelFunc
	goctx       context.Context
	cancel      context.CancelCauseFunc
	cause       error

	// policy decides what each call does (identity, replay, caps, budget,
	// retries): the rules both backends share.
	policy *callpolicy.Execution
	// meta is the main script's meta (its strict flag).
	meta    lang.Meta
	state   State
	usage   executors.Usage // every live attempt of every execution so far
	running int
	// ended is, for a stop execution, the figures of the execution it
	// follows.
	ended *store.Stats

	queue  []*agentCall
	active int // agent calls holding a concurrency slot
	// scriptEnded is set once the script has returned and the calls under
	// way are finishing: nothing new starts.
	scriptEnded bool
	// capping is set once the dollar cap refused a call: the execution
	// pauses when the calls running end.
	capping bool
	// controls holds the running calls' stop and restart (CallSignal).
	controls    map[string]*callControl
	checkpoints []*Checkpoint
	waiting     map[string]*waitingCheckpoint

	// What continuing as new needs (rollover.go): whether the execution is
	// rolling over, the calls that gave up, the calls the chain settled
	// that way, how many answers of the chain were replayed, and the child
	// scripts found.
	rolling      bool
	gaveUp       []GaveUp
	settled      map[string]GaveUp
	chainReplays int
	children     map[string]Bundle
	pauseNext    error
	// said counts the chain's log lines (without their time) that the
	// script has not said again yet.
	said map[engine.LogLine]int
}

func newExecution(ctx workflow.Context, hosts *lang.Registry, store *blobs.Store, in RunInput) *execution {
	host, _ := workflow.NewDisconnectedContext(ctx)
	calls, cancelCalls := workflow.WithCancel(host)
	goctx, cancel := context.WithCancelCause(withWorkflow(context.Background(), host))
	x := &execution{
		in: in, hosts: hosts, blobs: store, wf: ctx, host: host, calls: calls, cancelCalls: cancelCalls, goctx: goctx, cancel: cancel,
		waiting: map[string]*waitingCheckpoint{}, settled: map[string]GaveUp{}, children: map[string]Bundle{},
		controls: map[string]*callControl{},
	}
	x.state = State{RunID: in.RunID, Name: in.Name, Epoch: in.Epoch, Status: engine.StatusRunning, StartedAt: workflow.Now(ctx)}
	ledger := x.loadLedger()
	limits := in.Options.CallLimits()
	limits.Cost = in.Cost
	x.policy = callpolicy.NewExecution(in.RunID, in.Epoch, limits, ledger, workflowHost{x})
	// The dollar cap counts what every earlier execution cost.
	x.policy.SetSpentUSD(x.usage.CostUSD)
	if c := in.Carry; c != nil {
		x.policy.SpendTokens(c.Spent)
		x.state.Usage, x.state.StartedAt, x.state.Phase, x.state.Logs = c.Usage, c.StartedAt, c.Phase, c.Logs
		// The script says again what it said before the execution it
		// continues ended, as it replays: each such line is said once.
		x.said = map[engine.LogLine]int{}
		for _, l := range c.Logs {
			l.Time = time.Time{}
			x.said[l]++
		}
	}
	return x
}

// workflowHost is what the call policy asks of an execution on Temporal.
type workflowHost struct{ x *execution }

// Defaults is the executor's configuration on the machine that started or
// resumed the run (RunInput.Defaults).
func (h workflowHost) Defaults(executor string) executors.Defaults { return h.x.in.Defaults[executor] }

func (h workflowHost) Schema(raw json.RawMessage) (callpolicy.Schema, error) {
	s, err := engine.CompileSchema(raw)
	if s == nil || err != nil {
		return nil, err
	}
	return s, nil
}

func (h workflowHost) LimitHit(_, msg string)                { h.x.limitHit(msg) }
func (h workflowHost) Warn(sc *callpolicy.Scope, msg string) { h.x.log(sc.Prefix(), "warn", msg) }

// now is the workflow's deterministic clock.
func (x *execution) now() time.Time { return workflow.Now(x.host) }

// log records a narrator line, a phase change or a warning.
func (x *execution) log(path, level, msg string) {
	if k := (engine.LogLine{Scope: path, Level: level, Message: msg}); x.said[k] > 0 {
		x.said[k]--
		return
	}
	if len(x.state.Logs) >= maxLogs {
		x.state.Logs = slices.Delete(x.state.Logs, 0, len(x.state.Logs)-maxLogs+1)
	}
	x.state.Logs = append(x.state.Logs, engine.LogLine{Time: x.now().UTC(), Scope: path, Level: level, Message: msg})
}

// scriptError counts a branch at sc that threw and became null, and says
// so in the log, as a local run does; a strict run fails instead.
func (x *execution) scriptError(sc *scope, err error) {
	e := engine.ScriptErrorOf(sc.Path(), err)
	x.state.ScriptErrors = engine.AddScriptError(x.state.ScriptErrors, e)
	x.log(sc.Path(), "warn", e.Line())
	if engine.Strict(x.in.Options, x.meta) {
		x.end(&engine.StrictFailure{ScriptError: e})
	}
}

// limitHit reports a limit the run ran into, so it is never silent.
func (x *execution) limitHit(msg string) { x.log("", "warn", "limit reached: "+msg) }

// pauseFor pauses the execution with a reason the user will see: live
// calls are cancelled, and a resume replays what finished.
func (x *execution) pauseFor(reason string) {
	if errors.Is(x.cause, errRollover) {
		// Too late to cancel anything: the continuation pauses.
		x.pauseNext = &pauseCause{reason: reason}
		return
	}
	x.end(&pauseCause{reason: reason})
}

// stop ends the execution for good.
func (x *execution) stop() { x.end(engine.ErrStopped) }

// end cancels the script and every live call; the first cause wins, except
// that a stop outranks a pause.
func (x *execution) end(cause error) {
	if x.cause == nil || (errors.Is(cause, engine.ErrStopped) && !errors.Is(x.cause, engine.ErrStopped)) {
		x.cause = cause
	}
	x.cancel(x.cause)
	x.cancelCalls()
}

// finishCallsUnderWay lets the calls that hold a slot finish, their
// answers recorded, once the script has returned (see
// callpolicy.FinishesCallsUnderWay); those still queued never start. A
// pause or a stop meanwhile interrupts them, as it would have before.
func (x *execution) finishCallsUnderWay() {
	x.scriptEnded = true
	queued := x.queue
	x.queue = nil
	for _, c := range queued {
		c.done(nil, callpolicy.ErrScriptEnded)
	}
	if x.active > 0 {
		x.log("", "info", callpolicy.FinishingCallsLine(x.active))
	}
	_ = workflow.Await(x.host, func() bool { return x.active == 0 || x.goctx.Err() != nil })
}

// errExecutionEnded cancels what the script left behind when it returned.
var errExecutionEnded = errors.New("execution ended")

// pauseCause is a pause with a reason.
type pauseCause struct{ reason string }

func (p *pauseCause) Error() string { return "run paused: " + p.reason }
func (p *pauseCause) Unwrap() error { return engine.ErrPaused }

// finish settles the execution's status and returns it as the workflow's
// outcome: completed and paused executions complete, a failed one fails,
// and a stopped one is cancelled, each carrying its State.
func (x *execution) finish(result json.RawMessage, err error) (*State, error) {
	cause := x.cause
	if callpolicy.FinishesCallsUnderWay(cause) {
		x.finishCallsUnderWay()
	}
	x.end(errExecutionEnded)
	st := &x.state
	switch {
	case errors.Is(cause, errRollover):
		if can := x.continueAsNew(); can != nil {
			return nil, can
		}
		return x.finish(result, err) // stopped while it sealed its page
	case errors.Is(cause, engine.ErrStopped):
		st.Status, err = engine.StatusStopped, nil
	case errors.Is(cause, engine.ErrPaused):
		st.Status, err = engine.StatusPaused, nil
		var p *pauseCause
		if errors.As(cause, &p) {
			st.PauseReason = p.reason
		}
	case errors.As(cause, new(*engine.StrictFailure)):
		st.Status = engine.StatusFailed
		st.Error = cause.Error()
	case err != nil:
		st.Status = engine.StatusFailed
		st.Error = err.Error()
	default:
		st.Status = engine.StatusCompleted
		st.Result = result
	}
	x.running = 0
	for _, cp := range x.checkpoints {
		cp.Pending = false
	}
	final := x.snapshot()
	final.EndedAt = x.now().UTC()
	switch final.Status {
	case engine.StatusStopped:
		if x.wf.Err() == nil {
			// Stopped without Temporal's cancellation: a run marked stopped
			// after it had ended (see RunInput.Rule). Temporal would take a
			// cancelled error then for a failure.
			return &final, nil
		}
		return nil, temporal.NewCanceledError(final)
	case engine.StatusFailed:
		return nil, temporal.NewApplicationErrorWithOptions(final.Error, scriptFailed,
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{final}})
	}
	return &final, nil
}

// scriptFailed is the type of the error a failed execution fails with.
const scriptFailed = "ScriptFailed"

// snapshot is the execution's State as the query reports it.
func (x *execution) snapshot() State {
	st := x.state
	n := &x.policy.Counts
	if x.ended != nil {
		st.Stats = *x.ended
	} else {
		// The chain's answers it replayed ran live in the chain, which
		// this execution goes on with.
		st.Stats.Replayed, st.Stats.Live, st.Stats.Failed = int(n.Replayed.Load())-x.chainReplays, int(n.Live.Load())+x.chainReplays, int(n.Failed.Load())
		st.Stats.Retried = int(n.Retried.Load())
		if c := x.in.Carry; c != nil {
			st.Stats.Retried += c.Retried
		}
		st.Stats.ScriptErrors = engine.CountScriptErrors(st.ScriptErrors)
	}
	st.Stats.Agents = st.Stats.Replayed + st.Stats.Live + st.Stats.Failed
	st.Stats.Running = x.running
	st.Calls = int(min(x.policy.Agents(), int64(x.in.Options.MaxAgents)))
	st.Stats.InputTokens, st.Stats.CachedInputTokens = x.usage.InputTokens, x.usage.CachedInputTokens
	st.Stats.OutputTokens, st.Stats.CostUSD = x.usage.OutputTokens, x.usage.CostUSD
	st.Logs = slices.Clone(st.Logs)
	st.ScriptErrors = engine.SortScriptErrors(st.ScriptErrors)
	st.Children = slices.Clone(st.Children)
	st.Checkpoints = make([]Checkpoint, len(x.checkpoints))
	for i, cp := range x.checkpoints {
		st.Checkpoints[i] = *cp
	}
	return st
}

// addUsage counts what a live attempt cost in the run's totals (the call
// policy counts it against the budget).
func (x *execution) addUsage(u executors.Usage) {
	x.usage = x.usage.Add(u)
	x.state.Usage = x.state.Usage.Add(u)
}

// stopped is the error a call gets when the execution is ending.
func (x *execution) stopped() error {
	if x.cause != nil {
		return x.cause
	}
	return fmt.Errorf("%w: the execution is ending", engine.ErrStopped)
}
