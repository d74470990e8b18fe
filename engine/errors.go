package engine

import "errors"

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
	ErrNotFound        = errors.New("no such run")
	ErrNotResumable    = errors.New("run cannot be resumed")
	ErrNotRunning      = errors.New("run is not running in this process")
	ErrRunning         = errors.New("run is running")
	ErrRateLimited     = errors.New("rate limited")
	ErrRequiredFailed  = errors.New("a required agent call failed")
	// ErrExecutorUnavailable is a call stopped because its executor
	// cannot serve any call (missing binary, no login, unknown model).
	ErrExecutorUnavailable = errors.New("executor unavailable")
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

func newError(code string, sentinel error, msg string) *Error {
	return &Error{Code: code, Message: msg, Err: sentinel}
}

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
// items and isolation that cannot be had are limits of the run alike. A
// null in their place would hide them. What a script throws itself (a
// ReferenceError, fail()) is not an Error of ours, and an agent that fails
// for good gives null without one, as there.
func (e *Error) Recoverable() bool {
	switch e.Code {
	case CodeAgentLimit, CodeBudget, CodeItemLimit, CodeUsageLimit, CodeExecutorUnavailable, CodeIsolationUnavailable,
		CodeSchema, CodeScriptInvalid, CodeAborted:
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
