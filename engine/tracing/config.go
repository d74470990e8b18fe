package tracing

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/dynworkflow/dynworkflow/internal/otelenv"
)

// newExporter returns the OTLP exporter of s. It does not connect: the
// first batch does, and a collector that is down costs a warning at the
// end, never the run.
func newExporter(ctx context.Context, s otelenv.Settings) (sdktrace.SpanExporter, error) {
	if s.Protocol == "grpc" {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}
