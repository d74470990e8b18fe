package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/quota"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// agentCall is one agent() call on its way to an answer: the call as the
// call policy fixed it, and what running it here takes.
type agentCall struct {
	*callpolicy.Call
	run  *Run
	done lang.Done
	// ctx is what the call runs under (see Run.callContext); release lets
	// go of it once the call is settled.
	ctx     context.Context
	release context.CancelFunc
	// dir is where the agent works: the project, or the call's worktree.
	dir string
	// queued is when the call was handed to the scheduler.
	queued time.Time
	// batch is the fan-out the call was made in, if any (see lang.Batch),
	// and waited says the call found the concurrency cap reached: it
	// waited for a slot, and a cancelled batch ends it before it starts.
	batch  *lang.Batch
	waited bool
	// refused is the error of the agent cap that a sibling met while the
	// call waited for its slot: the call ends with it, unstarted.
	refused error
	// handOff, set by the worker that runs the call, hands its slot to
	// the next queued call; freeSlot calls it once the call no longer
	// needs the slot, before the script can hear of the call's end.
	handOff func()
	// ctl is how the user stops or restarts the call while it runs.
	ctl callControl
	// settled makes settle happen once (see runGuarded).
	settled atomic.Bool
}

// startAgent fixes the call's identity (in program order, on the script's
// thread), answers it from the journal when it already finished, and
// otherwise queues it for one of the run's workers.
func (r *Run) startAgent(ctx context.Context, sc *scope, prompt string, opts lang.AgentOptions, done lang.Done) {
	pc, err := r.policy.Agent(ctx, sc, prompt, opts)
	if err != nil {
		done(nil, err)
		return
	}
	c := &agentCall{Call: pc, run: r, done: done, batch: lang.BatchOf(ctx)}
	r.enterPhase(sc, opts.Phase)
	if p := pc.Prior; p != nil {
		if w, ok := p.Kept.(*Worktree); ok {
			r.noteReplayedWorktree(sc, c.Path, opts.Label, w)
		}
		r.settled.note(c, p.Result, executors.Usage{}, nil)
		r.rt.bus.Publish(r.id, EventCallReplayed, CallPayload{Path: c.Path, Label: opts.Label, Phase: c.Phase, Executor: c.Executor}.
			withPrompt(prompt).withResult(p.Result))
		done(p.Result, nil)
		return
	}
	if pc.Given != nil {
		r.giveAnswer(c)
		return
	}
	c.ctx, c.release = r.callContext(ctx)
	r.calls.Add(1)
	c.queued = time.Now()
	if !r.sched.submit(c) {
		c.release()
		r.calls.Done()
		// The execution is ending: cancelled, or its script returned
		// while a child script still makes calls.
		done(nil, cmp.Or(context.Cause(r.ctx), callpolicy.ErrScriptEnded))
	}
}

// runLive runs the call on its executor, on one of the run's workers. The
// answer is journaled, and the script sees it only once it is on disk; the
// worker does not wait for that, it moves on to the next call.
func (c *agentCall) runLive() {
	r := c.run
	ctx := c.ctx
	if c.refused != nil {
		c.freeSlot()
		c.settle(nil, c.refused)
		return
	}
	if err := c.Begin(ctx); err != nil {
		if errors.Is(err, callpolicy.ErrCostCap) {
			// The run pauses once the calls within the cap have ended;
			// this one waits for that and runs on resume.
			r.pauseWhenIdle(&pauseCause{reason: r.policy.CapReason()})
			select {
			case <-ctx.Done():
				err = context.Cause(ctx)
			case <-r.scriptEnded:
				err = callpolicy.ErrScriptEnded
			}
		}
		c.freeSlot()
		c.settle(nil, err)
		return
	}
	started := time.Now()
	c.dir = r.rt.cfg.Cwd
	var iso *Isolated
	if c.Opts.Isolation == "worktree" && !r.rt.cfg.NoWorktrees {
		var err error
		if iso, err = c.isolate(ctx); err != nil {
			c.freeSlot()
			c.isolationFailed(err, started)
			return
		}
		c.dir = iso.WorkDir()
	}
	r.running.Add(1)
	r.controls.Store(c.Path, c)
	defer r.controls.Delete(c.Path)
	rec := &record{Type: recStarted, Path: c.Path, Kind: "agent", Fingerprint: c.FP, Call: &callInfo{
		Label: c.Opts.Label, Phase: c.Phase, Prompt: c.Prompt, Executor: c.Executor, Model: c.Model, Effort: c.Effort,
		Permissions: c.Permissions, Schema: c.Opts.Schema, Route: c.Route,
	}}
	if iso != nil {
		// Durable before the agent runs: recovery commits the edits in a
		// worktree only when the journal says an agent ran there.
		info := iso.Info()
		rec.Worktree = &info
		if err := r.appendSync(context.WithoutCancel(ctx), rec); err != nil {
			r.running.Add(-1)
			c.freeSlot()
			r.fail(fmt.Errorf("journal call %s: %w", c.Path, err))
			_ = iso.Remove(ctx, info.Base)
			c.settle(nil, err)
			return
		}
	} else {
		r.append(rec)
	}
	r.rt.bus.Publish(r.id, EventCallStarted, CallPayload{Path: c.Path, Label: c.Opts.Label, Phase: c.Phase, Executor: c.Executor,
		Worktree: rec.Worktree, Model: c.Model, Effort: c.Effort, Permissions: string(c.Permissions), Route: c.Route,
		QueuedMs: started.Sub(c.queued).Milliseconds()}.withPrompt(c.Prompt))

	r.activity.start(c.Path, c.Opts.Label, started)
	out := c.RunLive(ctx, launcher{c})
	r.activity.end(c.Path)
	c.freeSlot()
	r.addUsage(out.Usage)
	r.running.Add(-1)
	r.poke()
	r.publishSpend()

	var wt *Worktree
	if iso != nil {
		// Before anything else: the edits go on the branch first.
		wt = c.settleWorktree(iso, out.Kind == callpolicy.Interrupted)
		c.journalWorktree(iso, wt)
	}
	switch out.Kind {
	case callpolicy.Interrupted:
		// Paused or stopped: the call did not finish and will run again.
		c.settle(nil, out.Err)
		return
	case callpolicy.Paused:
		if !out.ResumeAt.IsZero() {
			// Parked until the account's quota resets: no call of it
			// starts now (each meets the block and parks here too), and
			// the calls under way finish and are kept, not paid twice;
			// the run pauses after them.
			r.pauseWhenIdle(&pauseCause{reason: out.PauseReason, resumeAt: out.ResumeAt})
			<-ctx.Done()
			c.settle(nil, context.Cause(ctx))
			return
		}
		// Every other call would fail the same way: no more are launched,
		// and a resume picks up from here.
		r.pauseFor(out.PauseReason)
		c.settle(nil, out.Err)
		return
	case callpolicy.GaveUp:
		c.fail(out, started, wt)
		return
	}
	done := &record{Type: recFinished, Path: c.Path, Kind: "agent", Fingerprint: c.FP, Result: out.Value, Usage: &out.Usage,
		Answer: &answerInfo{Source: "live", Provider: out.Result.Provider, Model: out.Result.Model, Attempts: out.Attempts,
			DurMs: time.Since(started).Milliseconds(), History: out.Result.History}}
	r.appendThen(done, func(err error) {
		if err != nil {
			r.fail(fmt.Errorf("journal call %s: %w", c.Path, err))
			c.settle(nil, err)
			return
		}
		r.policy.Counts.Live.Add(1)
		r.settled.note(c, out.Value, out.Usage, nil)
		r.rt.bus.Publish(r.id, EventCallFinished, CallPayload{Path: c.Path, Label: c.Opts.Label, Phase: c.Phase, Executor: c.Executor,
			Usage: &out.Usage, Worktree: wt, Attempt: out.Attempts, Model: out.Result.Model, Provider: out.Result.Provider,
			DurationMs: done.Answer.DurMs}.withResult(out.Value))
		c.settle(out.Value, nil)
	})
}

// freeSlot hands the call's slot on, once; the worker's goroutine calls it.
func (c *agentCall) freeSlot() {
	if h := c.handOff; h != nil {
		c.handOff = nil
		h()
	}
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

// fail journals a call that gave up and settles it as the policy says:
// null, or a throw.
func (c *agentCall) fail(out callpolicy.Outcome, started time.Time, wt *Worktree) {
	r := c.run
	info := &errorInfo{Class: callpolicy.FailureClass(out.Err), Message: out.Err.Error()}
	var ee *Error
	if errors.As(out.Err, &ee) {
		info.Code = ee.Code
	}
	r.noteFailure(c.Path, info)
	r.append(&record{Type: recFailed, Path: c.Path, Kind: "agent", Fingerprint: c.FP, Usage: &out.Usage, Error: info,
		Answer: &answerInfo{Source: "live", Attempts: out.Attempts, DurMs: time.Since(started).Milliseconds()}})
	r.policy.Counts.Failed.Add(1)
	r.settled.note(c, nil, out.Usage, out.Err)
	r.rt.bus.Publish(r.id, EventCallFailed, CallPayload{Path: c.Path, Label: c.Opts.Label, Phase: c.Phase, Error: info.Message,
		Class: info.Class, Worktree: wt, Executor: c.Executor, Usage: &out.Usage, Attempt: out.Attempts,
		DurationMs: time.Since(started).Milliseconds()})
	c.settle(c.ForScript(out))
}

// launcher runs a local call's attempts in this process.
type launcher struct{ c *agentCall }

func (l launcher) Launch(ctx context.Context, a callpolicy.Attempt) callpolicy.AttemptResult {
	actx, end, err := l.c.ctl.begin(ctx)
	if err != nil {
		return callpolicy.AttemptResult{Err: err} // stopped between attempts
	}
	res := l.launch(actx, a)
	if cause := end(); ctx.Err() == nil && cause != nil {
		// The user stopped or restarted this attempt: that, not what the
		// killed executor said, is why it ended.
		res.Err = cause
	}
	return res
}

func (l launcher) launch(ctx context.Context, a callpolicy.Attempt) callpolicy.AttemptResult {
	c, r := l.c, l.c.run
	exec, err := r.executors.Get(c.Executor)
	if err != nil {
		// Every call on it would fail alike: the run pauses for a fix.
		return callpolicy.AttemptResult{Err: &executors.Error{Class: executors.Unavailable, Message: err.Error(),
			Fix: "define it with --command-executor NAME=TEMPLATE or in .dynworkflow/executors.json, or name another executor"}}
	}
	req := executors.Request{
		RunID: r.id, Path: c.Path, Prompt: a.Prompt, Model: c.Model, Effort: c.Effort,
		AgentType: c.Opts.AgentType, Isolation: c.Opts.Isolation, Permissions: c.Permissions, Schema: c.Opts.Schema,
		Dir: c.dir, Attempt: a.N, Env: r.callEnv(c.Path),
	}
	observe := func(p executors.Progress) {
		if a := p.Activity; a != nil {
			if a.At.IsZero() {
				a.At = time.Now()
			}
			if !r.activity.note(c.Path, *a) && p.History == nil && p.Usage == nil {
				return // a heartbeat: on the board, not worth an event
			}
		}
		r.rt.bus.Publish(r.id, EventCallProgress, ProgressPayload{Path: c.Path, Progress: p})
	}
	res := callpolicy.RunAttempt(ctx, exec, req, c.Bounds(), c.Schema, observe)
	if res.Err == nil {
		r.rt.cfg.Quota.Succeeded(executors.AccountOf(exec), time.Now())
	}
	return res
}

// QuotaBlocked: a call does not start while its executor's account waits
// for its quota, whichever run on the machine met the limit.
func (l launcher) QuotaBlocked(executor string) (time.Time, string, bool) {
	account, ok := l.account(executor)
	if !ok || l.c.run.tryNow.Load() {
		return time.Time{}, "", false
	}
	b, blocked := l.c.run.rt.cfg.Quota.Blocked(account, time.Now())
	return b.Until, b.Reason, blocked
}

// QuotaSpent records the limit a call met for every run on the machine.
func (l launcher) QuotaSpent(executor string, hint time.Duration, why string) time.Time {
	l.c.run.tryNow.Store(false)
	now := time.Now()
	account, ok := l.account(executor)
	if !ok {
		account = executor
	}
	b, err := l.c.run.rt.cfg.Quota.Limit(account, executor, hint, why, now)
	if err != nil {
		// Not shared, but this run still waits.
		l.c.run.rt.log.Warn("record a rate limit", "executor", executor, "err", err)
		return now.Add(max(hint, quota.DefaultWait))
	}
	return b.Until
}

func (l launcher) account(executor string) (string, bool) {
	exec, err := l.c.run.executors.Get(executor)
	if err != nil {
		return "", false
	}
	return executors.AccountOf(exec), true
}

func (l launcher) Wait(ctx context.Context, d time.Duration) error {
	wctx, end, err := l.c.ctl.begin(ctx)
	if err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		end()
		return nil
	case <-wctx.Done():
		if cause := end(); ctx.Err() == nil && cause != nil {
			return cause
		}
		return context.Cause(ctx)
	}
}

func (l launcher) Retrying(rt callpolicy.Retry) {
	c, r := l.c, l.c.run
	r.append(&record{Type: recRetry, Path: c.Path, Error: &errorInfo{Class: rt.Class, Message: rt.Err.Error()}})
	msg := rt.Err.Error()
	switch rt.Class {
	case "schema":
		msg = "schema: " + msg
	case "restarted":
		msg = "restarted by the user"
	}
	r.rt.bus.Publish(r.id, EventCallRetry, CallPayload{Path: c.Path, Label: c.Opts.Label, Phase: c.Phase, Error: msg,
		Attempt: rt.Attempt, Class: rt.Class, WaitMs: rt.Wait.Milliseconds()})
}

// runHost is what the call policy asks of a local run.
type runHost struct{ r *Run }

func (h runHost) Defaults(executor string) executors.Defaults {
	e, err := h.r.executors.Get(executor)
	if err != nil {
		return executors.Defaults{}
	}
	return executors.DefaultsOf(e)
}

func (h runHost) Schema(raw json.RawMessage) (callpolicy.Schema, error) {
	c, err := h.r.rt.schemas.get(raw)
	if c == nil || err != nil {
		return nil, err
	}
	return &Schema{c}, nil
}

func (h runHost) LimitHit(limit, msg string)            { h.r.limitHit(limit, msg) }
func (h runHost) Warn(sc *callpolicy.Scope, msg string) { h.r.logLine(sc, "warn", msg) }
