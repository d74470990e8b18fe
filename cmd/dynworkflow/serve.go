package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/web"
	"github.com/dynworkflow/dynworkflow/web/metrics"
)

// serveEventRing is the event ring of a server: large enough that an SSE
// client reconnecting during a 1,000-agent run still catches up.
const serveEventRing = 1 << 16

func (a *app) serveCommand() *cobra.Command {
	var of optionFlags
	var bf backendFlags
	var host string
	var port int
	var watchFiles bool
	cmd := &cobra.Command{
		Use:   "serve [FILE|NAME]",
		Short: "Own the project's runs in the foreground and serve the HTTP API and dashboard",
		Long: `Start the project's runtime: one live owner per project. It listens on
127.0.0.1 (a random port unless --port), writes runtime.json with its address
and bearer token, and prints the dashboard URL. While it runs, run, pause,
resume, stop and delete from other shells go to it, and checkpoints wait for
an answer (dynworkflow respond, the API, the dashboard). With FILE it starts
that workflow at once.

Ctrl-C pauses every running run (journals stay resumable) and exits. Only
loopback addresses are served; to reach the runtime from another machine,
forward a port: ssh -L 8080:127.0.0.1:PORT this-host.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf("serve takes at most one workflow file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.serve(cmd, &of, &bf, host, port, watchFiles, args)
		},
	}
	cmd.Flags().StringVar(&host, "host", "127.0.0.1", "loopback address to listen on (127.0.0.1, ::1 or localhost)")
	cmd.Flags().IntVar(&port, "port", 0, "port to listen on (0: a free one)")
	cmd.Flags().BoolVar(&watchFiles, "watch", false, "re-run each run started from a file when its files are saved, replaying what did not change")
	of.register(cmd.Flags())
	bf.register(cmd.Flags(), true)
	return cmd
}

func (a *app) serve(cmd *cobra.Command, of *optionFlags, bf *backendFlags, host string, port int, watchFiles bool, args []string) error {
	if !web.IsLoopbackHost(host) {
		return usageErrorf("--host %s is not a loopback address. The runtime runs scripts and holds a bearer token, "+
			"so it serves this machine only; to reach it from elsewhere, forward a port: ssh -L 8080:127.0.0.1:PORT this-host", host)
	}
	if port < 0 || port > 65535 {
		return usageErrorf("--port must be between 0 and 65535, not %d", port)
	}
	sim, err := of.simulate()
	if err != nil {
		return err
	}
	opts, err := a.options(cmd, of)
	if err != nil {
		return err
	}
	scriptArgs, err := of.argsJSON(cmd, a.maxNesting)
	if err != nil {
		return err
	}
	if err := a.resolveBackendFor(cmd, bf, cmd.Flags().Changed("backend")); err != nil {
		return err
	}
	// Signals are caught from the start: a Ctrl-C while starting up still
	// removes the descriptor and releases the project.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
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
	if err := checkExecutor(rt, "--executor", opts.Executor); err != nil {
		return err
	}
	elsewhere, err := a.runsElsewhere(rt, bf)
	if err != nil {
		return err
	}
	descPath := rt.Store().RuntimePath()
	if nc := a.nodeOwner(cmd.Context()); nc != nil {
		return errNodeOwns(nc, "dynworkflow serve")
	}
	own, err := web.ClaimOwnership(descPath)
	if err != nil {
		var owned *web.OwnedError
		if errors.As(err, &owned) {
			return &exitError{code: exitFailed, err: fmt.Errorf("%w; stop it first, or use it: commands from this project go to it", err)}
		}
		return err
	}
	defer own.Release()
	if _, err := rt.Recover(); err != nil {
		return err
	}
	// A bad FILE fails now, before anything listens.
	var first engine.StartRequest
	if len(args) == 1 {
		script, err := a.loadScript(rt, args[0])
		if err != nil {
			return &exitError{code: exitFailed, err: err}
		}
		first = engine.StartRequest{Script: script, Args: scriptArgs, Options: opts}
	}

	ln, err := web.ListenLoopback(host, port)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", net.JoinHostPort(host, strconv.Itoa(port)), err)
	}
	srv, desc, err := a.publishServer(rt, ln, web.Config{Checkpoints: checkpoints, Defaults: opts, Elsewhere: elsewhere,
		StartElsewhere: bf.backend == backendTemporal, Metrics: counters})
	if err != nil {
		ln.Close()
		return err
	}
	defer func() {
		if err := web.RemoveDescriptor(descPath, desc.Token); err != nil {
			fmt.Fprintln(a.stderr, "dynworkflow: remove runtime.json:", err)
		}
	}()

	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	a.logServedRuns(ctx, rt)
	// A run parked for its executor's quota goes on at the reset.
	rt.WakeParked(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	a.announce(desc, descPath)
	if watchFiles {
		a.watchServed(ctx, rt)
	}
	if first.Script != nil {
		if r, err := rt.Start(ctx, first); err != nil {
			fmt.Fprintln(a.stderr, "dynworkflow: start", args[0]+":", err)
		} else {
			fmt.Fprintln(a.stderr, "  on the dashboard:", desc.RunURL(r.ID()))
		}
	}
	a.startupOver()

	select {
	case <-signals:
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(a.stderr, "» shutting down: pausing running runs (their journals stay resumable); Ctrl-C again to quit at once")
	srv.Drain()
	closed := make(chan error, 1)
	go func() {
		closeCtx, stop := context.WithTimeout(context.Background(), 30*time.Second)
		defer stop()
		closed <- rt.Close(closeCtx)
	}()
	select {
	case err := <-closed:
		if err != nil {
			fmt.Fprintln(a.stderr, "dynworkflow: pause runs:", err)
		}
	case <-signals:
		// The journals are safe as they are: a later start finds the runs
		// paused.
		fmt.Fprintln(a.stderr, "» quitting without waiting for runs to settle")
	}
	cancel()
	if err := <-served; err != nil {
		fmt.Fprintln(a.stderr, "dynworkflow: stop serving:", err)
	}
	return nil
}

// announce prints where the runtime is.
func (a *app) announce(d web.Descriptor, path string) {
	if a.json {
		_ = json.NewEncoder(a.stdout).Encode(map[string]any{
			"pid": d.PID, "url": d.URL, "dashboardUrl": d.DashboardURL(), "descriptor": path,
		})
		return
	}
	fmt.Fprintf(a.stdout, "dynworkflow serving %s (pid %d)\ndashboard: %s\n", d.Cwd, d.PID, d.DashboardURL())
}

// newToken returns 32 random bytes, base64url-encoded.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make a token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// publishServer makes the server of rt with cfg (this process's runtime,
// a new token, the project, the logger filled in) on ln, and writes the
// project's runtime.json naming it, so that other commands of the project
// reach it. The caller owns the project and closes ln on an error.
func (a *app) publishServer(rt *engine.Runtime, ln net.Listener, cfg web.Config) (*web.Server, web.Descriptor, error) {
	token, err := newToken()
	if err != nil {
		return nil, web.Descriptor{}, err
	}
	cwd, _ := a.projectDir()
	started := time.Now()
	cfg.Runtime, cfg.Token, cfg.Cwd, cfg.StartedAt, cfg.Version = rt, token, cwd, started, programVersion()
	cfg.PID = proc.Pid()
	cfg.Logger = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := web.New(cfg)
	if err != nil {
		return nil, web.Descriptor{}, err
	}
	addr := ln.Addr().String()
	desc := web.NewDescriptor(rt.Store().RuntimePath(), addr, token, cwd, rt.Store().ProjectID(), proc.Pid(), started)
	if err := web.WriteDescriptor(rt.Store().RuntimePath(), desc); err != nil {
		return nil, web.Descriptor{}, err
	}
	return srv, desc, nil
}
