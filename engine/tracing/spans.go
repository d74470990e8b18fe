package tracing

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
)

// Attribute keys of our own, for what the GenAI conventions do not cover.
const (
	keyRunID       = attribute.Key("dynworkflow.run.id")
	keyRunName     = attribute.Key("dynworkflow.run.name")
	keyEpoch       = attribute.Key("dynworkflow.run.execution")
	keyRule        = attribute.Key("dynworkflow.run.resume_rule")
	keyStatus      = attribute.Key("dynworkflow.run.status")
	keyPauseReason = attribute.Key("dynworkflow.run.pause_reason")
	keyLive        = attribute.Key("dynworkflow.run.calls.live")
	keyReplayed    = attribute.Key("dynworkflow.run.calls.replayed")
	keyFailed      = attribute.Key("dynworkflow.run.calls.failed")
	keyPhase       = attribute.Key("dynworkflow.phase")
	keyPath        = attribute.Key("dynworkflow.call.path")
	keyLabel       = attribute.Key("dynworkflow.call.label")
	keyExecutor    = attribute.Key("dynworkflow.call.executor")
	keyEffort      = attribute.Key("dynworkflow.call.effort")
	keyPolicy      = attribute.Key("dynworkflow.call.permissions")
	keyAttempts    = attribute.Key("dynworkflow.call.attempts")
	keyOutcome     = attribute.Key("dynworkflow.call.outcome")
	keyCallReplay  = attribute.Key("dynworkflow.call.replayed")
	keyQueuedMs    = attribute.Key("dynworkflow.call.queued_ms")
	keyCost        = attribute.Key("dynworkflow.usage.cost_usd")
	keyCachedIn    = attribute.Key("dynworkflow.usage.cached_input_tokens")
	keyAttempt     = attribute.Key("dynworkflow.retry.attempt")
	keyRetryClass  = attribute.Key("dynworkflow.retry.class")
	keyBackoffMs   = attribute.Key("dynworkflow.retry.backoff_ms")
	keySource      = attribute.Key("dynworkflow.checkpoint.source")
	keyLimit       = attribute.Key("dynworkflow.limit")
)

// Call outcomes, as dynworkflow.call.outcome says them.
const (
	outcomeFinished    = "finished"
	outcomeFailed      = "failed"
	outcomeReplayed    = "replayed"
	outcomeInterrupted = "interrupted"
)

// eventTextMax bounds the text of an error or log line put on a span.
const eventTextMax = 512

// builder turns the events of a runtime into spans. It is driven by one
// goroutine, in the bus's order.
type builder struct {
	tracer trace.Tracer
	runs   map[string]*execution
}

func newBuilder(t trace.Tracer) *builder {
	return &builder{tracer: t, runs: map[string]*execution{}}
}

// execution is the open trace of one execution of a run.
type execution struct {
	ctx    context.Context // carries the root span
	root   trace.Span
	trace  string // the engine's hex trace id
	phases map[string]*phase
	calls  map[string]*call // the calls still running, by path
	usage  executors.Usage
}

type phase struct {
	ctx  context.Context
	span trace.Span
	end  time.Time // the end of its latest child so far
}

type call struct {
	ctx   context.Context
	span  trace.Span
	phase *phase
}

// handle applies one event.
func (b *builder) handle(ev engine.Event) {
	if ev.Type == engine.EventRunStarted || ev.Type == engine.EventRunResumed {
		if p, ok := ev.Payload.(engine.StartedPayload); ok && p.Trace != nil {
			b.start(ev, p)
		}
		return
	}
	x := b.runs[ev.RunID]
	if x == nil {
		return // not a traced execution of this process
	}
	switch p := ev.Payload.(type) {
	case engine.CallPayload:
		b.callEvent(x, ev, p)
	case engine.ProgressPayload:
		if c := x.calls[p.Path]; c != nil && p.Progress.History != nil {
			toolEvent(c.span, ev.Timestamp, *p.Progress.History)
		}
	case engine.PhasePayload:
		x.phase(b.tracer, p.Title, ev.Timestamp)
	case engine.CheckpointPayload:
		b.checkpoint(x, ev, p)
	case engine.LimitPayload:
		x.root.AddEvent("limit", trace.WithTimestamp(ev.Timestamp), trace.WithAttributes(
			keyLimit.String(p.Limit), attribute.String("message", cut(p.Message))))
	case engine.LogPayload:
		if p.Level == "warn" || p.Level == "error" {
			x.root.AddEvent("log", trace.WithTimestamp(ev.Timestamp), trace.WithAttributes(
				attribute.String("level", p.Level), attribute.String("message", cut(p.Message))))
		}
	case engine.StatusPayload:
		b.end(ev.RunID, x, ev.Timestamp, p)
	}
}

// start opens the root span of an execution, with the ids the engine
// journaled, linked to the roots of the earlier executions.
func (b *builder) start(ev engine.Event, p engine.StartedPayload) {
	if old := b.runs[ev.RunID]; old != nil {
		// Its end never came (events were lost): close it where it stands.
		b.end(ev.RunID, old, ev.Timestamp, engine.StatusPayload{Status: "unknown"})
	}
	ids := chosen{trace: parseTraceID(p.Trace.TraceID), span: parseSpanID(p.Trace.SpanID)}
	links := make([]trace.Link, 0, len(p.Links))
	for _, l := range p.Links {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: parseTraceID(l.TraceID), SpanID: parseSpanID(l.SpanID),
			TraceFlags: trace.FlagsSampled, Remote: true})
		if sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{
				attribute.String("dynworkflow.link", "earlier execution")}})
		}
	}
	attrs := []attribute.KeyValue{keyRunID.String(ev.RunID), keyRunName.String(p.Name), keyEpoch.Int(p.Epoch)}
	if p.Rule != "" {
		attrs = append(attrs, keyRule.String(p.Rule))
	}
	ctx, root := b.tracer.Start(withIDs(context.Background(), ids), "run "+p.Name,
		trace.WithNewRoot(), trace.WithTimestamp(ev.Timestamp), trace.WithLinks(links...),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	b.runs[ev.RunID] = &execution{ctx: withoutIDs(ctx), root: root, trace: p.Trace.TraceID,
		phases: map[string]*phase{}, calls: map[string]*call{}}
}

// phase is the span of the phase titled title, opened at t on first use;
// the root stands in for calls outside any phase.
func (x *execution) phase(tracer trace.Tracer, title string, t time.Time) *phase {
	if title == "" {
		return nil
	}
	if ph := x.phases[title]; ph != nil {
		return ph
	}
	ctx, span := tracer.Start(x.ctx, "phase "+title, trace.WithTimestamp(t), trace.WithAttributes(keyPhase.String(title)))
	ph := &phase{ctx: ctx, span: span, end: t}
	x.phases[title] = ph
	return ph
}

// parent is the context a span in phase title starts under.
func (x *execution) parent(tracer trace.Tracer, title string, t time.Time) (context.Context, *phase) {
	if ph := x.phase(tracer, title, t); ph != nil {
		return ph.ctx, ph
	}
	return x.ctx, nil
}

func (ph *phase) saw(t time.Time) {
	if ph != nil && t.After(ph.end) {
		ph.end = t
	}
}

func (b *builder) callEvent(x *execution, ev engine.Event, p engine.CallPayload) {
	t := ev.Timestamp
	switch ev.Type {
	case engine.EventCallStarted:
		c := b.openCall(x, p, t)
		c.span.SetAttributes(keyQueuedMs.Int64(p.QueuedMs))
		if p.Permissions != "" {
			c.span.SetAttributes(keyPolicy.String(p.Permissions))
		}
		if p.Effort != "" {
			c.span.SetAttributes(keyEffort.String(p.Effort))
		}
		if p.Model != "" {
			c.span.SetAttributes(semconv.GenAIRequestModel(p.Model))
		}
		x.calls[p.Path] = c
	case engine.EventCallReplayed:
		c := b.openCall(x, p, t)
		c.span.SetAttributes(keyOutcome.String(outcomeReplayed), keyCallReplay.Bool(true))
		c.span.End(trace.WithTimestamp(t))
		c.phase.saw(t)
	case engine.EventCallRetry:
		c := x.calls[p.Path]
		if c == nil {
			return
		}
		_, span := b.tracer.Start(c.ctx, "retry", trace.WithTimestamp(t), trace.WithAttributes(
			keyAttempt.Int(p.Attempt), keyRetryClass.String(p.Class), keyBackoffMs.Int64(p.WaitMs)))
		span.SetStatus(codes.Error, cut(p.Error))
		span.End(trace.WithTimestamp(t.Add(time.Duration(p.WaitMs) * time.Millisecond)))
	case engine.EventCallFinished, engine.EventCallFailed:
		c := x.calls[p.Path]
		if c == nil {
			return
		}
		delete(x.calls, p.Path)
		outcome := outcomeFinished
		if ev.Type == engine.EventCallFailed {
			outcome = outcomeFailed
			c.span.SetStatus(codes.Error, cut(p.Error))
			if p.Class != "" {
				c.span.SetAttributes(semconv.ErrorTypeKey.String(p.Class))
			}
		}
		c.span.SetAttributes(keyOutcome.String(outcome), keyCallReplay.Bool(false))
		if p.Attempt > 0 {
			c.span.SetAttributes(keyAttempts.Int(p.Attempt))
		}
		if p.Model != "" {
			c.span.SetAttributes(semconv.GenAIResponseModel(p.Model))
		}
		if p.Provider != "" {
			c.span.SetAttributes(semconv.GenAIProviderNameKey.String(p.Provider))
		}
		if u := p.Usage; u != nil {
			c.span.SetAttributes(semconv.GenAIUsageInputTokens(int(u.InputTokens)), semconv.GenAIUsageOutputTokens(int(u.OutputTokens)),
				keyCachedIn.Int64(u.CachedInputTokens), keyCost.Float64(u.CostUSD))
			x.usage = x.usage.Add(*u)
		}
		c.span.End(trace.WithTimestamp(t))
		c.phase.saw(t)
	}
}

// openCall starts the span of an agent call, with the id the engine gave
// its process as TRACEPARENT.
func (b *builder) openCall(x *execution, p engine.CallPayload, t time.Time) *call {
	ctx, ph := x.parent(b.tracer, p.Phase, t)
	name := p.Label
	if name == "" {
		name = p.Path
	}
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, keyPath.String(p.Path)}
	if p.Label != "" {
		attrs = append(attrs, semconv.GenAIAgentName(p.Label), keyLabel.String(p.Label))
	}
	if p.Phase != "" {
		attrs = append(attrs, keyPhase.String(p.Phase))
	}
	if p.Executor != "" {
		attrs = append(attrs, keyExecutor.String(p.Executor))
	}
	ctx = withIDs(ctx, chosen{span: parseSpanID(engine.CallSpanID(x.trace, p.Path))})
	ctx, span := b.tracer.Start(ctx, "invoke_agent "+name, trace.WithTimestamp(t),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return &call{ctx: withoutIDs(ctx), span: span, phase: ph}
}

// checkpoint records a question as a span as long as its wait.
func (b *builder) checkpoint(x *execution, ev engine.Event, p engine.CheckpointPayload) {
	end := ev.Timestamp
	start := end.Add(-time.Duration(p.WaitedMs) * time.Millisecond)
	ctx, ph := x.parent(b.tracer, p.Phase, start)
	_, span := b.tracer.Start(ctx, "checkpoint", trace.WithTimestamp(start), trace.WithAttributes(
		keyPath.String(p.Path), keySource.String(p.Source), keyCallReplay.Bool(p.Source == "journal")))
	span.End(trace.WithTimestamp(end))
	ph.saw(end)
}

// end closes an execution: the calls it left running (interrupted by a
// pause or a stop), its phases, then its root with the outcome.
func (b *builder) end(runID string, x *execution, t time.Time, p engine.StatusPayload) {
	delete(b.runs, runID)
	for _, c := range x.calls {
		c.span.SetAttributes(keyOutcome.String(outcomeInterrupted))
		c.span.End(trace.WithTimestamp(t))
		c.phase.saw(t)
	}
	for _, ph := range x.phases {
		ph.span.End(trace.WithTimestamp(ph.end))
	}
	x.root.SetAttributes(keyStatus.String(string(p.Status)), keyLive.Int(p.Live), keyReplayed.Int(p.Replayed),
		keyFailed.Int(p.Failed), semconv.GenAIUsageInputTokens(int(x.usage.InputTokens)),
		semconv.GenAIUsageOutputTokens(int(x.usage.OutputTokens)), keyCost.Float64(x.usage.CostUSD))
	if p.PauseReason != "" {
		x.root.SetAttributes(keyPauseReason.String(cut(p.PauseReason)))
	}
	if p.Status == engine.StatusFailed {
		x.root.SetStatus(codes.Error, cut(p.Error))
	}
	x.root.End(trace.WithTimestamp(t))
}

// closeAll ends every open execution, at shutdown.
func (b *builder) closeAll(t time.Time) {
	for id, x := range b.runs {
		b.end(id, x, t, engine.StatusPayload{Status: "unknown"})
	}
}

// toolEvent adds a tool call or result the agent's CLI reported to the
// span of its call: the tool's name, never its arguments or output.
func toolEvent(span trace.Span, t time.Time, h executors.HistoryItem) {
	switch h.Kind {
	case "tool_call":
		span.AddEvent("gen_ai.tool.call", trace.WithTimestamp(t), trace.WithAttributes(semconv.GenAIToolName(h.Name)))
	case "tool_result":
		span.AddEvent("gen_ai.tool.result", trace.WithTimestamp(t), trace.WithAttributes(
			semconv.GenAIToolName(h.Name), attribute.Bool("error", h.IsError)))
	}
}

// cut bounds a text put on a span.
func cut(s string) string {
	if len(s) <= eventTextMax {
		return s
	}
	n := eventTextMax
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
