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
}

// SchemaViolation is an answer that does not satisfy the call's schema:
// the policy asks again, up to the run's schema attempts.
type SchemaViolation struct{ Err error }

func (v *SchemaViolation) Error() string {
	return "the answer does not satisfy the schema: " + v.Err.Error()
}
func (v *SchemaViolation) Unwrap() error { return v.Err }

// RunAttempt runs one attempt of a call on exec, on whichever machine the
// backend runs it: the executor once, bounded by timeout (running out is
// a transient failure), and its answer checked against schema (nil for
// text).
func RunAttempt(ctx context.Context, exec executors.Executor, req executors.Request, timeout time.Duration, schema Schema, observe executors.Observer) AttemptResult {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, timeout)
	}
	res, err := exec.Run(actx, req, observe)
	timedOut := actx.Err() != nil && ctx.Err() == nil
	cancel()
	if err == nil && timedOut {
		err = context.DeadlineExceeded
	}
	if err != nil {
		if timedOut {
			err = &executors.Error{Class: executors.Transient, Message: "agent timed out after " + timeout.String(), Err: context.DeadlineExceeded}
		}
		return AttemptResult{Result: res, Err: err}
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
