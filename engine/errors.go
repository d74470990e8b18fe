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
