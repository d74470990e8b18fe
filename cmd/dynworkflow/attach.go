package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/web"
)

// attach follows a run executing in the live runtime over SSE until the
// execution it started ends, with the same progress view, outcome and
// exit code as a local run. Ctrl-C pauses the run, a second one stops it,
// as in a local run.
func (a *app) attach(ctx context.Context, cl *web.Client, start web.StartResponse) error {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)

	run := &remoteRun{followedRun{id: start.RunID}}
	run.progress.Status, run.progress.Started = engine.StatusRunning, time.Now()
	view := newProgressView(a.stderr, a.json, a.logs)
	// Its questions are asked here too; respond and the dashboard may
	// answer them first.
	view.askIn(a, func(ctx context.Context, cp web.Checkpoint, value json.RawMessage) error {
		return cl.Respond(ctx, cp.ID, value)
	})
	view.start(run)

	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		ended <- cl.Stream(streamCtx, start.Sequence, start.RunID, func(ev web.StreamEvent) error {
			return run.apply(streamCtx, cl, view, ev, start.Epoch)
		})
	}()
	interrupts, stopping := 0, false
	var err error
wait:
	for {
		select {
		case err = <-ended:
			break wait
		case <-signals:
			interrupts++
			if interrupts == 1 {
				view.note("pausing: the journal stays resumable; press Ctrl-C again to stop the run")
				if perr := cl.Pause(ctx, start.RunID); perr != nil {
					view.note("pause: " + perr.Error())
				}
				continue
			}
			view.note("stopping")
			stopping = true
			if serr := cl.Stop(ctx, start.RunID); serr != nil {
				view.note("stop: " + serr.Error())
			}
		}
	}
	view.stop()
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("following %s: %w (the run goes on in the runtime; see dynworkflow show %s)", start.RunID, err, start.RunID)}
	}
	d, err := cl.Run(ctx, start.RunID)
	var apiErr *web.APIError
	if err != nil && !errors.As(err, &apiErr) {
		// The runtime exited as the run ended (Ctrl-C of serve pauses
		// its runs): the journal on disk says the same.
		d, err = a.inspectLocally(start.RunID)
	}
	if err != nil {
		return apiFailure(err)
	}
	if stopping && d.Summary.Status == string(engine.StatusPaused) {
		if err := cl.Stop(ctx, start.RunID); err == nil {
			d.Summary.Status, d.Summary.PauseReason = string(engine.StatusStopped), ""
		}
	}
	out := outcomeOf(d)
	a.printOutcome(out)
	return exitFor(out.Status, out.Stats.ScriptErrors)
}

// errRunEnded ends the stream once the followed execution ended.
var errRunEnded = web.ErrStopStream

// followedRun is the status line's view of a run this process follows
// but does not run: its counters, kept by whoever reads the run's news.
type followedRun struct {
	id       string
	mu       sync.Mutex
	progress engine.Progress
	// calls are the running calls' last activities, from call.progress
	// events: a view of another process's run.
	calls map[string]engine.CallActivity
}

func (r *followedRun) ID() string { return r.id }

func (r *followedRun) Progress() engine.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.progress
	p.Troubled = engine.Troubled(r.calls, time.Now(), 3)
	return p
}

// noteActivity keeps the running calls' activity from their events.
func (r *followedRun) noteActivity(typ string, at time.Time, payload any) {
	if r.calls == nil {
		r.calls = map[string]engine.CallActivity{}
	}
	switch p := payload.(type) {
	case engine.CallPayload:
		switch typ {
		case engine.EventCallStarted:
			r.calls[p.Path] = engine.CallActivity{Path: p.Path, Label: p.Label, Since: at, Activity: executors.Activity{Kind: "started", At: at}}
		case engine.EventCallFinished, engine.EventCallFailed:
			delete(r.calls, p.Path)
		}
	case engine.ProgressPayload:
		if c, ok := r.calls[p.Path]; ok && p.Progress.Activity != nil {
			c.Note(*p.Progress.Activity)
			r.calls[p.Path] = c
		}
	}
}

// remoteRun keeps the counters of a run followed over the API, from its
// events.
type remoteRun struct{ followedRun }

// apply folds one event into the counters and prints its line, if it has
// one. It ends the stream at the run.status of epoch.
func (r *remoteRun) apply(ctx context.Context, cl *web.Client, view *progressView, ev web.StreamEvent, epoch int) error {
	if ev.Reset() {
		// Events were missed: the run itself says where it stands.
		d, err := cl.Run(ctx, r.id)
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.progress.Stats, r.progress.Phase = d.Summary.Stats, d.Summary.Phase
		r.mu.Unlock()
		if d.Summary.Epoch >= epoch && d.Summary.Status != string(engine.StatusRunning) {
			return errRunEnded
		}
		return nil
	}
	payload, ok := decodePayload(ev)
	if !ok {
		return nil
	}
	r.mu.Lock()
	r.noteActivity(ev.Type, ev.Timestamp, payload)
	s := &r.progress.Stats
	switch p := payload.(type) {
	case engine.StartedPayload:
		r.progress.Started = ev.Timestamp
	case engine.PhasePayload:
		r.progress.Phase = p.Title
	case engine.SpendPayload:
		// The run's own total, every execution and failed attempt
		// included, rather than the finished calls' sum.
		s.CostUSD, r.progress.MaxCostUSD = p.CostUSD, p.MaxCostUSD
	case engine.CallPayload:
		switch ev.Type {
		case engine.EventCallStarted:
			s.Running++
			r.progress.Calls++
		case engine.EventCallFinished:
			s.Running--
			s.Live++
			if p.Usage != nil {
				s.InputTokens += p.Usage.InputTokens
				s.OutputTokens += p.Usage.OutputTokens
				s.CachedInputTokens += p.Usage.CachedInputTokens
			}
		case engine.EventCallFailed:
			s.Running--
			s.Failed++
		case engine.EventCallReplayed:
			s.Replayed++
			r.progress.Calls++
		}
		s.Agents = s.Replayed + s.Live + s.Failed
	}
	r.mu.Unlock()
	view.apply(ev.Type, payload)

	switch p := payload.(type) {
	case engine.StatusPayload:
		if p.Status != engine.StatusRunning && p.Epoch == epoch {
			return errRunEnded
		}
	case runDeleted:
		return errors.New("the run was deleted")
	}
	return nil
}

// runDeleted stands for the run.deleted event, which has no payload the
// view needs.
type runDeleted struct{}

// decodePayload decodes the payload of a streamed event into the type the
// engine publishes it with, so that the view reads local and remote runs
// alike.
func decodePayload(ev web.StreamEvent) (any, bool) {
	var v any
	switch ev.Type {
	case engine.EventRunStarted, engine.EventRunResumed:
		v = &engine.StartedPayload{}
	case engine.EventRunStatus:
		v = &engine.StatusPayload{}
	case engine.EventCallStarted, engine.EventCallFinished, engine.EventCallFailed, engine.EventCallReplayed, engine.EventCallRetry:
		v = &engine.CallPayload{}
	case engine.EventCallProgress:
		v = &engine.ProgressPayload{}
	case engine.EventPhase:
		v = &engine.PhasePayload{}
	case engine.EventLog:
		v = &engine.LogPayload{}
	case engine.EventLimit:
		v = &engine.LimitPayload{}
	case web.EventCheckpointPending, web.EventCheckpointWithdrawn:
		v = &web.Checkpoint{}
	case engine.EventCheckpoint:
		v = &engine.CheckpointPayload{}
	case engine.EventRunSpend:
		v = &engine.SpendPayload{}
	case web.EventRunDeleted:
		return runDeleted{}, true
	default:
		return nil, false
	}
	if json.Unmarshal(ev.Payload, v) != nil {
		return nil, false
	}
	// The view matches on values, as the engine publishes them.
	switch p := v.(type) {
	case *engine.StartedPayload:
		return *p, true
	case *engine.StatusPayload:
		return *p, true
	case *engine.CallPayload:
		return *p, true
	case *engine.PhasePayload:
		return *p, true
	case *engine.ProgressPayload:
		return *p, true
	case *engine.LogPayload:
		return *p, true
	case *engine.LimitPayload:
		return *p, true
	case *web.Checkpoint:
		return *p, true
	case *engine.CheckpointPayload:
		return *p, true
	case *engine.SpendPayload:
		return *p, true
	}
	return nil, false
}

// outcomeOf is the outcome of a run's latest execution, from its detail.
func outcomeOf(d *engine.Detail) engine.Outcome {
	s := d.Summary
	o := engine.Outcome{
		RunID: s.RunID, Name: s.Name, Status: engine.Status(s.Status), PauseReason: s.PauseReason,
		Result: d.Result, Error: s.Error, ErrorCode: s.ErrorCode, Stats: s.Stats, Epoch: s.Epoch, Failures: d.Failures, ScriptErrors: d.ScriptErrors,
		Executor: d.Options.Executor, ExecutorSource: d.Options.ExecutorSource, SimulatedAnswers: d.SimulatedAnswers,
		MaxCostUSD: s.MaxCostUSD,
	}
	if len(o.Result) == 0 || o.Status != engine.StatusCompleted {
		o.Result = json.RawMessage("null")
	}
	if n := len(d.Executions); n > 0 {
		last := d.Executions[n-1]
		end := time.Now()
		if s.EndedAt != nil {
			end = *s.EndedAt
		}
		o.DurationMs = end.Sub(last.StartedAt).Milliseconds()
	}
	return o
}

// inspectLocally reads a run from the state on disk.
func (a *app) inspectLocally(id string) (*engine.Detail, error) {
	rt, err := a.runtime(simulate.Config{})
	if err != nil {
		return nil, err
	}
	return rt.Inspect(id)
}
