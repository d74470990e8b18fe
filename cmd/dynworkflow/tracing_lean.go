//go:build !temporal

package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/internal/otelenv"
)

// This build leaves the OpenTelemetry SDK and its OTLP exporters out:
// their package initialization (protobuf and gRPC registrations, which Go
// cannot defer) made every command pay, tracing or not: 8 MB more binary,
// and in `dynworkflow list` 4.5 MB more peak memory and 5-8 ms more CPU
// on a loaded 2-CPU machine. A command that asks for tracing goes to the
// companion, the build with them, as Temporal's commands do.

// tracingState: this build has no tracer.
type tracingState struct{}

// tracedCommands are the commands that run workflows, the only ones
// tracing concerns.
var tracedCommands = map[string]bool{"run": true, "resume": true, "serve": true}

// handOverForTracing hands cmd over to the companion when it runs
// workflows and tracing is asked for. With --trace and no companion it is
// an error saying how to install it; when only the environment asks
// (OTEL_TRACES_EXPORTER=otlp set for other programs too, say), the
// command goes on untraced, with a warning.
func (a *app) handOverForTracing(cmd *cobra.Command) error {
	if !tracedCommands[cmd.Name()] {
		return nil
	}
	s, err := otelenv.Configure(a.trace, os.Getenv)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if !s.Enabled {
		return nil
	}
	self, _ := os.Executable()
	if _, err := companionPath(self); err != nil && !a.trace && a.handedOver == "" {
		fmt.Fprintf(a.stderr, "dynworkflow: warning: OTEL_TRACES_EXPORTER asks for traces, which need the companion %s; running untraced. Install it with: %s\n",
			companionName, installCompanion)
		return nil
	}
	return a.handOver("tracing (--trace, OTEL_TRACES_EXPORTER=otlp) needs the OpenTelemetry exporters")
}

// setUpTracing: never reached with tracing asked for (handOverForTracing
// came first).
func (a *app) setUpTracing(*engine.Config, *slog.Logger) (func(*engine.Bus), error) { return nil, nil }

func (a *app) stopTracing() { a.tracing.stop() }

// stop: nothing to send.
func (tracingState) stop() {}
