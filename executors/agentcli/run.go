package agentcli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/proc"
)

// Parser reads one CLI's output stream.
type Parser interface {
	// Line takes one line of standard output, as it arrives.
	Line(line []byte)
	// Finish turns the whole stream and the exit into a result, or a
	// classified error. It is not called when the call was stopped.
	Finish(exit proc.Exit) (executors.Result, error)
	// Partial is what is known when the call was stopped: the usage and
	// history so far.
	Partial() executors.Result
}

// Call is one run of the CLI.
type Call struct {
	Args []string
	// Stdin is the prompt, sent on standard input, which is then closed.
	Stdin []byte
	Dir   string
	// Extra environment for this call only.
	Env []string
}

// Run runs the CLI for req and parses its output with p. When ctx ends
// first, the child's group is stopped and Run returns the context's error
// with the usage seen so far, so the engine counts what was spent.
func (b *Base) Run(ctx context.Context, req executors.Request, call Call, p Parser) (executors.Result, error) {
	path, err := b.LookPath()
	if err != nil {
		return executors.Result{}, err
	}
	spec := proc.Spec{
		Path: path, Args: append(append([]string(nil), b.Args...), call.Args...), Dir: call.Dir,
		ExtraEnv: append(append(slices.Clip(b.Env), call.Env...), req.Env...), Stdin: call.Stdin, Grace: b.Grace, Registry: b.Registry, Logger: b.Logger,
		Name: b.name + " " + req.RunID + " " + req.Path,
	}
	if spec.Stdin == nil {
		spec.Stdin = []byte{}
	}
	ex, err := proc.Run(ctx, spec, p.Line)
	switch {
	case err == nil:
	case executors.ClassOf(err) == executors.Infrastructure:
		// Ours, not the agent's: the call runs again once it clears.
		return p.Partial(), err
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
		// The binary went away, or is not executable, since LookPath.
		return executors.Result{}, b.Unavailable("", fmt.Sprintf("cannot start %s", path), err)
	default:
		return executors.Result{}, &executors.Error{Class: executors.Terminal, Message: "executor " + b.name, Err: err}
	}
	if ex.Stopped {
		return p.Partial(), context.Cause(ctx)
	}
	res, err := p.Finish(ex)
	if err != nil {
		b.Logger.Debug("agent CLI failed", "executor", b.name, "exit", ex.String(), "stderr", lastLines(ex.Stderr, 5), "err", err)
		err = withResetHint(markUnreachable(b.withFix(err)))
	}
	return res, err
}

// withResetHint gives a rate limit the reset its message tells of, when
// the parser gave none: "retry after 5s", "resets in 2m", ...
func withResetHint(err error) error {
	var ee *executors.Error
	if !errors.As(err, &ee) || ee.Class != executors.RateLimited || ee.RetryAfter > 0 {
		return err
	}
	hint := ResetHint(ee.Error(), time.Now())
	if hint <= 0 {
		return err
	}
	hinted := *ee
	hinted.RetryAfter = hint
	return &hinted
}

// markUnreachable marks a transient failure whose message says the CLI
// never reached its model endpoint (see executors.Error.Unreachable).
func markUnreachable(err error) error {
	var ee *executors.Error
	if !errors.As(err, &ee) || ee.Class != executors.Transient || ee.Unreachable || !IsUnreachable(ee.Error()) {
		return err
	}
	marked := *ee
	marked.Unreachable = true
	return &marked
}

// withFix gives an unavailable executor's error the executor's fix for
// its cause, when the parser that classified it gave none.
func (b *Base) withFix(err error) error {
	var ee *executors.Error
	if !errors.As(err, &ee) || ee.Class != executors.Unavailable || ee.Fix != "" {
		return err
	}
	cause, _ := UnavailableCause(ee.Error())
	fixed := *ee
	fixed.Fix = b.Unavailable(cause, "", nil).Fix
	return &fixed
}

// lastLines is the end of a CLI's standard error, for messages.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ExitError is the error of a CLI that exited without saying why in its
// event stream: its exit status and the end of its standard error,
// classified by what that says. A line anywhere in standard error that
// says the CLI has no credentials or no such model decides: CLIs print
// such a line first and their advice after it.
func ExitError(name string, ex proc.Exit) error {
	for _, line := range strings.Split(ex.Stderr, "\n") {
		if _, ok := UnavailableCause(line); ok {
			return &executors.Error{Class: executors.Unavailable, Message: fmt.Sprintf("%s %s: %s", name, ex, strings.TrimSpace(line))}
		}
	}
	tail := strings.ReplaceAll(lastLines(ex.Stderr, 3), "\n", " | ")
	msg := fmt.Sprintf("%s %s", name, ex)
	if tail != "" {
		msg += ": " + tail
	}
	return &executors.Error{Class: ClassifyMessage(tail), Message: msg}
}
