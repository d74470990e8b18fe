package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynworkflow/dynworkflow/lang"
)

// The errors a script sees when a run meets one of its limits or a call
// fails in a way the script must hear of. Every backend (this engine,
// engine/temporal) makes them here, so that a script reads the same code
// and message wherever it runs.

// AgentLimitError is agent() over the run's cap.
func AgentLimitError(limit int) *Error {
	return newError(CodeAgentLimit, ErrAgentLimit,
		fmt.Sprintf("agent(): the run reached its cap of %d agents (nested workflows included); raise --max-agents to allow more", limit))
}

// BadSchemaError is agent() with a schema that does not compile.
func BadSchemaError(err error) *Error {
	return newError(CodeScriptInvalid, ErrSchemaInvalid, err.Error())
}

// ItemLimitError is a parallel() or pipeline() (fn) of n items over the cap.
func ItemLimitError(fn string, n, limit int) *Error {
	return newError(CodeItemLimit, ErrItemLimit,
		fmt.Sprintf("%s: %d items exceed the cap of %d per call; split the work into batches or raise --max-items", fn, n, limit))
}

// BudgetError is agent() once the token budget is spent.
func BudgetError(spent, budget int64) *Error {
	return newError(CodeBudget, ErrBudgetExhausted,
		fmt.Sprintf("agent(): the token budget is spent (%d of %d tokens); resume with a larger --token-budget to go on", spent, budget))
}

// SchemaError is a call whose answers never satisfied its schema.
func SchemaError(attempts int, verr error) *Error {
	return newError(CodeSchema, ErrSchemaInvalid,
		fmt.Sprintf("agent(): the answer did not satisfy the schema after %d attempts: %v", attempts, verr))
}

// RateLimitError is a call the provider refused for its usage limit.
func RateLimitError(msg string) *Error { return newError(CodeUsageLimit, ErrRateLimited, msg) }

// RequiredError is a required call that ended without an answer; timedOut
// says its last attempt ran out of time.
func RequiredError(err error, timedOut bool) *Error {
	code := CodeAgentFailed
	if timedOut || errors.Is(err, context.DeadlineExceeded) {
		code = CodeAgentTimeout
	}
	return newError(code, ErrRequiredFailed, fmt.Sprintf("agent(): a required call ended without an answer: %v", err))
}

// NestingError is workflow() called from a child workflow.
func NestingError(ref string) *Error {
	return newError(CodeScriptInvalid, ErrNesting,
		fmt.Sprintf("workflow(%q): a workflow started by workflow() cannot start another; move the call to the parent", ref))
}

// CheckpointAbortError is a checkpoint nobody answered (why) whose
// headless policy is to abort. where says how a human could answer it,
// such as "under `dynworkflow serve`".
func CheckpointAbortError(req lang.CheckpointRequest, why, where string) *Error {
	if req.Default != nil {
		// As in the Node runtime, headless: 'abort' wins over a default:
		// the default is for a human who gets the question, not a reason
		// to go on without one.
		return newError(CodeAborted, ErrCheckpointAbort,
			fmt.Sprintf("checkpoint(%q) needs an answer, %s, and it declares headless: 'abort', so the run stops here; answer it %s, or declare headless: 'default' to go on with its default", req.Prompt, why, where))
	}
	return newError(CodeAborted, ErrCheckpointAbort,
		fmt.Sprintf("checkpoint(%q) needs an answer, %s, and it declares no default; give it a default, or run it %s to answer it", req.Prompt, why, where))
}
