//go:build temporal

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/tracing"
	"github.com/dynworkflow/dynworkflow/internal/otelenv"
)

// tracingShutdownTimeout bounds how long the end of a command waits for
// the collector to take the last spans.
const tracingShutdownTimeout = 10 * time.Second

// The OpenTelemetry SDK and its OTLP exporters are linked into this
// build only, the companion (see companion.go): package initialization
// Go cannot defer made every command of the default build pay for them
// (tracing_lean.go says how much), so the default build hands a command
// that asks for tracing over to this one, as it does Temporal's.

// tracingState is the tracer of this process, once started.
type tracingState struct{ tracer *tracing.Tracer }

// handOverForTracing: this build traces itself.
func (a *app) handOverForTracing(*cobra.Command) error { return nil }

// setUpTracing turns tracing on in cfg when --trace or the OTEL_*
// variables ask for it, and returns what makes the tracer follow the
// runtime's bus; nil when tracing is off.
func (a *app) setUpTracing(cfg *engine.Config, log *slog.Logger) (func(*engine.Bus), error) {
	t, err := a.startTracer(log)
	if t == nil || err != nil {
		return nil, err
	}
	cfg.Tracing = true
	return t.Follow, nil
}

// startTracer starts this process's tracer, once, when tracing is asked
// for; nil when it is not.
func (a *app) startTracer(log *slog.Logger) (*tracing.Tracer, error) {
	if a.tracing.tracer != nil {
		return a.tracing.tracer, nil
	}
	s, err := otelenv.Configure(a.trace, os.Getenv)
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
	a.tracing.tracer = t
	return t, nil
}

// stopTracing sends the spans still waiting, at the end of the command.
// A collector that is down costs a warning, never the command's outcome.
func (a *app) stopTracing() {
	if a.tracing.tracer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
	defer cancel()
	if err := a.tracing.tracer.Shutdown(ctx); err != nil {
		fmt.Fprintln(a.stderr, "dynworkflow: warning:", err)
	}
	a.tracing.tracer = nil
}
