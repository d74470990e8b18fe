package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/internal/otelenv"
)

// scopeName is the instrumentation scope of every span.
const scopeName = "github.com/dynworkflow/dynworkflow/engine/tracing"

// eventBuffer is how many events may wait for the exporter's goroutine.
// Building a span takes microseconds, so the buffer only absorbs bursts
// (a 1,000-agent fan-out publishes about 3,000 events at once); an event
// that does not fit is lost to the trace, never to the run.
const eventBuffer = 1 << 14

// Tracer follows a runtime's event bus and exports every traced execution.
type Tracer struct {
	provider *sdktrace.TracerProvider
	builder  *builder
	log      *slog.Logger
	sub      *engine.Subscription
	stop     chan struct{}
	done     chan struct{}
}

// New returns a tracer exporting over OTLP as s (otelenv.Configure) says. version is the
// build's, for the service.version resource attribute.
func New(ctx context.Context, s otelenv.Settings, version string, log *slog.Logger) (*Tracer, error) {
	if !s.Enabled {
		return nil, errors.New("tracing: not enabled")
	}
	exp, err := newExporter(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	// The defaults come first so that OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES override them.
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName("dynworkflow"), semconv.ServiceVersion(version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	return newTracer(exp, res, log), nil
}

// newTracer returns a tracer exporting to exp in batches.
func newTracer(exp sdktrace.SpanExporter, res *resource.Resource, log *slog.Logger) *Tracer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(fixedIDs{}))
	return &Tracer{provider: tp, builder: newBuilder(tp.Tracer(scopeName)), log: log}
}

// Follow starts exporting the executions of bus. Subscribe before the
// runtime starts any run, or its first events are missed.
func (t *Tracer) Follow(bus *engine.Bus) {
	t.sub = bus.Subscribe(eventBuffer, wanted)
	t.stop, t.done = make(chan struct{}), make(chan struct{})
	go t.loop()
}

// wanted leaves out what never becomes part of a span: live output other
// than the agent's tool calls, and info lines of the run's log.
func wanted(ev engine.Event) bool {
	switch p := ev.Payload.(type) {
	case engine.ProgressPayload:
		return p.Progress.History != nil && (p.Progress.History.Kind == "tool_call" || p.Progress.History.Kind == "tool_result")
	case engine.LogPayload:
		return p.Level == "warn" || p.Level == "error"
	}
	return true
}

func (t *Tracer) loop() {
	defer close(t.done)
	warned := false
	for {
		select {
		case ev, ok := <-t.sub.C:
			if !ok {
				return
			}
			t.apply(ev, &warned)
		case <-t.stop:
			// What was published before Shutdown is in the channel.
			for {
				select {
				case ev, ok := <-t.sub.C:
					if !ok {
						return
					}
					t.apply(ev, &warned)
				default:
					return
				}
			}
		}
	}
}

func (t *Tracer) apply(ev engine.Event, warned *bool) {
	if ev.Type == engine.EventSubscriberReset {
		if !*warned {
			t.log.Warn("tracing fell behind the run and lost events; some spans are missing")
			*warned = true
		}
		return
	}
	t.builder.handle(ev)
}

// Shutdown turns the events published so far into spans, ends the
// executions still open, and sends what is left, within ctx.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t.sub != nil {
		close(t.stop)
		<-t.done
		t.sub.Close()
	}
	t.builder.closeAll(time.Now())
	if err := t.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: sending the last spans: %w", err)
	}
	return nil
}
