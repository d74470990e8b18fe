package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Activities run on a worker: the agent calls, with the worker's own
// executors, and the look-up of child workflows in the worker's view of the
// project.
type Activities struct {
	Executors *executors.Set
	Hosts     *lang.Registry
	// StateRoot holds the saved workflows of the state (saved/).
	StateRoot string
	// Identity names the worker in the answers it gives.
	Identity string
	Logger   *slog.Logger
}

// Agent runs one attempt of an agent call on its executor: the run's
// schema repairs happen here, transient failures go back to the workflow,
// which retries them. It heartbeats while the agent runs, so a worker that
// dies loses the call within the heartbeat timeout, and so that a pause or
// stop of the run reaches the agent.
func (a *Activities) Agent(ctx context.Context, in AgentInput) (AgentOutput, error) {
	out := AgentOutput{Worker: a.Identity}
	exec, err := a.Executors.Get(in.Executor)
	if err != nil {
		return out, agentError(errUnavailable, fmt.Sprintf("executor %q is not available on worker %s: %v", in.Executor, a.Identity, err), AgentFailure{}, nil)
	}
	schema, err := engine.CompileSchema(in.Schema)
	if err != nil {
		return out, agentError(errTerminal, err.Error(), AgentFailure{}, err)
	}
	stop := a.heartbeat(ctx)
	defer stop()

	started := time.Now()
	prompt, repairs := in.Prompt, 0
	for {
		out.Attempts++
		req := executors.Request{
			RunID: in.RunID, Path: in.Path, Prompt: prompt, Model: in.Model, Effort: in.Effort,
			AgentType: in.AgentType, Isolation: in.Isolation, Permissions: in.Permissions, Schema: in.Schema, Dir: in.Cwd,
			Attempt: in.Attempt + out.Attempts - 1,
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		var timeout time.Duration
		if in.TimeoutMs > 0 {
			timeout = time.Duration(in.TimeoutMs) * time.Millisecond
			actx, cancel = context.WithTimeout(ctx, timeout)
		}
		res, err := exec.Run(actx, req, func(executors.Progress) {})
		timedOut := actx.Err() != nil && ctx.Err() == nil
		cancel()
		out.Usage = out.Usage.Add(res.Usage)
		out.Provider, out.Model, out.History = res.Provider, res.Model, res.History
		out.DurMs = time.Since(started).Milliseconds()
		if err == nil && timedOut {
			err = context.DeadlineExceeded
		}
		if err != nil {
			if ctx.Err() != nil {
				// Cancelled: the run paused or stopped, or the worker is
				// shutting down. Nothing to report but that.
				return out, ctx.Err()
			}
			if timedOut {
				err = &executors.Error{Class: executors.Transient, Message: "agent timed out after " + timeout.String(), Err: err}
			}
			detail := AgentFailure{Usage: out.Usage, Attempts: out.Attempts, TimedOut: timedOut}
			var ee *executors.Error
			if errors.As(err, &ee) {
				detail.RetryAfter = ee.RetryAfter
			}
			kind := errTerminal
			switch executors.ClassOf(err) {
			case executors.Transient:
				kind = errTransient
			case executors.RateLimited:
				kind = errRateLimited
			}
			return out, agentError(kind, err.Error(), detail, err)
		}
		if schema == nil {
			out.Value, _ = json.Marshal(res.Text)
			return out, nil
		}
		answer := res.Text
		if len(res.Structured) > 0 {
			answer = string(res.Structured)
		}
		value, verr := schema.Validate(answer)
		if verr == nil {
			out.Value = value
			return out, nil
		}
		repairs++
		if repairs >= in.SchemaAttempts {
			err := engine.SchemaError(repairs, verr)
			return out, agentError(errSchema, err.Error(), AgentFailure{Usage: out.Usage, Attempts: repairs, Reason: verr.Error()}, nil)
		}
		prompt = engine.RepairPrompt(in.Prompt, verr, in.Schema)
	}
}

// agentError is a failure the workflow decides about: never retried by
// Temporal. It is benign to Temporal, which then logs it quietly: an
// agent failing is part of a run, not a fault of the worker.
func agentError(kind, msg string, detail AgentFailure, cause error) error {
	return temporal.NewApplicationErrorWithOptions(msg, kind, temporal.ApplicationErrorOptions{
		NonRetryable: true, Cause: cause, Details: []any{detail}, Category: temporal.ApplicationErrorCategoryBenign,
	})
}

// heartbeat records a heartbeat now and then while an agent runs, until
// stop is called. The SDK throttles what it sends; a cancellation of the
// call comes back on a heartbeat's answer and cancels ctx.
func (a *Activities) heartbeat(ctx context.Context) (stop func()) {
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
	}
	// The first beat is due only after a third of the timeout: most agents
	// of a big fan-out finish before then, and a beat is a write on the
	// server.
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(quit); <-done }
}

// ResolveWorkflow finds a child workflow's script as the local engine
// would, in this worker's view of the project, and bundles it.
func (a *Activities) ResolveWorkflow(ctx context.Context, in ResolveInput) (Bundle, error) {
	script, err := engine.ResolveWorkflow(a.Hosts, in.Cwd, store.SavedDirs(a.StateRoot, store.ProjectID(in.Cwd)), in.Ref, in.Dir)
	if err != nil {
		return Bundle{}, temporal.NewNonRetryableApplicationError(err.Error(), "WorkflowNotFound", nil)
	}
	b, _, err := BundleFile(a.Hosts, script.Path())
	if err != nil {
		return Bundle{}, temporal.NewNonRetryableApplicationError(err.Error(), "WorkflowNotFound", nil)
	}
	return b, nil
}
