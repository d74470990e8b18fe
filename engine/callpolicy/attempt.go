package callpolicy

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
)

// AttemptResult is what one attempt gave.
type AttemptResult struct {
	// Value is the answer: a JSON string for a text call, the validated
	// JSON for a schema call.
	Value json.RawMessage
	// Result is what the executor returned, usage included, whether the
	// attempt answered or not.
	Result executors.Result
	// Err is nil, an executor's failure (see executors.ClassOf), or a
	// *SchemaViolation.
	Err error
	// Took is how long the attempt ran, as the machine that ran it
	// measured it; zero when unknown.
	Took time.Duration
}

// SchemaViolation is an answer that does not satisfy the call's schema:
// the policy asks again, up to the run's schema attempts.
type SchemaViolation struct{ Err error }

func (v *SchemaViolation) Error() string {
	return "the answer does not satisfy the schema: " + v.Err.Error()
}
func (v *SchemaViolation) Unwrap() error { return v.Err }

// RunAttempt runs one attempt of a call on exec, on whichever machine the
// backend runs it: the executor once, within b (running out of time, or
// making no progress for b.Idle, is a transient failure; an endpoint
// unreachable for b.Unreachable makes the executor unavailable), and its
// answer checked against schema (nil for text). observe gets what the
// executor reports, each activity stamped with its time.
func RunAttempt(ctx context.Context, exec executors.Executor, req executors.Request, b Bounds, schema Schema, observe executors.Observer) AttemptResult {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if b.Timeout > 0 {
		var stop context.CancelFunc
		actx, stop = context.WithTimeout(actx, b.Timeout)
		defer stop()
	}
	see := observe
	if b.Idle > 0 || b.Unreachable > 0 {
		w := watch(b, cancel)
		defer w.stop()
		see = func(p executors.Progress) {
			w.observe(p)
			if observe != nil {
				observe(p)
			}
		}
	}
	started := time.Now()
	res, err := exec.Run(actx, req, see)
	took := time.Since(started)
	stall := stalledBy(actx)
	timedOut := stall == nil && actx.Err() != nil && ctx.Err() == nil
	if err == nil && timedOut {
		err = context.DeadlineExceeded
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
		case stall != nil:
			err = stall.failure()
		case timedOut:
			err = &executors.Error{Class: executors.Transient, Message: "agent timed out after " + b.Timeout.String(), Err: context.DeadlineExceeded}
		}
		return AttemptResult{Result: res, Err: err, Took: took}
	}
	if schema == nil {
		return AttemptResult{Value: TextAnswer(res.Text), Result: res}
	}
	answer := res.Text
	if len(res.Structured) > 0 {
		answer = string(res.Structured)
	}
	value, verr := schema.Validate(answer)
	if verr != nil {
		return AttemptResult{Result: res, Err: &SchemaViolation{Err: verr}}
	}
	return AttemptResult{Value: value, Result: res}
}

// TextAnswer is a text answer as the script gets it: a JSON string, the
// same bytes on every backend.
func TextAnswer(text string) json.RawMessage {
	var b bytes.Buffer
	b.Grow(len(text) + 2)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(text) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
