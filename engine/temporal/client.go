package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal/blobs"
	"github.com/dynworkflow/dynworkflow/engine/temporal/index"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Config says which Temporal to use.
type Config = index.Config

// Entry is one run in a project's index of its runs on Temporal.
type Entry = index.Entry

// Client starts, follows and controls runs on Temporal.
type Client struct {
	cfg   Config
	sdk   client.Client
	hosts *lang.Registry
	// blobs keeps what is too large for a history; dc reads and writes
	// payloads through it.
	blobs *blobs.Store
	dc    converter.DataConverter
}

// Dial connects to the Temporal frontend of cfg, with the blob store of
// cfg.Blobs. log receives the SDK's own logs; nil discards them.
func Dial(ctx context.Context, cfg Config, hosts *lang.Registry, log *slog.Logger) (*Client, error) {
	cfg = cfg.WithDefaults()
	if cfg.Address == "" {
		return nil, errors.New("no Temporal address: pass --temporal-address HOST:PORT")
	}
	if cfg.Blobs == "" {
		return nil, errors.New("no blob store: pass --blob-dir DIR")
	}
	store, err := blobs.Open(cfg.Blobs)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dc := dataConverter(store)
	c, err := client.DialContext(ctx, client.Options{
		HostPort:      cfg.Address,
		Namespace:     cfg.Namespace,
		Logger:        sdklog.NewStructuredLogger(log),
		DataConverter: dc,
	})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", cfg.Address, err)
	}
	return &Client{cfg: cfg, sdk: c, hosts: hosts, blobs: store, dc: dc}, nil
}

// Close closes the connection.
func (c *Client) Close() { c.sdk.Close() }

// SDK is the Temporal client, for a worker to share.
func (c *Client) SDK() client.Client { return c.sdk }

// Config is the configuration the client was dialled with.
func (c *Client) Config() Config { return c.cfg }

// StartRequest starts a new run.
type StartRequest struct {
	Bundle  Bundle
	Script  lang.Script // the bundle, loaded
	Args    json.RawMessage
	Options engine.Options
	// Cwd is the project directory.
	Cwd string
	// Human makes checkpoints wait for a response.
	Human bool
	// Heartbeat is the agents' heartbeat timeout; 0 means DefaultHeartbeat.
	Heartbeat time.Duration
	// Defaults is the executors' configuration here, by name
	// (callpolicy.ExecutorDefaults): calls resolve against it as in a
	// local run (see RunInput.Defaults).
	Defaults map[string]executors.Defaults
	// RollEvents is how long a history may grow before its execution
	// continues as new (RunInput.RollEvents); 0 means the default.
	RollEvents int
	// Cost prices the calls (see RunInput.Cost).
	Cost *cost.Model
}

// Start creates a run on Temporal and returns its first execution's input.
func (c *Client) Start(ctx context.Context, req StartRequest) (RunInput, error) {
	if err := req.Options.Validate(); err != nil {
		return RunInput{}, err
	}
	args, err := engine.NormalizeArgs(req.Args)
	if err != nil {
		return RunInput{}, err
	}
	if req.Heartbeat <= 0 {
		req.Heartbeat = DefaultHeartbeat
	}
	meta := req.Script.Meta()
	if req.Options.MaxCostUSD == 0 && meta.MaxCost > 0 {
		req.Options.MaxCostUSD = meta.MaxCost
	}
	in := RunInput{
		RunID: store.NewRunID(meta.Name), Rule: callpolicy.RuleFresh, Script: req.Bundle, Args: args, Options: req.Options,
		Cwd: req.Cwd, Human: req.Human, Heartbeat: req.Heartbeat, Defaults: req.Defaults, RollEvents: req.RollEvents, Cost: req.Cost,
		Name: meta.Name, Description: meta.Description, ScriptHash: req.Script.Hash(), CreatedAt: time.Now().UTC(),
	}
	return in, c.execute(ctx, in)
}

// ResumeRequest resumes a run that is not running.
type ResumeRequest struct {
	// Bundle and Script replace the run's script (edit-and-resume); a nil
	// Script keeps it.
	Bundle Bundle
	Script lang.Script
	// Args replaces the run's args; nil keeps them.
	Args json.RawMessage
	// Options changes the run's options; nil keeps them.
	Options func(*engine.Options)
	// Human, when set, changes whether checkpoints wait for a response.
	Human *bool
	// Heartbeat, when positive, changes the agents' heartbeat timeout.
	Heartbeat time.Duration
	// Defaults, when not nil, is the executors' configuration now, as a
	// local resume resolves calls against its current configuration.
	Defaults map[string]executors.Defaults
	// Cost, when not nil, prices the calls from now on.
	Cost *cost.Model
}

// Resume starts a new execution of a run that has ended (paused, failed or
// completed). It replays the finished calls of every earlier execution:
// all that match when the script and args are unchanged, by the per-scope
// prefix rule when they were edited. It reads only the latest execution's
// history, whose page it adds to the pages that execution replayed from:
// however many calls the run made, nothing holds all their answers.
func (c *Client) Resume(ctx context.Context, runID string, req ResumeRequest) (RunInput, error) {
	desc, err := c.describe(ctx, runID)
	if err != nil {
		return RunInput{}, notFound(runID, err)
	}
	last, err := c.readExecution(ctx, runID, desc.GetWorkflowExecutionInfo().GetExecution().GetRunId())
	if err != nil {
		return RunInput{}, err
	}
	if !last.closed {
		return RunInput{}, fmt.Errorf("%w: %s is still running; pause it first", engine.ErrNotResumable, runID)
	}
	if last.state != nil && last.state.Status == engine.StatusStopped {
		return RunInput{}, fmt.Errorf("%w: %s was stopped; start a new run instead", engine.ErrNotResumable, runID)
	}
	in := last.input
	in.Epoch++
	in.Previous = append(append([]string(nil), in.Previous...), last.runID)
	if req.Script != nil {
		in.Script, in.ScriptHash = req.Bundle, req.Script.Hash()
		in.Name, in.Description = req.Script.Meta().Name, req.Script.Meta().Description
	}
	if req.Args != nil {
		if in.Args, err = engine.NormalizeArgs(req.Args); err != nil {
			return RunInput{}, err
		}
	}
	if req.Options != nil {
		req.Options(&in.Options)
	}
	if err := in.Options.Validate(); err != nil {
		return RunInput{}, err
	}
	if req.Human != nil {
		in.Human = *req.Human
	}
	if req.Heartbeat > 0 {
		in.Heartbeat = req.Heartbeat
	}
	if req.Defaults != nil {
		in.Defaults = req.Defaults
	}
	if req.Cost != nil {
		in.Cost = req.Cost
	}
	in.Rule = callpolicy.RuleCrash
	if in.ScriptHash != last.input.ScriptHash || !bytes.Equal(in.Args, last.input.Args) {
		in.Rule = callpolicy.RuleEdit
	}
	var prices *cost.Table
	if in.Cost != nil {
		prices = in.Cost.Prices
	}
	page, err := putPage(c.blobs, pageOf(last, nil, prices))
	if err != nil {
		return RunInput{}, err
	}
	in.Ledger = append(append([]string(nil), last.input.Ledger...), page)
	// A resume starts a chain of its own, and finds its children again,
	// as a local resume does.
	in.Chain, in.Carry, in.Children, in.PauseReason = in.Epoch, nil, nil, ""
	return in, c.execute(ctx, in)
}

// execute starts one execution of a run: a Temporal run of the workflow
// whose id is the run id. Only one may run at a time.
func (c *Client) execute(ctx context.Context, in RunInput) error {
	_, err := c.sdk.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       in.RunID,
		TaskQueue:                c.cfg.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		StaticSummary:            fmt.Sprintf("dynworkflow run %s (execution %d, %s)", in.Name, in.Epoch, in.Rule),
	}, WorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return fmt.Errorf("%w: %s is still running; pause it first", engine.ErrNotResumable, in.RunID)
	}
	if err != nil {
		return fmt.Errorf("start %s on Temporal: %w", in.RunID, err)
	}
	return nil
}

// Pause asks the run's execution to pause: its live agents are cancelled,
// and a resume replays what finished.
func (c *Client) Pause(ctx context.Context, runID, reason string) error {
	err := c.sdk.SignalWorkflow(ctx, runID, "", PauseSignal, Pause{Reason: reason})
	return c.controlError(runID, err)
}

// ControlCall stops or restarts ("stop", "restart") one running agent call
// of the run's execution (see engine.Run.StopCall): the workflow cancels
// the call's activity, and the call policy decides what follows. A call
// that is not running is left alone, with a warning in the run's log.
func (c *Client) ControlCall(ctx context.Context, runID, path, action string) error {
	err := c.sdk.SignalWorkflow(ctx, runID, "", CallSignal, CallAction{Path: path, Action: action})
	return c.controlError(runID, err)
}

// Stop makes the run non-resumable: a running execution is cancelled, and
// a run that had ended (paused, say) gets a last execution that ends at
// once as stopped.
func (c *Client) Stop(ctx context.Context, runID string) error {
	desc, err := c.describe(ctx, runID)
	if err != nil {
		return notFound(runID, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return c.controlError(runID, c.sdk.CancelWorkflow(ctx, runID, ""))
	}
	last, err := c.readExecution(ctx, runID, info.GetExecution().GetRunId())
	if err != nil {
		return err
	}
	ended := last.final()
	if ended.Status == engine.StatusStopped {
		return nil
	}
	in := last.input
	in.Epoch++
	in.Previous = append(append([]string(nil), in.Previous...), last.runID)
	in.Rule, in.Ledger, in.Ended = ruleStop, nil, &ended
	in.Chain, in.Carry, in.Children, in.PauseReason = in.Epoch, nil, nil, ""
	return c.execute(ctx, in)
}

// controlError names the run in an error of a call that controls it.
func (c *Client) controlError(runID string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("%w: %s is not running on Temporal", engine.ErrNotRunning, runID)
	}
	if err != nil {
		return fmt.Errorf("%s on Temporal: %w", runID, err)
	}
	return nil
}

// Respond answers the checkpoint waiting at path. A bad answer is
// refused before it reaches the run's history.
func (c *Client) Respond(ctx context.Context, runID, path string, answer json.RawMessage) error {
	h, err := c.sdk.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: runID, UpdateName: RespondUpdate, Args: []any{Response{Path: path, Answer: answer}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return fmt.Errorf("%w: %s", ErrAnswerRefused, app.Message())
	}
	return c.controlError(runID, err)
}

// ErrAnswerRefused is matched by the error of a response the run refused:
// no such checkpoint is waiting, or the answer does not fit it.
var ErrAnswerRefused = errors.New("answer refused")

// State reports the run's latest execution: from the workflow itself while
// it runs (a query, which needs a live worker), from its result once it
// has ended.
func (c *Client) State(ctx context.Context, runID string) (State, error) {
	desc, err := c.describe(ctx, runID)
	if err != nil {
		return State{}, notFound(runID, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return c.query(ctx, runID)
	}
	e, err := c.readExecution(ctx, runID, info.GetExecution().GetRunId())
	if err != nil {
		return State{}, err
	}
	return e.final(), nil
}

// query asks the running execution for its state.
func (c *Client) query(ctx context.Context, runID string) (State, error) {
	v, err := c.sdk.QueryWorkflow(ctx, runID, "", StateQuery)
	if err != nil {
		return State{}, fmt.Errorf("query %s on Temporal (is a worker running?): %w", runID, err)
	}
	var st State
	if err := v.Get(&st); err != nil {
		return State{}, err
	}
	return st, nil
}

// Wait blocks until the run's current execution ends and returns its
// final state.
func (c *Client) Wait(ctx context.Context, runID string) (State, error) {
	if err := c.AwaitEnd(ctx, runID); err != nil {
		return State{}, err
	}
	return c.State(ctx, runID)
}

// AwaitEnd blocks until the run's current execution ends, however it
// ends. It asks the server alone, never a worker, so following a run costs
// the run nothing.
func (c *Client) AwaitEnd(ctx context.Context, runID string) error {
	err := c.sdk.GetWorkflow(ctx, runID, "").Get(ctx, nil)
	var canceled *temporal.CanceledError
	var app *temporal.ApplicationError
	var terminated *temporal.TerminatedError
	switch {
	case err == nil, errors.As(err, &canceled), errors.As(err, &app), errors.As(err, &terminated):
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("wait for %s on Temporal: %w", runID, err)
}

// final is an ended execution's state, made up from what Temporal says
// when the workflow ended without one.
func (e *execHistory) final() State {
	if e.state != nil {
		return *e.state
	}
	st := State{RunID: e.input.RunID, Name: e.input.Name, Epoch: e.input.Epoch, Status: engine.StatusRunning, StartedAt: e.startedAt}
	if e.closed {
		st.Status, st.Error = engine.StatusFailed, e.closedAs
	}
	for _, r := range e.calls {
		switch r.status {
		case "done":
			st.Stats.Live++
		case "failed":
			if r.errKind != errTransient && r.errKind != errSchema && !pausedBy(r.errKind) {
				st.Stats.Failed++
			}
		case "running":
			st.Stats.Running++
		}
		u := r.usage()
		st.Stats.InputTokens += u.InputTokens
		st.Stats.OutputTokens += u.OutputTokens
	}
	st.Stats.Agents = st.Stats.Live + st.Stats.Failed
	return st
}
