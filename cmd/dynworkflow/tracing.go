package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/tracing"
)

// tracingShutdownTimeout bounds how long the end of a command waits for
// the collector to take the last spans.
const tracingShutdownTimeout = 10 * time.Second

// setUpTracing turns tracing on in cfg when --trace or the OTEL_*
// variables ask for it, and returns the tracer to Follow the runtime's
// bus with; nil when tracing is off.
func (a *app) setUpTracing(cfg *engine.Config, log *slog.Logger) (*tracing.Tracer, error) {
	t, err := a.startTracer(log)
	if t != nil {
		cfg.Tracing = true
	}
	return t, err
}

// startTracer starts this process's tracer, once, when tracing is asked
// for; nil when it is not.
func (a *app) startTracer(log *slog.Logger) (*tracing.Tracer, error) {
	if a.tracer != nil {
		return a.tracer, nil
	}
	s, err := tracing.Configure(a.trace, os.Getenv)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	if !s.Enabled {
		return nil, nil
	}
	t, err := tracing.New(context.Background(), s, readBuildVersion().Version, log)
	if err != nil {
		return nil, err
	}
	a.tracer = t
	return t, nil
}

// stopTracing sends the spans still waiting, at the end of the command.
// A collector that is down costs a warning, never the command's outcome.
func (a *app) stopTracing() {
	if a.tracer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
	defer cancel()
	if err := a.tracer.Shutdown(ctx); err != nil {
		fmt.Fprintln(a.stderr, "dynworkflow: warning:", err)
	}
	a.tracer = nil
}
