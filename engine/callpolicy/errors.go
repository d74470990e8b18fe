package callpolicy

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Errors a caller can test with errors.Is.
var (
	ErrPaused          = errors.New("run paused")
	ErrStopped         = errors.New("run stopped")
	ErrAgentLimit      = errors.New("agent limit reached")
	ErrItemLimit       = errors.New("item limit exceeded")
	ErrBudgetExhausted = errors.New("token budget exhausted")
	ErrSchemaInvalid   = errors.New("answer does not satisfy the schema")
	ErrCheckpointAbort = errors.New("checkpoint aborted the run")
	ErrNesting         = errors.New("workflow() nests only one level")
	ErrRateLimited     = errors.New("rate limited")
	ErrRequiredFailed  = errors.New("a required agent call failed")
	// ErrExecutorUnavailable is a call stopped because its executor
	// cannot serve any call (missing binary, no login, unknown model).
	ErrExecutorUnavailable = errors.New("executor unavailable")
	// ErrInfrastructure is a call stopped because of a fault of ours that
	// did not clear (descriptors, pipes, spawning): the
	// run pauses, and the call runs again on resume.
	ErrInfrastructure = errors.New("infrastructure fault")
	// ErrCostCap is a call the dollar cap (--max-cost) kept from
	// starting: the run pauses once the calls running have ended.
	ErrCostCap = errors.New("dollar cap reached")
	// ErrCallStopped is a call the user stopped: it gives null, or throws
	// when required, as a terminal failure does.
	ErrCallStopped = errors.New("agent call stopped by the user")
	// ErrCallRestarted ends an attempt the user restarted: the call runs
	// again at once, and what the attempt cost stays counted.
	ErrCallRestarted = errors.New("agent call restarted by the user")
	// ErrIsolationUnavailable is a call that asked for a worktree where
	// none can be made (no git, no repository, no commit, or a worker
	// without the project): the run pauses, and the call runs again on
	// resume.
	ErrIsolationUnavailable = errors.New("worktree isolation is unavailable")
)

// The codes scripts see as error.code, and runs record with their error:
// the Node runtime's (its WorkflowErrorCode), so that scripts written for
// it branch the same way here.
const (
	CodeAgentLimit    = "AGENT_LIMIT_EXCEEDED"
	CodeBudget        = "TOKEN_BUDGET_EXHAUSTED"
	CodeSchema        = "SCHEMA_NONCOMPLIANCE"
	CodeUsageLimit    = "PROVIDER_USAGE_LIMIT"
	CodeAborted       = "WORKFLOW_ABORTED"
	CodeScriptInvalid = "SCRIPT_VALIDATION_ERROR"
	CodeAgentFailed   = "AGENT_EXECUTION_ERROR"
	CodeAgentTimeout  = "AGENT_TIMEOUT"
	// CodeExecutorUnavailable is the Node runtime's code for an executor
	// it cannot run (there, a missing Pi SDK).
	CodeExecutorUnavailable = "EXECUTOR_UNAVAILABLE"
	// CodeItemLimit is ours: the Node runtime has no cap on items.
	CodeItemLimit = "ITEM_LIMIT_EXCEEDED"
	// CodeInfrastructure is ours too: a fault of the runtime's own, never
	// the agent's.
	CodeInfrastructure = "INFRASTRUCTURE_FAULT"
	// CodeIsolationUnavailable is ours: a call asked for a worktree that
	// cannot be had (no git, no repository, no commit).
	CodeIsolationUnavailable = "ISOLATION_UNAVAILABLE"
	// CodeCostCap and CodeCallStopped are ours too.
	CodeCostCap     = "COST_CAP_REACHED"
	CodeCallStopped = "AGENT_STOPPED"
)

// Error is an engine error a script can see, with a stable code.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }

// Unwrap lets errors.Is match the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode is the stable code scripts see as error.code.
func (e *Error) ErrorCode() string { return e.Code }

// Recoverable reports whether a parallel() branch or a pipeline() item
// that ends with e becomes null (true), or whether e ends the whole
// fan-out, which throws it on (false; see lang.NonRecoverable). The Node
// runtime decides the same by the recoverable flag of its WorkflowError,
// and each of our errors has its counterpart there, none recoverable: the
// agent cap (agentLimitError), the token budget, a provider's usage limit
// (src/workflow.ts, src/errors.ts), an answer that never satisfied its
// schema (src/agent.ts resolveStructuredOutput), a required call that
// failed (requiredFailure in agent()), a nested workflow() or a bad
// schema (SCRIPT_VALIDATION_ERROR), a checkpoint nobody could answer
// (WORKFLOW_ABORTED), an executor that cannot serve; and our own limit on
// items, isolation that cannot be had and a fault of ours that did not
// clear end the run alike (the last two pause it). A
// null in their place would hide them. What a script throws itself (a
// ReferenceError, fail()) is not an Error of ours, and an agent that fails
// for good gives null without one, as there.
func (e *Error) Recoverable() bool {
	switch e.Code {
	case CodeAgentLimit, CodeBudget, CodeItemLimit, CodeUsageLimit, CodeExecutorUnavailable, CodeIsolationUnavailable,
		CodeInfrastructure, CodeSchema, CodeScriptInvalid, CodeAborted:
		return false
	case CodeAgentFailed, CodeAgentTimeout:
		// Thrown only for a required call, which the Node runtime makes
		// non-recoverable (requiredFailure in its agent()).
		return !errors.Is(e.Err, ErrRequiredFailed)
	}
	return true
}

// CancelsQueued reports whether e, ending a branch of a fan-out, also ends
// the calls of that fan-out still waiting for a concurrency slot, before
// they start. Only the agent cap does, as in the Node runtime, whose
// parallel() and pipeline() cancel their own batch on
// AGENT_LIMIT_EXCEEDED alone: the token budget is checked as each call
// starts anyway, and the other errors say nothing of the calls queued
// beside them.
func (e *Error) CancelsQueued() bool { return e.Code == CodeAgentLimit }

func newError(code string, sentinel error, msg string) *Error {
	return &Error{Code: code, Message: msg, Err: sentinel}
}

// The errors a script sees when a run meets one of its limits or a call
// fails in a way the script must hear of. Every backend (engine,
// engine/temporal) gets them from here, so that a script reads the same
// code and message wherever it runs.

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

// Nest refuses a workflow() call from a frame at depth (0 for the main
// script): a child workflow cannot start another.
func Nest(depth int, ref string) error {
	if depth >= 1 {
		return NestingError(ref)
	}
	return nil
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

// UnavailableError is a call stopped because its executor cannot serve
// any call; reason says which, why and the fix.
func UnavailableError(reason string) *Error {
	return newError(CodeExecutorUnavailable, ErrExecutorUnavailable, reason)
}

// IsolationUnavailableError is a call stopped because no worktree can be
// made for it; reason says why and what to do.
func IsolationUnavailableError(reason string) *Error {
	return newError(CodeIsolationUnavailable, ErrIsolationUnavailable, reason)
}

// InfrastructureError is a call stopped by a fault of ours that outlasted
// its retries; reason says what failed.
func InfrastructureError(reason string) *Error {
	return newError(CodeInfrastructure, ErrInfrastructure, reason)
}

// CostCapError is a call the dollar cap kept from starting; reason says
// what was spent and expected.
func CostCapError(reason string) *Error {
	return newError(CodeCostCap, ErrCostCap, "agent(): "+reason)
}

// CallStoppedError is a call the user stopped.
func CallStoppedError(path string) *Error {
	return newError(CodeCallStopped, ErrCallStopped, fmt.Sprintf("agent(): the call %s was stopped by the user", path))
}

// FailureClass is how a failed call's record names its cause: the
// executor's failure class, or "stopped" for a call the user stopped.
func FailureClass(err error) string {
	if errors.Is(err, ErrCallStopped) {
		return "stopped"
	}
	return executors.ClassOf(err).String()
}
