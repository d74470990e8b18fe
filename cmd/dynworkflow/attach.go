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
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/web"
)

// attach follows a run executing in the live runtime over SSE until the
// execution it started ends, with the same progress view, outcome and
// exit code as a local run. Ctrl-C pauses the run, a second one stops it,
// as in a local run.
func (a *app) attach(ctx context.Context, cl *web.Client, start web.StartResponse) error {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	run := &remoteRun{id: start.RunID}
	run.progress.Status, run.progress.Started = engine.StatusRunning, time.Now()
	view := newRemoteProgressView(a.stderr, run, !a.json && isTerminal(a.stderr))
	view.start()

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
	return exitFor(out.Status)
}

// errRunEnded ends the stream once the followed execution ended.
var errRunEnded = web.ErrStopStream

// remoteRun keeps the counters of a run followed over the API, from its
// events, for the status line.
type remoteRun struct {
	id       string
	mu       sync.Mutex
	progress engine.Progress
}

func (r *remoteRun) ID() string { return r.id }

func (r *remoteRun) Progress() engine.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.progress
}

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
	var call engine.CallPayload
	decode := func(v any) bool { return json.Unmarshal(ev.Payload, v) == nil }
	r.mu.Lock()
	s := &r.progress.Stats
	switch ev.Type {
	case engine.EventRunStarted, engine.EventRunResumed:
		r.progress.Started = ev.Timestamp
	case engine.EventCallStarted:
		s.Running++
	case engine.EventCallFinished:
		s.Running--
		s.Live++
		if decode(&call) && call.Usage != nil {
			s.InputTokens += call.Usage.InputTokens
			s.OutputTokens += call.Usage.OutputTokens
			s.CachedInputTokens += call.Usage.CachedInputTokens
		}
	case engine.EventCallFailed:
		s.Running--
		s.Failed++
	case engine.EventCallReplayed:
		s.Replayed++
	}
	s.Agents = s.Replayed + s.Live + s.Failed
	r.mu.Unlock()

	switch ev.Type {
	case engine.EventPhase:
		var p engine.PhasePayload
		if decode(&p) {
			r.mu.Lock()
			r.progress.Phase = p.Title
			r.mu.Unlock()
			view.print(p.Line())
		}
	case engine.EventLog:
		var p engine.LogPayload
		if decode(&p) {
			view.print(p.Line())
		}
	case engine.EventLimit:
		var p engine.LimitPayload
		if decode(&p) {
			view.print(p.Line())
		}
	case web.EventCheckpointPending:
		var cp web.Checkpoint
		if decode(&cp) {
			view.print(fmt.Sprintf("checkpoint %s: %s (answer with: dynworkflow respond %s VALUE)", cp.ID, cp.Prompt, cp.ID))
		}
	case engine.EventRunStatus:
		var p engine.StatusPayload
		if decode(&p) && p.Status != engine.StatusRunning && p.Epoch == epoch {
			return errRunEnded
		}
	case web.EventRunDeleted:
		return errors.New("the run was deleted")
	}
	return nil
}

// outcomeOf is the outcome of a run's latest execution, from its detail.
func outcomeOf(d *engine.Detail) engine.Outcome {
	s := d.Summary
	o := engine.Outcome{
		RunID: s.RunID, Name: s.Name, Status: engine.Status(s.Status), PauseReason: s.PauseReason,
		Result: d.Result, Error: s.Error, Stats: s.Stats, Epoch: s.Epoch, Failures: d.Failures,
		Executor: d.Options.Executor, ExecutorSource: d.Options.ExecutorSource, SimulatedAnswers: d.SimulatedAnswers,
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
