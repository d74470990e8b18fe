package engine

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// TraceContext names the W3C trace of one execution of a run and the span
// that stands for the execution in it. With tracing on (Config.Tracing),
// each execution gets a new one, journaled in its run or resume record
// before any agent runs, so that a resume can link its trace to the
// earlier ones and an agent process can join the tree through TRACEPARENT.
// The engine only names spans; engine/tracing builds and exports them.
type TraceContext struct {
	// TraceID is 32 lowercase hex digits, SpanID 16.
	TraceID string `json:"traceId"`
	SpanID  string `json:"spanId"`
}

// newTraceContext returns a fresh random trace and root span.
func newTraceContext() *TraceContext {
	var b [24]byte
	_, _ = rand.Read(b[:])
	if b[0]|b[16] == 0 {
		b[0], b[16] = 1, 1 // all-zero ids are invalid; keep them non-zero
	}
	return &TraceContext{TraceID: hex.EncodeToString(b[:16]), SpanID: hex.EncodeToString(b[16:])}
}

// CallSpanID is the span id of the agent call at path in the trace: a hash
// of both, so that the engine can hand it to the agent's process before
// the span exists anywhere, and the exporter gives the span the same id
// from the events alone.
func CallSpanID(traceID, path string) string {
	h := sha256.Sum256([]byte(traceID + "\x00" + path))
	if h[0]|h[1]|h[2]|h[3]|h[4]|h[5]|h[6]|h[7] == 0 {
		h[7] = 1
	}
	return hex.EncodeToString(h[:8])
}

// TraceParent is the W3C traceparent header of the call at path, sampled.
func (t *TraceContext) TraceParent(path string) string {
	return "00-" + t.TraceID + "-" + CallSpanID(t.TraceID, path) + "-01"
}

// callEnv is the environment an agent process of the call at path gets on
// top of ours: its span as TRACEPARENT when the run is traced, so that a
// CLI that emits OpenTelemetry joins the run's trace. Nothing otherwise.
func (r *Run) callEnv(path string) []string {
	if r.trace == nil {
		return nil
	}
	return []string{"TRACEPARENT=" + r.trace.TraceParent(path)}
}

// ExecutionTraceContext is the trace of execution epoch of a run on a
// backend that journals none (Temporal): derived from the two, so that
// whoever exports it and whoever links to it later agree without storing
// it anywhere.
func ExecutionTraceContext(runID string, epoch int) TraceContext {
	h := sha256.Sum256([]byte("dynworkflow execution\x00" + runID + "\x00" + strconv.Itoa(epoch)))
	if h[0]|h[16] == 0 {
		h[0], h[16] = 1, 1
	}
	return TraceContext{TraceID: hex.EncodeToString(h[:16]), SpanID: hex.EncodeToString(h[16:24])}
}
