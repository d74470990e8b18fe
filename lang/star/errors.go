package star

import (
	"errors"
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/dynworkflow/dynworkflow/lang"
)

// An error that ends main or a branch reaches the engine as a *lang.Error
// at the innermost line of the script that was running, with Starlark's
// backtrace. When it began as an engine error (budget exhausted, a stopped
// run), it still wraps that error, for errors.Is.

// builtinFile is the file name Starlark gives the frames of builtins.
const builtinFile = "<builtin>"

// scriptError turns an error of Starlark code into a *lang.Error.
func (r *run) scriptError(err error) *lang.Error {
	var le *lang.Error
	var ee *starlark.EvalError
	var lf loadFailure
	var bf branchFailure
	switch {
	case errors.As(err, &lf):
		return lf.err
	case errors.As(err, &bf):
		return bf.err
	case errors.As(err, &ee):
		e := &lang.Error{File: r.script.path, Message: ee.Msg, Backtrace: ee.Backtrace(), Err: errors.Unwrap(ee)}
		locate(e, ee.CallStack)
		e.Hint = hintFor(ee.Msg, r.script.maxSteps)
		return e
	case errors.As(err, &le):
		return le
	}
	return &lang.Error{File: r.script.path, Message: err.Error(), Err: err}
}

// loadFailure is the error of a load() whose file failed as it ran.
type loadFailure struct{ err *lang.Error }

func (l loadFailure) Error() string { return l.err.Error() }
func (l loadFailure) Unwrap() error { return l.err }

// locate places e at the innermost frame of stack that is in the script.
func locate(e *lang.Error, stack starlark.CallStack) {
	for i := len(stack) - 1; i >= 0; i-- {
		if pos := stack[i].Pos; pos.IsValid() && pos.Filename() != builtinFile {
			e.File, e.Line, e.Column = pos.Filename(), int(pos.Line), int(pos.Col)
			return
		}
	}
}

// branchFailure is the error of a fan-out that a branch ended with a
// non-recoverable error: the branch's own, where it arose in the branch,
// rather than the line of the fan-out that passes it on.
type branchFailure struct{ err *lang.Error }

func (b branchFailure) Error() string { return b.err.Error() }
func (b branchFailure) Unwrap() error { return b.err }

// stepLimitReason is why a thread that ran too long was cancelled.
func stepLimitReason(max uint64) string {
	return fmt.Sprintf("the script ran more than %d steps in one thread", max)
}

// hintFor says what to do about the Starlark errors a workflow author is
// likeliest to meet.
func hintFor(msg string, maxSteps uint64) string {
	switch {
	case strings.Contains(msg, stepLimitReason(maxSteps)):
		return "a loop that never ends? agents do the work; the script only coordinates them"
	case strings.Contains(msg, "called recursively"):
		return "Starlark does not allow recursion; use a loop"
	case strings.Contains(msg, "frozen"):
		return "parallel() and pipeline() freeze what their branches share, and a loaded file is frozen; build a new value in the branch and return it"
	}
	return ""
}
