package callpolicy

import (
	"errors"
	"fmt"
)

// ErrScriptEnded is what a call gets that had not started when its
// script ended (it returned, or threw): it never runs, and nothing was
// paid for it.
var ErrScriptEnded = errors.New("the script ended before the call started")

// FinishesCallsUnderWay reports whether an execution whose script has
// returned lets the agent calls already under way (those that hold a
// concurrency slot) finish, and records their answers, before it ends
// (true), or interrupts them (false). cause is what ended the execution
// before its script returned, nil when nothing did: the script completed,
// or threw (a non-recoverable error that ended a fan-out, say).
//
// A call under way is paid for, and its answer is what a resume would
// replay: cancelling it when the script throws would throw the tokens
// away and pay for them again on resume (the Node runtime aborts such
// calls; we do not, as finished work is never lost). The calls still
// waiting for a slot do not start; they end with ErrScriptEnded. A pause
// or a stop (any cause) interrupts the calls under way, which run again
// on resume, as it always has.
func FinishesCallsUnderWay(cause error) bool { return cause == nil }

// FinishingCallsLine is the line a run logs when its script has returned
// with n calls still under way, so that a user sees why a run whose
// script failed has not ended yet.
func FinishingCallsLine(n int) string {
	calls := "calls"
	if n == 1 {
		calls = "call"
	}
	return fmt.Sprintf("the script has ended; waiting for %d agent %s under way to finish, so that what they cost is not thrown away", n, calls)
}
