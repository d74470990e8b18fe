package callpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Call is one agent() call as the policy fixed it: its identity, what it
// runs with, and the earlier answer it replays, if any.
type Call struct {
	x      *Execution
	Scope  *Scope
	Path   string
	FP     string
	Prompt string
	Opts   lang.AgentOptions
	Settings
	// Phase is the call's phase: its option, else its scope's.
	Phase string
	// Schema is the call's compiled schema; nil for a text answer.
	Schema Schema
	// Prior is the answer of an earlier execution the call replays; nil
	// when it runs live.
	Prior *Answer
	// Given is the answer an override gives the call instead of running
	// it (a fork's --answer): journaled as this execution's, never run.
	Given json.RawMessage

	held     float64 // the call's expected cost the dollar cap holds
	reserved bool
}

// Agent fixes an agent() call, on the script's thread and in program
// order: its path, the agent cap, its schema, what it runs with, its
// fingerprint, and whether an earlier execution answered it (see Ledger).
// A replayed answer's cost counts against the budget. An error is what
// the script sees: the execution ended (ctx's cause), the cap, a schema
// that does not compile.
func (x *Execution) Agent(ctx context.Context, sc *Scope, prompt string, opts lang.AgentOptions) (*Call, error) {
	for _, key := range opts.Ignored {
		if _, seen := x.ignored.LoadOrStore(key, true); !seen {
			x.host.Warn(sc, lang.IgnoredOption(key))
		}
	}
	path := sc.CallPath("agent")
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if n := x.agents.Add(1); n > int64(x.limits.MaxAgents) {
		x.host.LimitHit("agents", fmt.Sprintf("agent call %d is over the cap of %d agents per run", n, x.limits.MaxAgents))
		return nil, AgentLimitError(x.limits.MaxAgents)
	}
	schema, err := x.host.Schema(opts.Schema)
	if err != nil {
		return nil, BadSchemaError(err)
	}
	ov := x.override(path)
	if ov != nil && ov.Prompt != nil {
		prompt = *ov.Prompt
	}
	c := &Call{x: x, Scope: sc, Path: path, Prompt: prompt, Opts: opts, Schema: schema, Phase: opts.Phase}
	if c.Phase == "" {
		c.Phase = sc.Phase()
	}
	c.Settings = Resolve(path, c.Phase, opts, sc.frame.Meta.ModelFor(c.Phase), x.limits, x.host.Defaults)
	var canonical []byte
	if schema != nil {
		canonical = schema.Canonical()
	}
	c.FP = AgentFingerprint(prompt, c.Settings, opts, canonical)
	if c.Prior = overridden(ov, x.ledger.reuse(sc, path, c.FP, x.epoch)); c.Prior != nil {
		x.Counts.Replayed.Add(1)
		x.spent.Add(c.Prior.Usage.Total())
	} else if ov != nil && ov.Answer != nil {
		if schema != nil {
			if _, err := schema.Validate(string(ov.Answer)); err != nil {
				return nil, fmt.Errorf("the answer given to %s does not satisfy its schema: %w", path, err)
			}
		}
		c.Given = ov.Answer
		x.Counts.Replayed.Add(1)
	}
	return c, nil
}

// Attempt is one attempt of a live call: one run of its executor.
type Attempt struct {
	// N counts the call's attempts from 1, across retries and repairs.
	N int
	// Prompt is the call's prompt, or the one asking to repair an answer
	// that broke the schema.
	Prompt string
}

// Launcher is how a backend runs a live call: where an attempt runs, and
// how it waits before the next one.
type Launcher interface {
	// Launch runs one attempt (see RunAttempt).
	Launch(ctx context.Context, a Attempt) AttemptResult
	// Wait waits d, or until ctx ends, and then returns its cause.
	Wait(ctx context.Context, d time.Duration) error
	// Retrying tells the backend an attempt failed and the call tries
	// again, for it to record and show.
	Retrying(r Retry)
}

// Retry is an attempt that failed and will be tried again.
type Retry struct {
	// Attempt is the attempt that failed.
	Attempt int
	// Class is why: "transient", "infrastructure" or "schema".
	Class string
	Err   error
	// Wait is how long the call waits before the next attempt.
	Wait time.Duration
}

// OutcomeKind says how a live call ended.
type OutcomeKind int

// How a live call can end.
const (
	// Answered: Value is the answer.
	Answered OutcomeKind = iota
	// GaveUp: the call failed for good (a terminal failure, its retries
	// spent, a schema never satisfied); Err says why. It is journaled as
	// failed and the script gets ForScript.
	GaveUp
	// Paused: the run must pause with PauseReason (rate limited, the
	// executor unavailable, a fault of ours that persisted); the call
	// runs again on resume. The script, which is ending, sees Err.
	Paused
	// Interrupted: the execution is ending (paused, stopped); Err is why.
	// The call runs again on resume.
	Interrupted
)

// Outcome is how a live call ended.
type Outcome struct {
	Kind  OutcomeKind
	Value json.RawMessage
	// Result is the last attempt's.
	Result executors.Result
	// Usage is what every attempt cost.
	Usage       executors.Usage
	Attempts    int
	Err         error
	PauseReason string
	// ResumeAt is, for a run parked by a rate limit, when its quota
	// resets (see Quota); zero otherwise.
	ResumeAt time.Time
}

// Begin says whether a call that was not replayed may start now, when a
// slot is free for it: not once the execution is ending (ctx's cause),
// the budget is spent, or the dollar cap would be passed (ErrCostCap: the
// backend then holds the call and pauses the run once the calls running
// have ended, see reserve). Its error is what the script sees.
func (c *Call) Begin(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if err := c.x.checkBudget(); err != nil {
		return err
	}
	return c.x.reserve(c)
}

// RunLive runs a call that Begin let start, by the policy: attempts until
// one answers, re-prompting an answer that broke the schema, retrying a
// transient failure (the call's retries, else the run's) and a fault of
// ours (on its own count) after Backoff, and pausing the run on a rate
// limit, an unavailable executor or a fault of ours that persists. An
// attempt the user restarted (ErrCallRestarted) is followed by another at
// once, uncounted; a call the user stopped (ErrCallStopped) gives up. Every
// attempt's cost counts against the budget and the dollar cap as soon as
// it is known.
func (c *Call) RunLive(ctx context.Context, l Launcher) Outcome {
	x := c.x
	defer x.release(c)
	retries := x.limits.AgentRetries
	if c.Opts.Retries != nil {
		retries = *c.Opts.Retries
	}
	prompt := c.Prompt
	var o Outcome
	var transient, infra, repairs, down int
	// downFor is how long the call's executor has failed to reach its
	// endpoint: its failed attempts and the waits between them.
	var downFor time.Duration
	quota, _ := l.(Quota)
	for {
		if quota != nil {
			if until, why, blocked := quota.QuotaBlocked(c.Executor); blocked {
				return parked(o, c.Executor, until, why)
			}
		}
		o.Attempts++
		res := l.Launch(ctx, Attempt{N: o.Attempts, Prompt: prompt})
		res.Result.Usage = x.charge(c, res.Result.Model, res.Result.Usage)
		o.Result = res.Result
		o.Usage = o.Usage.Add(res.Result.Usage)
		x.spent.Add(res.Result.Usage.Total())
		if res.Err == nil {
			o.Kind, o.Value = Answered, res.Value
			return o
		}
		if ctx.Err() != nil {
			o.Kind, o.Err = Interrupted, context.Cause(ctx)
			return o
		}
		switch {
		case errors.Is(res.Err, ErrCallStopped):
			o.Kind, o.Err = GaveUp, CallStoppedError(c.Path)
			return o
		case errors.Is(res.Err, ErrCallRestarted):
			l.Retrying(Retry{Attempt: o.Attempts, Class: "restarted", Err: res.Err})
			continue
		}
		if errors.Is(res.Err, ErrIsolationUnavailable) {
			// No worktree could be made where the attempt ran: the agent
			// never ran, and never runs in the shared checkout instead.
			o.Kind, o.PauseReason, o.Err = Paused, res.Err.Error(), res.Err
			return o
		}
		var sv *SchemaViolation
		if errors.As(res.Err, &sv) {
			repairs++
			if repairs >= x.limits.SchemaAttempts {
				o.Kind, o.Err = GaveUp, SchemaError(repairs, sv.Err)
				return o
			}
			x.Counts.Retried.Add(1)
			l.Retrying(Retry{Attempt: o.Attempts, Class: "schema", Err: sv.Err})
			prompt = RepairPrompt(c.Prompt, sv.Err, c.Opts.Schema)
			continue
		}
		class := executors.ClassOf(res.Err)
		var wait time.Duration
		switch class {
		case executors.Transient:
			if executors.Unreachable(res.Err) {
				// Nothing was sent: not one of the call's retries. Once
				// the attempts and the waits add up to the limit, the
				// endpoint is down.
				// The first such failure starts the clock: the time before
				// it, the endpoint may have been up.
				limit := x.limits.unreachableFor()
				if down > 0 {
					downFor += res.Took
				}
				if downFor >= limit {
					o.Kind = Paused
					o.PauseReason = UnavailableReason(c.Executor, &executors.Error{Class: executors.Unavailable, Unreachable: true,
						Message: fmt.Sprintf("it cannot reach its model endpoint (%d attempts over %s): %v", down+1, limit, res.Err), Fix: UnreachableFix})
					o.Err = UnavailableError(o.PauseReason)
					return o
				}
				down++
				wait = min(Backoff(x.limits.RetryBackoff, down, retryAfter(res.Err), x.runID, c.Path), limit-downFor)
				downFor += wait
				break
			}
			if transient >= retries {
				o.Kind, o.Err = GaveUp, res.Err
				return o
			}
			transient++
			wait = Backoff(x.limits.RetryBackoff, transient, retryAfter(res.Err), x.runID, c.Path)
		case executors.Infrastructure:
			if infra >= InfrastructureRetries {
				o.Kind, o.PauseReason = Paused, infrastructureReason(res.Err)
				o.Err = InfrastructureError(o.PauseReason)
				return o
			}
			infra++
			wait = Backoff(x.limits.RetryBackoff, infra, retryAfter(res.Err), x.runID, c.Path)
		case executors.RateLimited:
			if quota != nil {
				return parked(o, c.Executor, quota.QuotaSpent(c.Executor, retryAfter(res.Err), res.Err.Error()), res.Err.Error())
			}
			o.Kind, o.PauseReason, o.Err = Paused, "rate limited: "+res.Err.Error(), RateLimitError(res.Err.Error())
			return o
		case executors.Unavailable:
			o.Kind, o.PauseReason = Paused, UnavailableReason(c.Executor, res.Err)
			o.Err = UnavailableError(o.PauseReason)
			return o
		default:
			o.Kind, o.Err = GaveUp, res.Err
			return o
		}
		x.Counts.Retried.Add(1)
		l.Retrying(Retry{Attempt: o.Attempts, Class: class.String(), Err: res.Err, Wait: wait})
		if err := l.Wait(ctx, wait); err != nil {
			switch {
			case ctx.Err() == nil && errors.Is(err, ErrCallStopped):
				o.Kind, o.Err = GaveUp, CallStoppedError(c.Path)
			case ctx.Err() == nil && errors.Is(err, ErrCallRestarted):
				continue // the wait is cut short, nothing more
			default:
				o.Kind, o.Err = Interrupted, err
			}
			return o
		}
	}
}

// Bounds are what bound each attempt of the call: its timeout, its idle
// timeout, and how long its executor may fail to reach its endpoint.
func (c *Call) Bounds() Bounds {
	return Bounds{Timeout: c.Timeout, Idle: c.IdleTimeout, Unreachable: c.x.limits.unreachableFor()}
}

// ForScript is what the script gets from a call that gave up: a throw for
// an answer that never satisfied its schema and for a required call, null
// otherwise.
func (c *Call) ForScript(o Outcome) (json.RawMessage, error) {
	switch {
	case errors.Is(o.Err, ErrSchemaInvalid):
		return nil, o.Err
	case c.Opts.Required:
		return nil, RequiredError(o.Err, false)
	}
	return json.RawMessage("null"), nil
}

// retryAfter is the wait a failure asks for, if it says.
func retryAfter(err error) time.Duration {
	var ee *executors.Error
	if errors.As(err, &ee) {
		return ee.RetryAfter
	}
	return 0
}

// UnavailableReason is the pause reason of an unavailable executor: its
// name, the cause and the fix.
func UnavailableReason(executor string, err error) string {
	reason := fmt.Sprintf("executor %s is unavailable: %s", executor, strings.TrimSuffix(err.Error(), "."))
	if fix := executors.FixOf(err); fix != "" {
		reason += ". Fix: " + fix
	}
	return reason
}

// infrastructureReason is the pause reason of a fault of ours that
// outlasted its retries.
func infrastructureReason(err error) string {
	reason := fmt.Sprintf("a fault of the runtime's own, not the agent's, persisted through %d retries: %v", InfrastructureRetries, err)
	if fix := executors.FixOf(err); fix != "" {
		reason += ". Fix: " + fix
	}
	return reason + "; every finished call is kept: resume the run once it is fixed"
}

// RepairPrompt is the prompt that asks an agent again after an answer
// failed the schema.
func RepairPrompt(prompt string, verr error, schema json.RawMessage) string {
	return prompt + "\n\nYour previous answer did not satisfy the required JSON Schema: " + verr.Error() +
		"\nAnswer again with only a JSON value that satisfies this schema:\n" + string(schema)
}
