//go:build temporal

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal"
	"github.com/dynworkflow/dynworkflow/engine/temporal/index"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/web"
)

// runOnTemporal starts a run on Temporal and follows it.
func (a *app) runOnTemporal(cmd *cobra.Command, of *optionFlags, bf *backendFlags, ref string) error {
	req, err := a.temporalStartRequest(cmd, of, bf, ref)
	if err != nil {
		return err
	}
	c, err := a.dialTemporal(cmd.Context(), bf.temporal)
	if err != nil {
		return err
	}
	defer c.Close()
	in, err := c.Start(cmd.Context(), req)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	opts := req.Options
	ix, err := a.temporalIndex()
	if err != nil {
		return err
	}
	entry := temporal.Entry{RunID: in.RunID, Config: c.Config(), Summary: store.Summary{
		RunID: in.RunID, Name: in.Name, Description: in.Description, Status: string(engine.StatusRunning),
		ScriptPath: in.Script.Path, ScriptHash: in.ScriptHash, Executor: opts.Executor, StartedAt: in.CreatedAt, UpdatedAt: in.CreatedAt,
	}}
	if err := ix.Put(entry); err != nil {
		return fmt.Errorf("record run %s in the project's index: %w", in.RunID, err)
	}
	fmt.Fprintf(a.stderr, "%s started on Temporal at %s (namespace %s, task queue %s)\n", in.RunID, c.Config().Address, c.Config().Namespace, c.Config().TaskQueue)
	return a.followTemporal(cmd.Context(), c, ix, entry, in.Epoch)
}

// temporalStartRequest is what a new run on Temporal of the workflow ref
// starts with: the flags' options, the script bundled with what it loads,
// the project, and the executors' configuration here.
func (a *app) temporalStartRequest(cmd *cobra.Command, of *optionFlags, bf *backendFlags, ref string) (temporal.StartRequest, error) {
	var req temporal.StartRequest
	opts, err := a.options(cmd, of)
	if err != nil {
		return req, err
	}
	if ref == "-" {
		if err := a.readStdinScript(); err != nil {
			return req, err
		}
	}
	for _, f := range []string{"simulate-latency", "simulate-failure-rate", "simulate-seed", "command-executor"} {
		if cmd.Flags().Changed(f) {
			fmt.Fprintf(a.stderr, "dynworkflow: --%s configures this process's executors; on Temporal the agents run on the workers: give it to `dynworkflow worker`\n", f)
		}
	}
	rt, scriptArgs, err := a.localRuntime(cmd, of, nil)
	if err != nil {
		return req, err
	}
	script, err := a.loadScript(rt, ref)
	if err != nil {
		return req, &exitError{code: exitFailed, err: err}
	}
	if opts.ConfirmAboveUSD > 0 {
		// Asked here, before anything starts on Temporal.
		if err := a.confirmHere(cmd.Context(), rt, script, scriptArgs, opts); err != nil {
			return req, err
		}
		opts.ConfirmAboveUSD = 0
	}
	// The bundle is what was loaded (a script read from stdin has no
	// file), with whatever it loads read from disk.
	bundle, script, err := temporal.BundleSource(a.hosts(), lang.Source{Path: script.Path(), Text: script.Text()})
	if err != nil {
		return req, &exitError{code: exitFailed, err: err}
	}
	cwd, err := a.projectDir()
	if err != nil {
		return req, err
	}
	defaults, err := a.executorDefaults()
	if err != nil {
		return req, err
	}
	return temporal.StartRequest{
		Bundle: bundle, Script: script, Args: scriptArgs, Options: opts, Cwd: cwd,
		Human: bf.awaitCheckpoints, Heartbeat: bf.heartbeat, Defaults: defaults,
		Cost: costModelFor(rt, script.Meta().Name, max(opts.MaxCostUSD, script.Meta().MaxCost) > 0),
	}, nil
}

// costModelFor is what a run on Temporal prices its calls with: this
// machine's price table, and, for a run with a dollar cap, what the
// workflow's earlier runs here used.
func costModelFor(rt *engine.Runtime, name string, learn bool) *cost.Model {
	est := cost.NewEstimates(rt.Prices().DefaultUsage())
	if learn {
		est = rt.Estimates(name)
	}
	return &cost.Model{Prices: rt.Prices(), Estimates: est}
}

// resumeOnTemporal resumes a run on Temporal, or attaches to it when it is
// still running and attach is set.
func (a *app) resumeOnTemporal(cmd *cobra.Command, of *optionFlags, bf *backendFlags, e temporal.Entry, scriptPath string, attach bool) error {
	c, err := a.dialTemporal(cmd.Context(), e.Config)
	if err != nil {
		return err
	}
	defer c.Close()
	ix, err := a.temporalIndex()
	if err != nil {
		return err
	}
	st, err := c.State(cmd.Context(), e.RunID)
	if err == nil && st.Status == engine.StatusRunning {
		if !attach {
			return &exitError{code: exitFailed, err: fmt.Errorf("%w: %s is still running on Temporal; follow it with: dynworkflow resume %s --attach", engine.ErrNotResumable, e.RunID, e.RunID)}
		}
		fmt.Fprintf(a.stderr, "%s is running on Temporal: attached\n", e.RunID)
		return a.followTemporal(cmd.Context(), c, ix, e, st.Epoch)
	}
	scriptArgs, err := of.argsJSON(cmd, a.maxNesting)
	if err != nil {
		return err
	}
	req := temporal.ResumeRequest{Args: scriptArgs, Options: func(o *engine.Options) { of.apply(cmd, o) }}
	if req.Defaults, err = a.executorDefaults(); err != nil {
		return err
	}
	if rt, err := a.runtime(simulate.Config{}); err == nil {
		req.Cost = costModelFor(rt, e.Summary.Name, true)
	}
	if cmd.Flags().Changed("await-checkpoints") {
		req.Human = &bf.awaitCheckpoints
	}
	if cmd.Flags().Changed("heartbeat-timeout") {
		req.Heartbeat = bf.heartbeat
	}
	if scriptPath != "" {
		abs, err := filepath.Abs(scriptPath)
		if err != nil {
			return err
		}
		if req.Bundle, req.Script, err = temporal.BundleFile(a.hosts(), abs); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
	}
	in, err := c.Resume(cmd.Context(), e.RunID, req)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	e.Summary.Status, e.Summary.Epoch = string(engine.StatusRunning), in.Epoch
	if err := ix.Put(e); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "%s resumed on Temporal (execution %d, %s rule)\n", e.RunID, in.Epoch, in.Rule)
	return a.followTemporal(cmd.Context(), c, ix, e, in.Epoch)
}

// followTemporal shows a run's progress on Temporal until the execution
// ends, turns Ctrl-C into pause (then stop), prints the outcome and
// returns the exit code as an error. Killing this process does not touch
// the run: it goes on in Temporal, and `resume --attach` follows it again.
func (a *app) followTemporal(ctx context.Context, c *temporal.Client, ix index.Index, e temporal.Entry, epoch int) error {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	src := &temporalRun{followedRun{id: e.RunID}}
	src.progress.Status, src.progress.Started = engine.StatusRunning, time.Now()
	view := newProgressView(a.stderr, a.json, a.logs)
	view.start(src)
	a.startupOver()
	// The end comes from the server (a long poll); the progress comes from
	// the workflow (a query), which a worker answers between its workflow
	// tasks, so it is asked only once a second.
	waitCtx, cancelWait := context.WithCancel(ctx)
	defer cancelWait()
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for waitCtx.Err() == nil {
			if c.AwaitEnd(waitCtx, e.RunID) == nil {
				return
			}
			time.Sleep(time.Second) // the server did not answer: ask again
		}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	interrupts, stopping := 0, false
	var st temporal.State
	var lastErr string
follow:
	for {
		select {
		case <-ctx.Done():
			view.stop()
			return ctx.Err()
		case <-ended:
			break follow
		case <-signals:
			interrupts++
			if interrupts == 1 {
				view.note("pausing: finished calls stay; press Ctrl-C again to stop the run")
				if err := c.Pause(ctx, e.RunID, "interrupted"); err != nil {
					view.note("pause: " + err.Error())
				}
				continue
			}
			view.note("stopping")
			stopping = true
			if err := c.Stop(ctx, e.RunID); err != nil {
				view.note("stop: " + err.Error())
			}
			continue
		case <-tick.C:
		}
		next, err := queryState(ctx, c, e.RunID)
		if err != nil {
			if msg := err.Error(); msg != lastErr {
				view.note("waiting for a worker on task queue " + c.Config().TaskQueue + ": " + msg)
				lastErr = msg
			}
			continue
		}
		lastErr = ""
		if next.Epoch < epoch {
			continue // the execution followed has not begun yet
		}
		src.update(view, st, next)
		st = next
	}
	// The ended execution's own state, with the lines that came since the
	// last poll.
	for {
		next, err := c.State(ctx, e.RunID)
		if err == nil && next.Epoch >= epoch && next.Status != engine.StatusRunning {
			src.update(view, st, next)
			st = next
			break
		}
		if ctx.Err() != nil {
			view.stop()
			return ctx.Err()
		}
		time.Sleep(100 * time.Millisecond)
	}
	view.stop()
	if stopping && st.Status == engine.StatusPaused {
		// The second Ctrl-C came as the pause settled: it still means stop.
		if err := c.Stop(ctx, e.RunID); err == nil {
			st = a.waitEnd(ctx, c, e.RunID, st)
		}
	}
	if e2, err := c.Refresh(ctx, e); err == nil {
		_ = ix.Put(e2)
	}
	a.traceDetail(ctx, func(ctx context.Context) (*engine.Detail, error) { return c.Detail(ctx, e.RunID) })
	out := outcomeOfState(st)
	a.printOutcome(out)
	return exitFor(out.Status, out.Stats.ScriptErrors)
}

// waitEnd waits for a run's current execution to end, keeping st if it
// cannot tell.
func (a *app) waitEnd(ctx context.Context, c *temporal.Client, runID string, st temporal.State) temporal.State {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if next, err := c.Wait(ctx, runID); err == nil {
		return next
	}
	return st
}

// outcomeOfState is how an execution on Temporal ended, as a local run
// reports it.
func outcomeOfState(st temporal.State) engine.Outcome {
	o := engine.Outcome{RunID: st.RunID, Name: st.Name, Status: st.Status, PauseReason: st.PauseReason,
		Result: st.Result, Error: st.Error, Stats: st.Stats, Epoch: st.Epoch, ScriptErrors: engine.SortScriptErrors(st.ScriptErrors)}
	if len(o.Result) == 0 || o.Status != engine.StatusCompleted {
		o.Result = json.RawMessage("null")
	}
	end := st.EndedAt
	if end.IsZero() {
		end = time.Now()
	}
	o.DurationMs = end.Sub(st.StartedAt).Milliseconds()
	return o
}

// temporalRun keeps the counters of a run on Temporal, from the states
// the follower polls.
type temporalRun struct{ followedRun }

// update takes a newer state, and shows the log lines, phases and
// checkpoints that came since the previous one.
func (r *temporalRun) update(view *progressView, prev, next temporal.State) {
	r.mu.Lock()
	r.progress.Status, r.progress.Phase, r.progress.Stats, r.progress.Calls = next.Status, next.Phase, next.Stats, next.Calls
	if !next.StartedAt.IsZero() {
		r.progress.Started = next.StartedAt
	}
	r.mu.Unlock()
	// A new execution says everything anew, but one that continues the
	// last (its history grew long) starts with what it said: printing
	// resumes after the last line seen, wherever it is.
	seen := 0
	if n := len(prev.Logs); n > 0 {
		last := prev.Logs[n-1]
		for i := len(next.Logs) - 1; i >= 0; i-- {
			if next.Logs[i] == last {
				seen = i + 1
				break
			}
		}
	}
	for _, l := range next.Logs[seen:] {
		if l.Level == "phase" {
			view.apply(engine.EventPhase, engine.PhasePayload{Scope: l.Scope, Title: l.Message})
		} else {
			view.apply(engine.EventLog, engine.LogPayload{Scope: l.Scope, Level: l.Level, Message: l.Message})
		}
	}
	asked := map[string]bool{}
	for _, cp := range pendingOf(prev) {
		asked[cp.ID] = true
	}
	for _, cp := range pendingOf(next) {
		if !asked[cp.ID] {
			view.apply(web.EventCheckpointPending, cp)
		}
	}
}

// executorDefaults is the executors' configuration here, by name, which a
// run on Temporal resolves its calls against, as a local run does against
// its executors (see temporal.RunInput.Defaults).
func (a *app) executorDefaults() (map[string]executors.Defaults, error) {
	cwd, err := a.projectDir()
	if err != nil {
		return nil, err
	}
	conf, err := a.executorConfig(cwd)
	if err != nil {
		return nil, err
	}
	out := map[string]executors.Defaults{}
	for _, e := range conf.Executors {
		if d := e.Defaults(); d != (executors.Defaults{}) {
			out[e.Name] = d
		}
	}
	return out, nil
}

// confirmHere is --confirm-above asked in this terminal before a run
// starts elsewhere (on Temporal, whose checkpoints this process does not
// broker): the run's plan, and a yes or no; refused without a terminal.
func (a *app) confirmHere(ctx context.Context, rt *engine.Runtime, script lang.Script, args json.RawMessage, opts engine.Options) error {
	if !a.canAsk() {
		return a.refuseUnconfirmed(ctx, rt, script, args, opts)
	}
	p, err := rt.Plan(ctx, engine.PlanRequest{Script: script, Args: args, Options: opts})
	if err != nil {
		return err
	}
	f := p.Forecast
	if f.USD <= opts.ConfirmAboveUSD {
		return nil
	}
	fmt.Fprintf(a.stderr, "? This run is forecast to cost $%s (%s; %s), above --confirm-above $%s. Start it? [y/N] ",
		dollars(f.USD), plural(f.Calls, "agent call"), forecastBasis(f), dollars(opts.ConfirmAboveUSD))
	answer, _ := bufio.NewReader(a.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return &exitError{code: exitFailed, kind: "cost_not_confirmed", err: fmt.Errorf("the forecast ($%s) was declined: nothing ran", dollars(f.USD))}
}
