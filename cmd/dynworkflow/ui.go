package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/web"
	"github.com/dynworkflow/dynworkflow/web/metrics"
)

// runWithUI is `run --ui`: the run goes on here as with run, while this
// process serves the dashboard and the API for it, as the project's live
// runtime (so respond, pause and the rest reach it from other shells too).
// Checkpoints wait for an answer instead of taking their headless default.
// When the run settles the dashboard stays up, to read it or resume it,
// until Ctrl-C; the exit code is then that of the run's latest state.
func (a *app) runWithUI(cmd *cobra.Command, of *optionFlags, ref string, opts engine.Options, watchFiles bool) error {
	sim, err := of.simulate()
	if err != nil {
		return err
	}
	scriptArgs, err := of.argsJSON(cmd, a.maxNesting)
	if err != nil {
		return err
	}
	checkpoints := web.NewCheckpoints()
	counters := metrics.New()
	rt, err := a.runtimeWith(sim, func(c *engine.Config) {
		c.Responder = checkpoints
		c.EventRing = serveEventRing
		c.ObserveFsync = counters.ObserveFsync
	})
	if err != nil {
		return err
	}
	ui, err := a.startUI(rt, checkpoints, counters)
	if err != nil {
		return err
	}
	defer ui.close(rt)
	r, view, err := a.startHere(cmd.Context(), rt, ref, scriptArgs, opts, checkpoints)
	if err != nil {
		return err
	}
	link := ui.desc.RunURL(r.ID())
	view.note("dashboard: " + link)
	if watchFiles {
		// Watch mode runs until Ctrl-C, which ends the dashboard too.
		return a.watchRun(cmd.Context(), rt, r, view)
	}
	runErr := a.follow(cmd.Context(), rt, r, view)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	fmt.Fprintf(a.stderr, "the dashboard stays up until Ctrl-C: %s\n", link)
	select {
	case <-signals:
	case <-cmd.Context().Done():
	}
	ui.close(rt)
	// The run may have been resumed from the page since.
	if d, err := rt.Inspect(r.ID()); err == nil {
		return exitFor(engine.Status(d.Summary.Status), d.Summary.Stats.ScriptErrors)
	}
	return runErr
}

// uiServer is the server of `run --ui`.
type uiServer struct {
	desc   web.Descriptor
	path   string
	own    *web.Ownership
	srv    *web.Server
	cancel context.CancelFunc
	served chan error
	closed bool
}

// startUI makes this process the project's live runtime and serves rt on
// a free port of 127.0.0.1.
func (a *app) startUI(rt *engine.Runtime, checkpoints *web.Checkpoints, counters *metrics.Metrics) (*uiServer, error) {
	path := rt.Store().RuntimePath()
	if nc := a.nodeOwner(context.Background()); nc != nil {
		return nil, errNodeOwns(nc, "run --ui")
	}
	own, err := web.ClaimOwnership(path)
	if err != nil {
		var owned *web.OwnedError
		if errors.As(err, &owned) {
			return nil, &exitError{code: exitFailed, err: fmt.Errorf("%w; run without --ui to hand the run to it", err)}
		}
		return nil, err
	}
	ln, err := web.ListenLoopback("127.0.0.1", 0)
	if err != nil {
		own.Release()
		return nil, fmt.Errorf("listen on 127.0.0.1: %w", err)
	}
	srv, desc, err := a.publishServer(rt, ln, web.Config{Checkpoints: checkpoints, Metrics: counters})
	if err != nil {
		ln.Close()
		own.Release()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	u := &uiServer{desc: desc, path: path, own: own, srv: srv, cancel: cancel, served: make(chan error, 1)}
	go func() { u.served <- srv.Serve(ctx, ln) }()
	return u, nil
}

// close pauses what still runs (a run resumed from the page), stops
// serving and gives the project up. It may be called twice.
func (u *uiServer) close(rt *engine.Runtime) {
	if u.closed {
		return
	}
	u.closed = true
	u.srv.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = rt.Close(ctx)
	u.cancel()
	<-u.served
	_ = web.RemoveDescriptor(u.path, u.desc.Token)
	u.own.Release()
}
