package engine

import (
	"errors"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
)

// Errors a caller can test with errors.Is. Those of calls are the call
// policy's (engine/callpolicy), whichever backend ran the call.
var (
	ErrPaused              = callpolicy.ErrPaused
	ErrStopped             = callpolicy.ErrStopped
	ErrAgentLimit          = callpolicy.ErrAgentLimit
	ErrItemLimit           = callpolicy.ErrItemLimit
	ErrBudgetExhausted     = callpolicy.ErrBudgetExhausted
	ErrSchemaInvalid       = callpolicy.ErrSchemaInvalid
	ErrCheckpointAbort     = callpolicy.ErrCheckpointAbort
	ErrNesting             = callpolicy.ErrNesting
	ErrRateLimited         = callpolicy.ErrRateLimited
	ErrRequiredFailed      = callpolicy.ErrRequiredFailed
	ErrExecutorUnavailable = callpolicy.ErrExecutorUnavailable
	ErrInfrastructure      = callpolicy.ErrInfrastructure
	ErrCostCap             = callpolicy.ErrCostCap
	ErrCallStopped         = callpolicy.ErrCallStopped
	// ErrCostNotConfirmed is a run whose forecast passed --confirm-above
	// and that nobody agreed to start.
	ErrCostNotConfirmed = errors.New("the run's forecast cost was not confirmed")

	ErrNotFound     = errors.New("no such run")
	ErrNotResumable = errors.New("run cannot be resumed")
	ErrNotRunning   = errors.New("run is not running in this process")
	// ErrCallNotRunning is a stop or restart of a call that is not
	// running.
	ErrCallNotRunning = errors.New("call is not running")
	ErrRunning        = errors.New("run is running")
)

// The codes scripts see as error.code, and runs record with their error:
// see callpolicy.
const (
	CodeAgentLimit          = callpolicy.CodeAgentLimit
	CodeBudget              = callpolicy.CodeBudget
	CodeSchema              = callpolicy.CodeSchema
	CodeUsageLimit          = callpolicy.CodeUsageLimit
	CodeAborted             = callpolicy.CodeAborted
	CodeScriptInvalid       = callpolicy.CodeScriptInvalid
	CodeAgentFailed         = callpolicy.CodeAgentFailed
	CodeAgentTimeout        = callpolicy.CodeAgentTimeout
	CodeExecutorUnavailable = callpolicy.CodeExecutorUnavailable
	CodeItemLimit           = callpolicy.CodeItemLimit
	CodeInfrastructure      = callpolicy.CodeInfrastructure
	CodeCostCap             = callpolicy.CodeCostCap
	CodeCallStopped         = callpolicy.CodeCallStopped
	CodeCostNotConfirmed    = "COST_NOT_CONFIRMED"
)

// Error is an engine error a script can see, with a stable code.
type Error = callpolicy.Error

func newError(code string, sentinel error, msg string) *Error {
	return &Error{Code: code, Message: msg, Err: sentinel}
}
