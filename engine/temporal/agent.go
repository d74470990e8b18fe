package temporal

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// maxWorkerLosses bounds how often one attempt of a call may be lost with
// its worker (the heartbeat stops) before the call fails: an agent that
// kills every worker it lands on must not go round for ever.
const maxWorkerLosses = 10

// agentCall is one live agent() call waiting for, or holding, a slot.
type agentCall struct {
	path  string
	input AgentInput
	opts  lang.AgentOptions
	done  lang.Done
	// batch is the fan-out the call was made in, if any (see lang.Batch),
	// and waited says the call found the concurrency cap reached: it
	// waited for a slot, and a cancelled batch ends it before it starts.
	batch  *lang.Batch
	waited bool
}

// errIsolationOnTemporal is the error of an agent() call that asks for a
// worktree on this backend.
var errIsolationOnTemporal = errors.New("agent(): isolation: 'worktree' is not available with --backend temporal: " +
	"a worker may not have the project's git repository; run this workflow locally (without --backend temporal) or drop the option")

// startAgent fixes the call's identity (in program order, on the script's
// coroutine), answers it from an earlier execution when it finished there,
// and otherwise queues it for a concurrency slot. The checks and their
// order are the local engine's (engine/agent.go).
func (x *execution) startAgent(f *frame, sc *scope, prompt string, opts lang.AgentOptions, batch *lang.Batch, done lang.Done) {
	for _, k := range opts.Ignored {
		if !x.ignored[k] {
			x.ignored[k] = true
			x.log(sc.path, "warn", lang.IgnoredOption(k))
		}
	}
	path := sc.callPath("agent")
	if x.goctx.Err() != nil {
		// The execution is ending: the call changes nothing, not even the
		// state the workflow returns.
		done(nil, x.stopped())
		return
	}
	x.agents++
	if max := x.in.Options.MaxAgents; x.agents > max {
		x.limitHit(fmt.Sprintf("agent call %d is over the cap of %d agents per run", x.agents, max))
		done(nil, engine.AgentLimitError(max))
		return
	}
	if opts.Isolation == "worktree" {
		// Never a silent fallback to a shared checkout: the worktree
		// would have to be made on whichever worker runs the agent, from
		// a repository that machine may not have.
		done(nil, errIsolationOnTemporal)
		return
	}
	schema, err := engine.CompileSchema(opts.Schema)
	if err != nil {
		done(nil, engine.BadSchemaError(err))
		return
	}
	var canonical []byte
	if schema != nil {
		canonical = schema.Canonical()
	}
	executor := opts.Executor
	if executor == "" {
		executor = x.in.Options.Executor
	}
	phase := opts.Phase
	if phase == "" {
		phase = sc.phase
	}
	// Model and permissions resolve as locally, but for the executor's
	// configuration, which is the worker's: it fills what is left empty.
	resolved := opts
	if executor == x.in.Options.Executor {
		resolved.Model = cmp.Or(opts.Model, x.in.Options.Model)
	}
	resolved.Permissions = string(cmp.Or(executors.Permissions(opts.Permissions),
		executors.AgentTypePermissions(opts.AgentType), x.in.Options.Permissions))
	fp := engine.AgentFingerprint(prompt, executor, resolved, canonical)
	if p, ok := x.lookup(sc, path, fp, f.mode); ok {
		x.replayed++
		x.spent += p.Usage.Total()
		done(p.Result, nil)
		return
	}
	var timeoutMs int64
	if t := x.in.Options.AgentTimeout; t > 0 {
		timeoutMs = t.Milliseconds()
	}
	if opts.TimeoutMs != nil {
		timeoutMs = *opts.TimeoutMs
	}
	c := &agentCall{path: path, opts: opts, done: done, batch: batch, input: AgentInput{
		RunID: x.in.RunID, Path: path, Fingerprint: fp, Prompt: prompt, Label: opts.Label, Phase: phase,
		Executor: executor, Model: resolved.Model, Effort: opts.Effort, Permissions: executors.Permissions(resolved.Permissions),
		AgentType: opts.AgentType, Isolation: opts.Isolation,
		Schema: opts.Schema, Cwd: x.in.Cwd, SchemaAttempts: x.in.Options.SchemaAttempts, TimeoutMs: timeoutMs,
	}}
	c.waited = x.active >= x.in.Options.Concurrency
	x.queue = append(x.queue, c)
	x.pump()
}

// pump starts queued calls, in the order the script made them, while the
// run's concurrency cap allows. The cap counts activities outstanding
// across every worker, so it holds however many workers there are.
func (x *execution) pump() {
	for x.active < x.in.Options.Concurrency && len(x.queue) > 0 {
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

// runLive runs a call as activities until it has an answer: one activity
// per attempt, the transient failures retried here with the run's backoff
// so that each retry may land on another worker.
func (x *execution) runLive(wc workflow.Context, c *agentCall) {
	if x.goctx.Err() != nil {
		c.done(nil, x.stopped())
		return
	}
	// A sibling met the agent cap while this call waited for a slot. (A
	// call that found a slot is under way, as in the Node runtime.)
	if err := c.batch.Err(); err != nil && c.waited {
		c.done(nil, err)
		return
	}
	if err := x.checkBudget(); err != nil {
		c.done(nil, err)
		return
	}
	retries := x.in.Options.AgentRetries
	if c.opts.Retries != nil {
		retries = *c.opts.Retries
	}
	x.running++
	defer func() { x.running-- }()
	for attempt := 1; ; attempt++ {
		in := c.input
		in.Attempt = attempt
		var out AgentOutput
		err := workflow.ExecuteActivity(x.activityOptions(wc, c, attempt), AgentActivity, in).Get(wc, &out)
		if err == nil {
			x.addUsage(out.Usage)
			x.live++
			c.done(out.Value, nil)
			return
		}
		if x.goctx.Err() != nil {
			// Paused or stopped: the call did not finish and will run again.
			c.done(nil, x.stopped())
			return
		}
		failure, kind, msg := agentFailure(err)
		x.addUsage(failure.Usage)
		switch kind {
		case errTransient:
			if attempt <= retries {
				if workflow.Sleep(wc, x.backoff(attempt, failure.RetryAfter)) != nil {
					c.done(nil, x.stopped())
					return
				}
				continue
			}
		case errRateLimited:
			x.pauseFor("rate limited: " + msg)
			c.done(nil, engine.RateLimitError(msg))
			return
		case errUnavailable:
			x.pauseFor(msg)
			c.done(nil, fmt.Errorf("%w: %s", engine.ErrPaused, msg))
			return
		case errSchema:
			x.failed++
			c.done(nil, engine.SchemaError(failure.Attempts, errors.New(failure.Reason)))
			return
		}
		x.failed++
		if c.opts.Required {
			c.done(nil, engine.RequiredError(errors.New(msg), failure.TimedOut))
			return
		}
		c.done(json.RawMessage("null"), nil)
		return
	}
}

// activityOptions are an attempt's: its id is the call's path (with the
// attempt after the first), a silent worker loses it after the heartbeat
// timeout, and Temporal retries only such losses, never the agent's own
// failures, which the activity reports as non-retryable.
func (x *execution) activityOptions(wc workflow.Context, c *agentCall, attempt int) workflow.Context {
	id := c.path
	if attempt > 1 {
		id += "#" + strconv.Itoa(attempt)
	}
	startToClose := defaultAgentTimeout
	if c.input.TimeoutMs > 0 {
		// The activity enforces the agent's timeout itself, as a transient
		// failure; this only catches a worker that hangs past it.
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

// agentFailure reads what an activity's failure says: the agent's own
// failure class and details, or "terminal" for a call Temporal gave up on.
func agentFailure(err error) (AgentFailure, string, string) {
	var f AgentFailure
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		if app.HasDetails() {
			_ = app.Details(&f)
		}
		return f, app.Type(), app.Message()
	}
	return f, errTerminal, "the call was lost: " + err.Error()
}

func (x *execution) checkBudget() error {
	budget := x.in.Options.TokenBudget
	if budget <= 0 || x.spent < budget {
		return nil
	}
	x.limitHit(fmt.Sprintf("%d of %d tokens spent", x.spent, budget))
	return engine.BudgetError(x.spent, budget)
}

// backoff is how long to wait before retry n: what the executor asked
// for, else exponential from the run's base, capped at 30 seconds.
func (x *execution) backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	return min(x.in.Options.RetryBackoff<<(n-1), 30*time.Second)
}
