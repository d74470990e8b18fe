package temporal

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/cost"
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
	// Identity names the worker in its messages (Temporal records it with
	// each call it runs).
	Identity string
	// Logger gets what goes wrong on the worker beside a call's own
	// failure (a worktree that could not be committed, say); none
	// discards it.
	Logger *slog.Logger

	// client is the worker's: its blob store and the histories the seal
	// activity reads (set by NewWorker).
	client *Client
}

// Agent runs one attempt of an agent call on its executor
// (callpolicy.RunAttempt, as a local run does): what to do with its
// failure, a retry, a schema repair, a pause, is the call policy's, in the
// workflow. It heartbeats while the agent runs, so a worker that dies
// loses the call within the heartbeat timeout, and so that a pause or stop
// of the run reaches the agent.
func (a *Activities) Agent(ctx context.Context, in AgentInput) (AgentOutput, error) {
	var out AgentOutput
	exec, err := a.Executors.Get(in.Executor)
	if err != nil {
		msg := fmt.Sprintf("it is not offered by worker %s (%v)", a.Identity, err)
		return out, agentError(errUnavailable, msg, AgentFailure{Message: msg,
			Fix: "offer it on every worker of the task queue: dynworkflow worker --executors …"}, nil)
	}
	compiled, err := engine.CompileSchema(in.Schema)
	if err != nil {
		return out, agentError(errTerminal, err.Error(), AgentFailure{Message: err.Error()}, err)
	}
	var schema callpolicy.Schema
	if compiled != nil {
		schema = compiled
	}
	stop := a.heartbeat(ctx)
	defer stop()

	started := time.Now()
	runID := activity.GetInfo(ctx).WorkflowExecution.ID
	req := executors.Request{
		RunID: runID, Path: in.Path, Prompt: cmp.Or(in.Ask, in.Prompt), Model: in.Model, Effort: in.Effort,
		AgentType: in.AgentType, Isolation: in.Isolation, Permissions: in.Permissions, Schema: in.Schema, Dir: in.Cwd,
		Attempt: in.Attempt,
	}
	var tree *attemptTree
	if in.Isolation == "worktree" {
		if tree, err = a.isolate(ctx, runID, in); err != nil {
			return out, err
		}
		req.Dir = tree.iso.WorkDir()
		out.Earlier = tree.earlier
	}
	bounds := callpolicy.Bounds{Timeout: time.Duration(in.TimeoutMs) * time.Millisecond,
		Idle: time.Duration(in.IdleTimeoutMs) * time.Millisecond, Unreachable: time.Duration(in.UnreachableMs) * time.Millisecond}
	res := callpolicy.RunAttempt(ctx, exec, req, bounds, schema, func(executors.Progress) {})
	out.Usage, out.Provider, out.Model = res.Result.Usage, res.Result.Provider, res.Result.Model
	out.DurMs = time.Since(started).Milliseconds()
	if tree != nil {
		// Before anything else: the edits go on the branch first.
		out.Worktree = a.settle(ctx, tree, ctx.Err() != nil)
	}
	if res.Err == nil {
		if err := a.keep(&out, res.Value, res.Result.History); err != nil {
			msg := "keep the answer: " + err.Error()
			return out, agentError(errInfrastructure, msg, AgentFailure{Usage: out.Usage, Message: msg}, err)
		}
		return out, nil
	}
	if ctx.Err() != nil {
		// Cancelled: the run paused or stopped, or the worker is shutting
		// down. Nothing to report but that.
		return out, ctx.Err()
	}
	detail := AgentFailure{Usage: out.Usage, Message: res.Err.Error(), DurMs: out.DurMs, Worktree: out.Worktree, Earlier: out.Earlier}
	var sv *callpolicy.SchemaViolation
	if errors.As(res.Err, &sv) {
		detail.Reason = sv.Err.Error()
		return out, agentError(errSchema, sv.Error(), detail, nil)
	}
	var ee *executors.Error
	if errors.As(res.Err, &ee) {
		detail.RetryAfter, detail.Fix, detail.Unreachable = ee.RetryAfter, ee.Fix, ee.Unreachable
	}
	detail.TimedOut = errors.Is(res.Err, context.DeadlineExceeded)
	return out, agentError(executors.ClassOf(res.Err).String(), res.Err.Error(), detail, res.Err)
}

// keep puts the answer and the transcript in out, each in the blob store
// when it is too large for a history.
func (a *Activities) keep(out *AgentOutput, value json.RawMessage, history []executors.HistoryItem) error {
	out.Value = value
	if len(value) > inlineLimit {
		key, err := a.client.blobs.Put(value)
		if err != nil {
			return err
		}
		out.Value, out.ValueBlob = nil, key
	}
	if len(history) == 0 {
		return nil
	}
	b, err := json.Marshal(history)
	if err != nil {
		return err
	}
	if len(b) <= inlineLimit {
		out.History = history
		return nil
	}
	out.HistoryBlob, err = a.client.blobs.Put(b)
	return err
}

// Seal writes the page of an execution about to continue as new (see
// rollover.go), from its history and the state it gives, and returns the
// page's key.
func (a *Activities) Seal(ctx context.Context, in SealInput) (string, error) {
	e, err := a.client.readExecution(ctx, in.RunID, in.Execution)
	if err != nil {
		return "", err
	}
	e.state = &in.State
	var prices *cost.Table
	if e.input.Cost != nil {
		prices = e.input.Cost.Prices
	}
	return putPage(a.client.blobs, pageOf(e, in.GaveUp, prices))
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
