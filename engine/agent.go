package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// agentCall is one agent() call on its way to an answer.
type agentCall struct {
	run      *Run
	scope    *scope
	path     string
	fp       string
	prompt   string
	opts     lang.AgentOptions
	executor string
	phase    string
	schema   *compiledSchema
	done     lang.Done
	// ctx is what the call runs under (see Run.callContext); release lets
	// go of it once the call is settled.
	ctx     context.Context
	release context.CancelFunc
}

// startAgent fixes the call's identity (in program order, on the script's
// thread), answers it from the journal when it already finished, and
// otherwise runs it live in the background.
func (r *Run) startAgent(ctx context.Context, f *frame, sc *scope, prompt string, opts lang.AgentOptions, done lang.Done) {
	for _, key := range opts.Ignored {
		if _, seen := r.ignoredOptions.LoadOrStore(key, true); !seen {
			r.logLine(sc, "warn", lang.IgnoredOption(key))
		}
	}
	path := sc.callPath("agent")
	if ctx.Err() != nil {
		done(nil, context.Cause(ctx))
		return
	}
	if n := r.agents.Add(1); n > int64(r.opts.MaxAgents) {
		r.limitHit("agents", fmt.Sprintf("agent call %d is over the cap of %d agents per run", n, r.opts.MaxAgents))
		done(nil, AgentLimitError(r.opts.MaxAgents))
		return
	}
	schema, err := r.rt.schemas.get(opts.Schema)
	if err != nil {
		done(nil, BadSchemaError(err))
		return
	}
	c := &agentCall{run: r, scope: sc, path: path, prompt: prompt, opts: opts, schema: schema, done: done}
	c.executor = opts.Executor
	if c.executor == "" {
		c.executor = r.opts.Executor
	}
	c.phase = opts.Phase
	if c.phase == "" {
		c.phase = sc.currentPhase()
	}
	var canonical []byte
	if schema != nil {
		canonical = schema.canonical
	}
	c.fp = AgentFingerprint(prompt, c.executor, opts, canonical)

	if p, ok := r.replay.lookup(sc, path, c.fp, f.mode); ok {
		r.replayed.Add(1)
		r.spent.Add(p.usage.Total())
		r.settled.note(c, p.result, executors.Usage{}, nil)
		r.rt.bus.Publish(r.id, EventCallReplayed, CallPayload{Path: path, Label: opts.Label, Phase: c.phase, Executor: c.executor}.
			withPrompt(prompt).withResult(p.result))
		done(p.result, nil)
		return
	}
	c.ctx, c.release = r.callContext(ctx)
	r.calls.Add(1)
	if !r.sched.submit(c) {
		c.release()
		r.calls.Done()
		done(nil, context.Cause(r.ctx))
	}
}

// runLive runs the call on its executor, on one of the run's workers. The
// answer is journaled, and the script sees it only once it is on disk; the
// worker does not wait for that, it moves on to the next call.
func (c *agentCall) runLive() {
	r := c.run
	ctx := c.ctx
	if err := ctx.Err(); err != nil {
		c.settle(nil, context.Cause(ctx))
		return
	}
	if err := c.checkBudget(); err != nil {
		c.settle(nil, err)
		return
	}
	r.running.Add(1)
	r.append(&record{Type: recStarted, Path: c.path, Kind: "agent", Fingerprint: c.fp, Call: &callInfo{
		Label: c.opts.Label, Phase: c.phase, Prompt: c.prompt, Executor: c.executor, Model: c.opts.Model, Schema: c.opts.Schema,
	}})
	r.rt.bus.Publish(r.id, EventCallStarted, CallPayload{Path: c.path, Label: c.opts.Label, Phase: c.phase, Executor: c.executor}.
		withPrompt(c.prompt))

	started := time.Now()
	out := c.attempt(ctx)
	r.running.Add(-1)
	r.addUsage(out.usage)
	r.spent.Add(out.usage.Total())

	if ctx.Err() != nil && out.err != nil {
		// Paused or stopped: the call did not finish and will run again.
		c.settle(nil, context.Cause(ctx))
		return
	}
	if out.err != nil {
		c.fail(out, started)
		return
	}
	rec := &record{Type: recFinished, Path: c.path, Kind: "agent", Fingerprint: c.fp, Result: out.value, Usage: &out.usage,
		Answer: &answerInfo{Source: "live", Provider: out.res.Provider, Model: out.res.Model, Attempts: out.attempts,
			DurMs: time.Since(started).Milliseconds(), History: out.res.History}}
	r.appendThen(rec, func(err error) {
		if err != nil {
			r.fail(fmt.Errorf("journal call %s: %w", c.path, err))
			c.settle(nil, err)
			return
		}
		r.live.Add(1)
		r.settled.note(c, out.value, out.usage, nil)
		r.rt.bus.Publish(r.id, EventCallFinished, CallPayload{Path: c.path, Label: c.opts.Label, Phase: c.phase, Executor: c.executor,
			Usage: &out.usage}.withResult(out.value))
		c.settle(out.value, nil)
	})
}

// settle hands the call's answer to the script and counts the call done.
func (c *agentCall) settle(answer json.RawMessage, err error) {
	c.release()
	c.done(answer, err)
	c.run.calls.Done()
}

func (c *agentCall) checkBudget() error {
	r := c.run
	budget := r.opts.TokenBudget
	if budget <= 0 {
		return nil
	}
	if spent := r.spent.Load(); spent >= budget {
		r.limitHit("budget", fmt.Sprintf("%d of %d tokens spent", spent, budget))
		return BudgetError(spent, budget)
	}
	return nil
}

// fail settles a call that ended without an answer: a schema failure
// throws in the script; any other failure gives null; a rate limit pauses
// the run.
func (c *agentCall) fail(out attemptResult, started time.Time) {
	r := c.run
	class := executors.ClassOf(out.err)
	if class == executors.RateLimited {
		r.pauseFor("rate limited: " + out.err.Error())
		c.settle(nil, RateLimitError(out.err.Error()))
		return
	}
	info := &errorInfo{Class: class.String(), Message: out.err.Error()}
	var ee *Error
	if errors.As(out.err, &ee) {
		info.Code = ee.Code
	}
	r.append(&record{Type: recFailed, Path: c.path, Kind: "agent", Fingerprint: c.fp, Usage: &out.usage, Error: info,
		Answer: &answerInfo{Source: "live", Attempts: out.attempts, DurMs: time.Since(started).Milliseconds()}})
	r.failed.Add(1)
	r.settled.note(c, nil, out.usage, out.err)
	r.rt.bus.Publish(r.id, EventCallFailed, CallPayload{Path: c.path, Label: c.opts.Label, Phase: c.phase, Error: info.Message})
	if errors.Is(out.err, ErrSchemaInvalid) {
		c.settle(nil, out.err)
		return
	}
	if c.opts.Required {
		c.settle(nil, RequiredError(out.err, false))
		return
	}
	c.settle(json.RawMessage("null"), nil)
}

type attemptResult struct {
	value    json.RawMessage
	res      executors.Result
	usage    executors.Usage
	attempts int
	err      error
}

// attempt runs the executor until it gives a valid answer, retrying
// transient failures with backoff and re-prompting for schema repairs.
func (c *agentCall) attempt(ctx context.Context) attemptResult {
	r := c.run
	var out attemptResult
	exec, err := r.rt.cfg.Executors.Get(c.executor)
	if err != nil {
		out.err = &executors.Error{Class: executors.Terminal, Message: "agent()", Err: err}
		return out
	}
	retries := r.opts.AgentRetries
	if c.opts.Retries != nil {
		retries = *c.opts.Retries
	}
	timeout := r.opts.AgentTimeout
	if c.opts.TimeoutMs != nil {
		timeout = time.Duration(*c.opts.TimeoutMs) * time.Millisecond
	}
	prompt, transient, repairs := c.prompt, 0, 0
	observe := func(p executors.Progress) {
		r.rt.bus.Publish(r.id, EventCallProgress, ProgressPayload{Path: c.path, Progress: p})
	}
	for {
		out.attempts++
		req := executors.Request{
			RunID: r.id, Path: c.path, Prompt: prompt, Model: c.opts.Model, Effort: c.opts.Effort,
			AgentType: c.opts.AgentType, Isolation: c.opts.Isolation, Schema: c.opts.Schema,
			Dir: r.rt.cfg.Cwd, Attempt: out.attempts,
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, timeout)
		}
		res, err := exec.Run(actx, req, observe)
		timedOut := actx.Err() != nil && ctx.Err() == nil
		cancel()
		out.usage = out.usage.Add(res.Usage)
		out.res = res
		if err == nil && timedOut {
			err = context.DeadlineExceeded
		}
		if err != nil {
			if ctx.Err() != nil {
				out.err = err
				return out
			}
			if timedOut {
				err = &executors.Error{Class: executors.Transient, Message: "agent timed out after " + timeout.String(), Err: err}
			}
			if executors.ClassOf(err) == executors.Transient && transient < retries {
				transient++
				wait := r.backoff(transient, err)
				r.append(&record{Type: recRetry, Path: c.path, Error: &errorInfo{Class: "transient", Message: err.Error()}})
				r.rt.bus.Publish(r.id, EventCallRetry, CallPayload{Path: c.path, Error: err.Error(), Attempt: out.attempts})
				select {
				case <-time.After(wait):
					continue
				case <-ctx.Done():
					out.err = context.Cause(ctx)
					return out
				}
			}
			out.err = err
			return out
		}
		if c.schema == nil {
			out.value = appendString(nil, res.Text)
			return out
		}
		answer := res.Text
		if len(res.Structured) > 0 {
			answer = string(res.Structured)
		}
		value, verr := c.schema.validate(answer)
		if verr == nil {
			out.value = value
			return out
		}
		repairs++
		if repairs >= r.opts.SchemaAttempts {
			out.err = SchemaError(repairs, verr)
			return out
		}
		r.append(&record{Type: recRetry, Path: c.path, Error: &errorInfo{Class: "schema", Message: verr.Error()}})
		r.rt.bus.Publish(r.id, EventCallRetry, CallPayload{Path: c.path, Error: "schema: " + verr.Error(), Attempt: out.attempts})
		prompt = repairPrompt(c.prompt, verr, c.opts.Schema)
	}
}

// backoff is how long to wait before retry n: what the executor asked for,
// else exponential from the run's base, capped at 30 seconds.
func (r *Run) backoff(n int, err error) time.Duration {
	var ee *executors.Error
	if errors.As(err, &ee) && ee.RetryAfter > 0 {
		return ee.RetryAfter
	}
	d := r.opts.RetryBackoff << (n - 1)
	return min(d, 30*time.Second)
}

func repairPrompt(prompt string, verr error, schema json.RawMessage) string {
	return prompt + "\n\nYour previous answer did not satisfy the required JSON Schema: " + verr.Error() +
		"\nAnswer again with only a JSON value that satisfies this schema:\n" + string(schema)
}
