package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
)

// DefaultGrace is how long a child may take to exit after SIGTERM before
// its group gets SIGKILL.
const DefaultGrace = 2 * time.Second

// Spec is one child to run.
type Spec struct {
	// Path is the program; Args are its arguments (without argv[0]).
	Path string
	Args []string
	Dir  string
	// Env is the child's whole environment; nil inherits ours.
	Env []string
	// ExtraEnv is added to Env (or to ours, when Env is nil) for this
	// child alone: a trace context, say.
	ExtraEnv []string
	// Stdin is written to the child's standard input, which is then
	// closed. Nil gives /dev/null: agent CLIs wait forever on an open pipe.
	Stdin []byte
	// Grace is the wait between SIGTERM and SIGKILL; zero means DefaultGrace.
	Grace time.Duration
	// Name labels the child in the registry and in logs.
	Name string
	// Registry records the child while it runs; nil records nothing.
	Registry *Registry
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// Exit is how a child ended.
type Exit struct {
	// Code is the exit status, or -1 when a signal ended the child.
	Code   int
	Signal syscall.Signal
	// Stopped is true when ctx ended the child (we signalled its group).
	Stopped bool
	// Stderr is the last bytes the child wrote to its standard error.
	Stderr string
	// Elapsed is the child's wall time from start to exit.
	Elapsed time.Duration
}

// Success reports a zero exit status.
func (e Exit) Success() bool { return e.Code == 0 }

// String says how the child ended, to follow its name: "exited with
// status 3", "was killed by SIGKILL".
func (e Exit) String() string {
	if e.Signal != 0 {
		return "was killed by " + signalName(e.Signal)
	}
	return fmt.Sprintf("exited with status %d", e.Code)
}

// stderrTail is how much of a child's standard error Exit keeps.
const stderrTail = 16 << 10

// Run starts the child, calls onLine with each line of its standard
// output as it arrives (without the newline; the slice is reused after
// onLine returns), and waits for it to exit. When ctx ends first, the
// child's group gets SIGTERM, then SIGKILL after the grace period; Run
// still waits for the exit and reports Stopped.
//
// The error is non-nil when the child could not be started, or when it
// was killed because this runtime is going down. A failure that is ours
// and not the child's (descriptors, memory or processes ran out, our
// ancestor died) is an *executors.Error of class Infrastructure; a program
// that cannot be run (missing, not executable) matches fs.ErrNotExist or
// fs.ErrPermission.
func Run(ctx context.Context, spec Spec, onLine func(line []byte)) (Exit, error) {
	grace := spec.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	log := spec.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lines := &lineWriter{onLine: onLine}
	tail := &tailBuffer{max: stderrTail}

	if err := ctx.Err(); err != nil {
		return Exit{Code: -1, Stopped: true}, nil
	}
	started := time.Now()
	cmd, err := command(spec, lines, tail, grace)
	if err == nil {
		err = startCmd(cmd)
		closeStdin(cmd)
	}
	if err != nil {
		return Exit{}, startError(spec.Path, err)
	}
	pid := cmd.Process.Pid
	entry, regErr := spec.Registry.add(pid, spec.Name)
	if regErr != nil {
		log.Warn("cannot record the child in the registry", "pid", pid, "err", regErr)
	}

	// The group is stopped from a callback of ctx rather than a goroutine
	// per child waiting on it: a run keeps as many children going as its
	// concurrency, and each goroutine is a stack.
	done := make(chan struct{})
	var stopped bool
	var stopMu sync.Mutex
	unwatch := context.AfterFunc(ctx, func() {
		select {
		case <-done:
			return // exited on its own as ctx ended
		default:
		}
		stopMu.Lock()
		stopped = true
		stopMu.Unlock()
		log.Debug("stopping child group", "pid", pid, "cause", context.Cause(ctx))
		signalGroup(pid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			log.Debug("child group outlived its grace period", "pid", pid)
			signalGroup(pid, syscall.SIGKILL)
		}
	})
	waitErr := cmd.Wait()
	close(done)
	unwatch()
	// The CLI is gone; whatever it left behind in its group goes too.
	signalGroup(pid, syscall.SIGKILL)
	lines.flush()
	spec.Registry.remove(entry)
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		log.Debug("wait for child", "pid", pid, "err", waitErr)
	}

	stopMu.Lock()
	ex := Exit{Code: -1, Stopped: stopped, Stderr: tail.String(), Elapsed: time.Since(started)}
	stopMu.Unlock()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Exited():
			ex.Code = ws.ExitStatus()
		case ws.Signaled():
			ex.Signal = ws.Signal()
		}
	}
	if err := downErr(); err != nil && !ex.Success() {
		// We killed it, going down: not the agent's failure.
		return ex, &executors.Error{Class: executors.Infrastructure, Message: spec.Path + " " + ex.String(), Err: err}
	}
	return ex, nil
}

// command makes the child's command, not started yet.
func command(spec Spec, stdout, stderr io.Writer, grace time.Duration) (*exec.Cmd, error) {
	// Not exec.Command: the caller resolved the path, and a second look
	// up costs a stat per agent.
	cmd := &exec.Cmd{Path: spec.Path, Args: append([]string{spec.Path}, spec.Args...), Dir: spec.Dir, Env: spec.Env,
		Stdout: stdout, Stderr: stderr, SysProcAttr: sysProcAttr(), WaitDelay: grace}
	if len(spec.ExtraEnv) > 0 {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], spec.ExtraEnv...)
	}
	if spec.Stdin != nil {
		in, err := stdinPipe(spec.Stdin)
		if err != nil {
			return nil, err
		}
		if in != nil {
			cmd.Stdin = in
		} else {
			cmd.Stdin = bytes.NewReader(spec.Stdin)
		}
	}
	return cmd, nil
}

// closeStdin closes our copy of a child's input pipe, which the child
// has its own of once started.
func closeStdin(cmd *exec.Cmd) {
	if f, ok := cmd.Stdin.(*os.File); ok {
		f.Close()
	}
}

// startError is the error of a child that could not be started.
func startError(path string, err error) error {
	var ee *executors.Error
	switch {
	case errors.As(err, &ee):
		return err
	case errors.As(err, new(errAncestorDied)):
		return &executors.Error{Class: executors.Infrastructure, Message: "cannot start " + path, Err: err}
	case transient(err):
		return infrastructure("cannot start "+path, err, "")
	}
	return fmt.Errorf("start %s: %w", path, err)
}
