package tracing

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// fixedIDs gives a span the ids the engine chose for it (see withIDs), and
// random ones to the rest.
type fixedIDs struct{}

type idsKey struct{}

// chosen are the ids a span must get: a trace id for a root span, and the
// span's own id.
type chosen struct {
	trace trace.TraceID
	span  trace.SpanID
}

// withIDs makes the next span started with ctx take these ids.
func withIDs(ctx context.Context, ids chosen) context.Context {
	return context.WithValue(ctx, idsKey{}, ids)
}

// withoutIDs is ctx, a span's context started withIDs, for its children:
// they must not take their parent's ids.
func withoutIDs(ctx context.Context) context.Context {
	return context.WithValue(ctx, idsKey{}, chosen{})
}

func (fixedIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if ids, ok := ctx.Value(idsKey{}).(chosen); ok && ids.trace.IsValid() && ids.span.IsValid() {
		return ids.trace, ids.span
	}
	var t trace.TraceID
	for !t.IsValid() {
		binary.NativeEndian.PutUint64(t[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(t[8:], rand.Uint64())
	}
	return t, randomSpanID()
}

func (fixedIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if ids, ok := ctx.Value(idsKey{}).(chosen); ok && ids.span.IsValid() {
		return ids.span
	}
	return randomSpanID()
}

func randomSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		binary.NativeEndian.PutUint64(s[:], rand.Uint64())
	}
	return s
}

// parseTraceID and parseSpanID read the engine's hex ids; a bad one gives
// the zero id, which the SDK replaces with a random one.
func parseTraceID(s string) trace.TraceID {
	var t trace.TraceID
	if b, err := hex.DecodeString(s); err == nil && len(b) == len(t) {
		copy(t[:], b)
	}
	return t
}

func parseSpanID(s string) trace.SpanID {
	var id trace.SpanID
	if b, err := hex.DecodeString(s); err == nil && len(b) == len(id) {
		copy(id[:], b)
	}
	return id
}
