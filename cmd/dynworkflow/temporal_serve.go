//go:build temporal

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/web"
)

// `serve` and the project's runs on Temporal: its API lists and shows
// them, pauses, stops, resumes and deletes them, and follows them on its
// event stream (run.status as their state changes, their checkpoints in
// the server's broker, answered on Temporal). With --backend temporal it
// also starts the runs of POST /api/runs there.

// runsElsewhere is what the API of `serve` shows and controls beside the
// runtime's own runs: the project's runs on Temporal. bf says where the
// runs it starts go.
func (a *app) runsElsewhere(rt *engine.Runtime, bf *backendFlags) (web.RunSource, error) {
	return &temporalSource{a: a, rt: rt, bf: bf, log: a.sdkLog()}, nil
}

// temporalSource shows and controls the project's runs on Temporal
// through the API of `serve`.
type temporalSource struct {
	a   *app
	rt  *engine.Runtime
	bf  *backendFlags
	log *slog.Logger

	poolOnce sync.Once
	pool     *temporalPool // connections for the server's lifetime
}

// client is a connection to the Temporal of cfg, kept for the server's
// lifetime.
func (s *temporalSource) client(ctx context.Context, cfg temporal.Config) (*temporal.Client, error) {
	s.poolOnce.Do(func() { s.pool = s.a.newTemporalPool(nil) })
	return s.pool.get(ctx, cfg)
}

func (s *temporalSource) Summaries(ctx context.Context) ([]store.Summary, error) {
	return s.a.temporalRuns(ctx)
}

func (s *temporalSource) Detail(ctx context.Context, id string) (*engine.Detail, bool, error) {
	e, ok, err := s.a.temporalEntry(id)
	if err != nil || !ok {
		return nil, false, err
	}
	d, _, err := s.a.showTemporal(ctx, e)
	return d, true, err
}

// Start starts a run on the Temporal of the backend flags. Its
// checkpoints wait for an answer, as a run of `serve` does: the API and
// the dashboard give it.
func (s *temporalSource) Start(ctx context.Context, req web.RemoteStart) (string, error) {
	a := s.a
	bundle, script, err := temporal.BundleSource(a.hosts(), lang.Source{Path: req.Script.Path(), Text: req.Script.Text()})
	if err != nil {
		return "", err
	}
	cwd, err := a.projectDir()
	if err != nil {
		return "", err
	}
	defaults, err := a.executorDefaults()
	if err != nil {
		return "", err
	}
	c, err := s.client(ctx, s.bf.temporal)
	if err != nil {
		return "", err
	}
	opts := req.Options
	// The API's caller asked for this run: there is no terminal to ask.
	opts.ConfirmAboveUSD = 0
	in, err := c.Start(ctx, temporal.StartRequest{
		Bundle: bundle, Script: script, Args: req.Args, Options: opts, Cwd: cwd,
		Human: true, Heartbeat: s.bf.heartbeat, Defaults: defaults,
		Cost: costModelFor(s.rt, script.Meta().Name, max(opts.MaxCostUSD, script.Meta().MaxCost) > 0),
	})
	if err != nil {
		return "", err
	}
	ix, err := a.temporalIndex()
	if err != nil {
		return "", err
	}
	entry := temporal.Entry{RunID: in.RunID, Config: c.Config(), Summary: store.Summary{
		RunID: in.RunID, Name: in.Name, Description: in.Description, Status: string(engine.StatusRunning),
		ScriptPath: in.Script.Path, ScriptHash: in.ScriptHash, Executor: opts.Executor, StartedAt: in.CreatedAt, UpdatedAt: in.CreatedAt,
	}}
	if err := ix.Put(entry); err != nil {
		return "", fmt.Errorf("record run %s in the project's index: %w", in.RunID, err)
	}
	s.rt.Events().Publish(in.RunID, engine.EventRunStarted, map[string]any{"epoch": in.Epoch, "name": in.Name})
	return in.RunID, nil
}

// Resume resumes a run on Temporal as it is: the same script and args,
// the executors' configuration here.
func (s *temporalSource) Resume(ctx context.Context, id string) (int, bool, error) {
	e, ok, err := s.a.temporalEntry(id)
	if err != nil || !ok {
		return 0, ok, err
	}
	c, err := s.client(ctx, e.Config)
	if err != nil {
		return 0, true, err
	}
	req := temporal.ResumeRequest{Cost: costModelFor(s.rt, e.Summary.Name, true)}
	if req.Defaults, err = s.a.executorDefaults(); err != nil {
		return 0, true, err
	}
	in, err := c.Resume(ctx, id, req)
	if err != nil {
		return 0, true, err
	}
	ix, err := s.a.temporalIndex()
	if err != nil {
		return 0, true, err
	}
	e.Summary.Status, e.Summary.Epoch, e.Summary.PauseReason = string(engine.StatusRunning), in.Epoch, ""
	if err := ix.Put(e); err != nil {
		return 0, true, err
	}
	s.rt.Events().Publish(id, engine.EventRunResumed, map[string]any{"epoch": in.Epoch})
	return in.Epoch, true, nil
}

// Act pauses, stops or deletes a run on Temporal.
func (s *temporalSource) Act(ctx context.Context, id, action string) (bool, error) {
	e, ok, err := s.a.temporalEntry(id)
	if err != nil || !ok {
		return ok, err
	}
	c, err := s.client(ctx, e.Config)
	if err != nil {
		return true, err
	}
	switch action {
	case "pause":
		return true, c.Pause(ctx, id, "paused from the API")
	case "stop":
		return true, c.Stop(ctx, id)
	case "delete":
		if st, err := c.State(ctx, id); err == nil && st.Status == engine.StatusRunning {
			return true, fmt.Errorf("%w: %s is running on Temporal; stop it before deleting it", engine.ErrRunning, id)
		}
		ix, err := s.a.temporalIndex()
		if err != nil {
			return true, err
		}
		if err := ix.Delete(id); err != nil {
			return true, err
		}
		s.rt.Events().Publish(id, web.EventRunDeleted, nil)
		return true, nil
	}
	return true, fmt.Errorf("%s: not an action on a run", action)
}

// watchEvery is how often the server asks Temporal how its running runs
// do: a query each, which a worker answers between workflow tasks.
const watchEvery = time.Second

// Watch follows the project's running runs on Temporal until ctx ends:
// it publishes run.status when a run's state or counts change (the
// dashboard then reads the run again), and puts the checkpoints they wait
// on in cps, answering each on Temporal when the API does.
func (s *temporalSource) Watch(ctx context.Context, bus *engine.Bus, cps *web.Checkpoints) {
	w := &temporalWatch{s: s, bus: bus, cps: cps, seen: map[string]engine.StatusPayload{}, asked: map[string]context.CancelFunc{}}
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		w.poll(ctx)
		select {
		case <-ctx.Done():
			w.withdrawAll()
			return
		case <-t.C:
		}
	}
}

// temporalWatch is what Watch knows of the runs it follows.
type temporalWatch struct {
	s   *temporalSource
	bus *engine.Bus
	cps *web.Checkpoints
	// seen is each run's state as last published.
	seen map[string]engine.StatusPayload
	// asked cancels the question of each checkpoint put in cps, by id.
	mu    sync.Mutex
	asked map[string]context.CancelFunc
}

func (w *temporalWatch) poll(ctx context.Context) {
	ix, err := w.s.a.temporalIndex()
	if err != nil {
		return
	}
	entries, err := ix.List()
	if err != nil {
		return
	}
	pending := map[string]bool{}
	for _, e := range entries {
		_, following := w.seen[e.RunID]
		if st := e.Summary.Status; st != string(engine.StatusRunning) && st != temporal.StatusWaiting && !following {
			// A run the watch followed is asked once more: `list` (or
			// the API's listing) may have seen it end first.
			continue
		}
		c, err := w.s.client(ctx, e.Config)
		if err != nil {
			continue
		}
		st, err := queryState(ctx, c, e.RunID)
		if err != nil {
			continue
		}
		p := engine.StatusPayload{Status: st.Status, PauseReason: st.PauseReason, Error: st.Error, Epoch: st.Epoch,
			Replayed: st.Stats.Replayed, Live: st.Stats.Live, Failed: st.Stats.Failed, Retried: st.Stats.Retried}
		if st.Status != engine.StatusRunning {
			p.ScriptErrors = st.ScriptErrors
		}
		if prev, ok := w.seen[e.RunID]; !ok || !sameStatus(prev, p) {
			w.seen[e.RunID] = p
			w.bus.Publish(e.RunID, engine.EventRunStatus, p)
		}
		if st.Status != engine.StatusRunning {
			// It ended: the index has it as it is now, and the watch
			// leaves it.
			e.Summary.Status, e.Summary.PauseReason, e.Summary.Error = string(st.Status), st.PauseReason, st.Error
			_ = ix.Put(e)
			delete(w.seen, e.RunID)
			continue
		}
		for _, cp := range pendingOf(st) {
			pending[cp.ID] = true
			w.ask(ctx, c, cp)
		}
	}
	// A checkpoint answered elsewhere (the CLI), or whose run paused, is
	// no longer asked here.
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, cancel := range w.asked {
		if !pending[id] {
			cancel()
			delete(w.asked, id)
		}
	}
}

// ask puts a checkpoint of a run on Temporal in the server's broker, once,
// and answers it on Temporal when the API or the dashboard does.
func (w *temporalWatch) ask(ctx context.Context, c *temporal.Client, cp web.Checkpoint) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.asked[cp.ID]; ok {
		return
	}
	actx, cancel := context.WithCancel(ctx)
	w.asked[cp.ID] = cancel
	req := lang.CheckpointRequest{Prompt: cp.Prompt, Kind: cp.Kind, Choices: cp.Choices, Default: cp.Default}
	go func() {
		answer, err := w.cps.Ask(actx, cp.RunID, cp.Path, req)
		if err != nil {
			return // withdrawn
		}
		err = c.Respond(ctx, cp.RunID, cp.Path, answer)
		if err != nil {
			w.s.log.Warn("answer a checkpoint on Temporal", "run", cp.RunID, "path", cp.Path, "err", err)
			if !errors.Is(err, temporal.ErrAnswerRefused) {
				// Asked again on the next poll, if it still waits.
				w.mu.Lock()
				delete(w.asked, cp.ID)
				w.mu.Unlock()
			}
			return
		}
		w.bus.Publish(cp.RunID, engine.EventCheckpoint, map[string]any{"path": cp.Path, "source": "human"})
	}()
}

// withdrawAll withdraws every checkpoint the watch put in the broker.
func (w *temporalWatch) withdrawAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, cancel := range w.asked {
		cancel()
		delete(w.asked, id)
	}
}

// sameStatus says whether two run.status payloads tell the same: the
// script errors come only with the end, which the status tells.
func sameStatus(a, b engine.StatusPayload) bool {
	type told struct {
		status                        engine.Status
		reason, err                   string
		epoch, replayed, live, failed int
		retried                       int
	}
	key := func(p engine.StatusPayload) told {
		return told{p.Status, p.PauseReason, p.Error, p.Epoch, p.Replayed, p.Live, p.Failed, p.Retried}
	}
	return key(a) == key(b)
}
