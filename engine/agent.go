package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// agentCall is one agent() call on its way to an answer.
type agentCall struct {
	run    *Run
	scope  *scope
	path   string
	fp     string
	prompt string
	opts   lang.AgentOptions
	// executor, model, effort, permissions and timeout are what the call
	// runs with: its own options, else the run's, else the executor's
	// configuration (see resolve).
	executor    string
	model       string
	effort      string
	permissions executors.Permissions
	timeout     time.Duration
	phase       string
	schema      *compiledSchema
	done        lang.Done
	// ctx is what the call runs under (see Run.callContext); release lets
	// go of it once the call is settled.
	ctx     context.Context
	release context.CancelFunc
	// dir is where the agent works: the project, or the call's worktree.
	dir string
	// settled makes settle happen once (see runGuarded).
	settled atomic.Bool
}

// resolve fixes what the call runs with. The precedence, highest first: the
// call's option; the run's option (its --model only for calls on the run's
// own executor, since a model name belongs to one provider); the
// executor's configuration (project file over user file); the built-in
// default. An agentType of Claude Code's read-only kinds (Explore, Plan)
// counts as the call asking for read-only.
func (c *agentCall) resolve() {
	r, o := c.run, c.opts
	c.executor = cmp.Or(o.Executor, r.opts.Executor)
	var defs executors.Defaults
	if e, err := r.executors.Get(c.executor); err == nil {
		defs = executors.DefaultsOf(e)
	}
	runModel := ""
	if c.executor == r.opts.Executor {
		runModel = r.opts.Model
	}
	c.model = cmp.Or(o.Model, runModel, defs.Model)
	c.effort = cmp.Or(o.Effort, defs.Effort)
	c.permissions = cmp.Or(executors.Permissions(o.Permissions), executors.AgentTypePermissions(o.AgentType),
		r.opts.Permissions, defs.Permissions, executors.WorkspaceWrite)
	c.timeout = cmp.Or(r.opts.AgentTimeout, defs.Timeout)
	if o.TimeoutMs != nil {
		c.timeout = time.Duration(*o.TimeoutMs) * time.Millisecond
	}
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
	c.resolve()
	c.phase = opts.Phase
	if c.phase == "" {
		c.phase = sc.currentPhase()
	}
	// The fingerprint takes the call's settings as resolved: a call whose
	// configured model changed is a different call.
	resolved := opts
	resolved.Model, resolved.Effort, resolved.Permissions = c.model, c.effort, string(c.permissions)
	var canonical []byte
	if schema != nil {
		canonical = schema.canonical
	}
	c.fp = AgentFingerprint(prompt, c.executor, resolved, canonical)

	if p, ok := r.replay.lookup(sc, path, c.fp, f.mode); ok {
		if p.worktree != nil {
			r.noteReplayedWorktree(sc, path, opts.Label, p.worktree)
		}
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
	started := time.Now()
	c.dir = r.rt.cfg.Cwd
	var iso *isolated
	if c.opts.Isolation == "worktree" {
		var err error
		if iso, err = c.isolate(ctx); err != nil {
			c.isolationFailed(err, started)
			return
		}
		c.dir = iso.dir
	}
	r.running.Add(1)
	rec := &record{Type: recStarted, Path: c.path, Kind: "agent", Fingerprint: c.fp, Call: &callInfo{
		Label: c.opts.Label, Phase: c.phase, Prompt: c.prompt, Executor: c.executor, Model: c.model, Effort: c.effort,
		Permissions: c.permissions, Schema: c.opts.Schema,
	}}
	if iso != nil {
		// Durable before the agent runs: recovery commits the edits in a
		// worktree only when the journal says an agent ran there.
		rec.Worktree = &iso.info
		if err := r.appendSync(context.WithoutCancel(ctx), rec); err != nil {
			r.running.Add(-1)
			r.fail(fmt.Errorf("journal call %s: %w", c.path, err))
			_ = iso.tree.Remove(context.WithoutCancel(ctx), iso.info.Base, true)
			c.settle(nil, err)
			return
		}
	} else {
		r.append(rec)
	}
	r.rt.bus.Publish(r.id, EventCallStarted, CallPayload{Path: c.path, Label: c.opts.Label, Phase: c.phase, Executor: c.executor,
		Worktree: rec.Worktree}.withPrompt(c.prompt))

	out := c.attempt(ctx)
	r.running.Add(-1)
	r.addUsage(out.usage)
	r.spent.Add(out.usage.Total())

	interrupted := ctx.Err() != nil && out.err != nil
	var wt *Worktree
	if iso != nil {
		// Before anything else: the edits go on the branch first.
		wt = c.settleWorktree(iso, interrupted)
		c.journalWorktree(iso, wt)
	}
	if interrupted {
		// Paused or stopped: the call did not finish and will run again.
		c.settle(nil, context.Cause(ctx))
		return
	}
	if out.err != nil {
		c.fail(out, started, wt)
		return
	}
	done := &record{Type: recFinished, Path: c.path, Kind: "agent", Fingerprint: c.fp, Result: out.value, Usage: &out.usage,
		Answer: &answerInfo{Source: "live", Provider: out.res.Provider, Model: out.res.Model, Attempts: out.attempts,
			DurMs: time.Since(started).Milliseconds(), History: out.res.History}}
	r.appendThen(done, func(err error) {
		if err != nil {
			r.fail(fmt.Errorf("journal call %s: %w", c.path, err))
			c.settle(nil, err)
			return
		}
		r.live.Add(1)
		r.settled.note(c, out.value, out.usage, nil)
		r.rt.bus.Publish(r.id, EventCallFinished, CallPayload{Path: c.path, Label: c.opts.Label, Phase: c.phase, Executor: c.executor,
			Usage: &out.usage, Worktree: wt}.withResult(out.value))
		c.settle(out.value, nil)
	})
}

// settle hands the call's answer to the script and counts the call done.
func (c *agentCall) settle(answer json.RawMessage, err error) {
	if c.settled.Swap(true) {
		return // settled already, before its goroutine panicked (see runGuarded)
	}
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
// throws in the script; any other failure gives null; a rate limit or an
// unavailable executor pauses the run, since every other call would fail
// the same way: no more are launched, and a resume picks up from here.
func (c *agentCall) fail(out attemptResult, started time.Time, wt *Worktree) {
	r := c.run
	class := executors.ClassOf(out.err)
	switch class {
	case executors.RateLimited:
		r.pauseFor("rate limited: " + out.err.Error())
		c.settle(nil, RateLimitError(out.err.Error()))
		return
	case executors.Unavailable:
		reason := unavailableReason(c.executor, out.err)
		r.pauseFor(reason)
		c.settle(nil, newError(CodeExecutorUnavailable, ErrExecutorUnavailable, reason))
		return
	}
	info := &errorInfo{Class: class.String(), Message: out.err.Error()}
	var ee *Error
	if errors.As(out.err, &ee) {
		info.Code = ee.Code
	}
	r.noteFailure(c.path, info)
	r.append(&record{Type: recFailed, Path: c.path, Kind: "agent", Fingerprint: c.fp, Usage: &out.usage, Error: info,
		Answer: &answerInfo{Source: "live", Attempts: out.attempts, DurMs: time.Since(started).Milliseconds()}})
	r.failed.Add(1)
	r.settled.note(c, nil, out.usage, out.err)
	r.rt.bus.Publish(r.id, EventCallFailed, CallPayload{Path: c.path, Label: c.opts.Label, Phase: c.phase, Error: info.Message, Worktree: wt})
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
	exec, err := r.executors.Get(c.executor)
	if err != nil {
		// Every call on it would fail alike: the run pauses for a fix.
		out.err = &executors.Error{Class: executors.Unavailable, Message: err.Error(),
			Fix: "define it with --command-executor NAME=TEMPLATE or in .dynworkflow/executors.json, or name another executor"}
		return out
	}
	retries := r.opts.AgentRetries
	if c.opts.Retries != nil {
		retries = *c.opts.Retries
	}
	timeout := c.timeout
	prompt, transient, repairs := c.prompt, 0, 0
	observe := func(p executors.Progress) {
		r.rt.bus.Publish(r.id, EventCallProgress, ProgressPayload{Path: c.path, Progress: p})
	}
	for {
		out.attempts++
		req := executors.Request{
			RunID: r.id, Path: c.path, Prompt: prompt, Model: c.model, Effort: c.effort,
			AgentType: c.opts.AgentType, Isolation: c.opts.Isolation, Permissions: c.permissions, Schema: c.opts.Schema,
			Dir: c.dir, Attempt: out.attempts,
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

// unavailableReason is the pause reason of an unavailable executor: its
// name, the cause and the fix.
func unavailableReason(executor string, err error) string {
	reason := fmt.Sprintf("executor %s is unavailable: %v", executor, err)
	if fix := executors.FixOf(err); fix != "" {
		reason += ". Fix: " + fix
	}
	return reason
}

func repairPrompt(prompt string, verr error, schema json.RawMessage) string {
	return prompt + "\n\nYour previous answer did not satisfy the required JSON Schema: " + verr.Error() +
		"\nAnswer again with only a JSON value that satisfies this schema:\n" + string(schema)
}
