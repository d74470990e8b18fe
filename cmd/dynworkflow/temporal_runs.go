//go:build temporal

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal"
	"github.com/dynworkflow/dynworkflow/web"
)

// temporalPool dials each Temporal server once for a command that visits
// several runs, and gives up on one that did not answer.
type temporalPool struct {
	a       *app
	clients map[temporal.Config]*temporal.Client
	failed  map[temporal.Config]error
	// onDialError, if set, hears of each server that did not answer, once.
	onDialError func(temporal.Config, error)
}

func (a *app) newTemporalPool(onDialError func(temporal.Config, error)) *temporalPool {
	return &temporalPool{a: a, clients: map[temporal.Config]*temporal.Client{}, failed: map[temporal.Config]error{},
		onDialError: onDialError}
}

// queryState asks a Temporal run's state, for at most queryPatience: the
// query is answered by a worker, which may be busy or gone.
func queryState(ctx context.Context, c *temporal.Client, runID string) (temporal.State, error) {
	ctx, cancel := context.WithTimeout(ctx, queryPatience)
	defer cancel()
	return c.State(ctx, runID)
}

// queryPatience bounds one query of a run's state.
const queryPatience = 5 * time.Second

// get is the client of cfg's server, dialled on first use.
func (p *temporalPool) get(ctx context.Context, cfg temporal.Config) (*temporal.Client, error) {
	if err, ok := p.failed[cfg]; ok {
		return nil, err
	}
	if c := p.clients[cfg]; c != nil {
		return c, nil
	}
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	full, err := p.a.withBlobs(cfg)
	if err != nil {
		return nil, err
	}
	c, err := temporal.Dial(dctx, full, p.a.hosts(), nil)
	if err != nil {
		p.failed[cfg] = err
		if p.onDialError != nil {
			p.onDialError(cfg, err)
		}
		return nil, err
	}
	p.clients[cfg] = c
	return c, nil
}

func (p *temporalPool) close() {
	for _, c := range p.clients {
		c.Close()
	}
}

// temporalRuns refreshes the project's runs on Temporal for a listing,
// one connection per server. A server that does not answer leaves its
// runs as last seen, with a warning.
func (a *app) temporalRuns(ctx context.Context) ([]store.Summary, error) {
	ix, err := a.temporalIndex()
	if err != nil {
		return nil, err
	}
	pool := a.newTemporalPool(func(cfg temporal.Config, err error) {
		fmt.Fprintf(a.stderr, "dynworkflow: runs on Temporal at %s shown as last seen: %v\n", cfg.Address, err)
	})
	defer pool.close()
	// The runs the project's schedules started are its runs too.
	if err := a.adoptScheduled(ctx, pool); err != nil {
		return nil, err
	}
	entries, err := ix.List()
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	out := make([]store.Summary, 0, len(entries))
	for _, e := range entries {
		if e.Summary.Status == string(engine.StatusStopped) {
			out = append(out, e.Summary)
			continue
		}
		c, err := pool.get(ctx, e.Config)
		if err != nil {
			out = append(out, e.Summary)
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		fresh, err := c.Refresh(rctx, e)
		cancel()
		if err != nil {
			fmt.Fprintf(a.stderr, "dynworkflow: %s shown as last seen: %v\n", e.RunID, err)
			out = append(out, e.Summary)
			continue
		}
		if !reflect.DeepEqual(fresh.Summary, e.Summary) || fresh.Execution != e.Execution {
			_ = ix.Put(fresh)
		}
		out = append(out, fresh.Summary)
	}
	return out, nil
}

// showTemporal reads a run's detail from Temporal, and the checkpoints it
// waits on.
func (a *app) showTemporal(ctx context.Context, e temporal.Entry) (*engine.Detail, []web.Checkpoint, error) {
	c, err := a.dialTemporal(ctx, e.Config)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	d, err := c.Detail(ctx, e.RunID)
	if err != nil {
		return nil, nil, &exitError{code: exitFailed, err: err}
	}
	var waiting []web.Checkpoint
	if d.Summary.Status == string(engine.StatusRunning) {
		if st, err := c.State(ctx, e.RunID); err == nil {
			waiting = pendingOf(st)
		}
	}
	return d, waiting, nil
}

// pendingOf lists the checkpoints a run on Temporal waits on, as the live
// runtime lists its own.
func pendingOf(st temporal.State) []web.Checkpoint {
	var out []web.Checkpoint
	for _, cp := range st.Checkpoints {
		if cp.Pending {
			out = append(out, web.Checkpoint{ID: web.CheckpointID(st.RunID, cp.Path), RunID: st.RunID, Path: cp.Path,
				Prompt: cp.Request.Prompt, Kind: cp.Request.Kind, Choices: cp.Request.Choices, Default: cp.Request.Default, CreatedAt: cp.AskedAt})
		}
	}
	return out
}

// controlTemporal pauses or stops a run on Temporal.
func (a *app) controlTemporal(ctx context.Context, e temporal.Entry, action string) error {
	c, err := a.dialTemporal(ctx, e.Config)
	if err != nil {
		return err
	}
	defer c.Close()
	switch action {
	case "paused":
		err = c.Pause(ctx, e.RunID, "paused by `dynworkflow pause`")
	case "stopped":
		err = c.Stop(ctx, e.RunID)
	}
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	a.done(action, e.RunID)
	return nil
}

// controlCallTemporal stops or restarts one call of a run on Temporal.
func (a *app) controlCallTemporal(ctx context.Context, e temporal.Entry, path, action string) error {
	c, err := a.dialTemporal(ctx, e.Config)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.ControlCall(ctx, e.RunID, path, action); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	a.callDone(action, e.RunID, path)
	return nil
}

// temporalCheckpoints lists the checkpoints the project's runs on
// Temporal wait on, with the run each belongs to.
func (a *app) temporalCheckpoints(ctx context.Context) ([]web.Checkpoint, map[string]temporal.Entry, error) {
	entries, err := a.temporalEntries()
	if err != nil {
		return nil, nil, err
	}
	var cps []web.Checkpoint
	owners := map[string]temporal.Entry{}
	pool := a.newTemporalPool(nil)
	defer pool.close()
	for _, e := range entries {
		if s := e.Summary.Status; s != string(engine.StatusRunning) && s != temporal.StatusWaiting {
			continue
		}
		c, err := pool.get(ctx, e.Config)
		if err != nil {
			continue
		}
		st, err := queryState(ctx, c, e.RunID)
		if err != nil {
			continue
		}
		for _, cp := range pendingOf(st) {
			cps = append(cps, cp)
			owners[cp.ID] = e
		}
	}
	return cps, owners, nil
}

// respondTemporal answers a checkpoint of a run on Temporal.
func (a *app) respondTemporal(ctx context.Context, e temporal.Entry, cp web.Checkpoint, value json.RawMessage) error {
	c, err := a.dialTemporal(ctx, e.Config)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Respond(ctx, e.RunID, cp.Path, value); err != nil {
		if errors.Is(err, temporal.ErrAnswerRefused) {
			return &exitError{code: exitFailed, kind: codeBadAnswer, err: err}
		}
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}

// deleteTemporal forgets a run on Temporal that has ended. Its histories
// stay on the server until the namespace's retention removes them.
func (a *app) deleteTemporal(ctx context.Context, e temporal.Entry) error {
	c, err := a.dialTemporal(ctx, e.Config)
	if err != nil {
		return err
	}
	defer c.Close()
	if st, err := c.State(ctx, e.RunID); err == nil && st.Status == engine.StatusRunning {
		return &exitError{code: exitFailed, err: fmt.Errorf("%s is running on Temporal; stop it before deleting it", e.RunID)}
	}
	ix, err := a.temporalIndex()
	if err != nil {
		return err
	}
	if err := ix.Delete(e.RunID); err != nil {
		return err
	}
	a.done("deleted", e.RunID)
	return nil
}

// adoptTemporal finds a run the project's index does not know on the
// Temporal the backend settings name (a run started from another machine,
// say), and records it, so that every command handles it from then on. It
// reports false when Temporal does not know it either. resolveRun asks
// only for an id mayAdopt lets through.
func (a *app) adoptTemporal(cmd *cobra.Command, bf *backendFlags, id string) (temporal.Entry, bool, error) {
	c, err := a.dialTemporal(cmd.Context(), bf.temporal)
	if err != nil {
		return temporal.Entry{}, false, err
	}
	defer c.Close()
	e, err := c.Refresh(cmd.Context(), temporal.Entry{RunID: id, Config: c.Config()})
	if errors.Is(err, engine.ErrNotFound) {
		return temporal.Entry{}, false, nil
	}
	if err != nil {
		return temporal.Entry{}, false, &exitError{code: exitFailed, err: err}
	}
	ix, err := a.temporalIndex()
	if err != nil {
		return temporal.Entry{}, false, err
	}
	return e, true, ix.Put(e)
}
