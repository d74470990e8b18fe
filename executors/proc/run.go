package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os/exec"
	"sync"
	"syscall"
	"time"
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

func (e Exit) String() string {
	if e.Signal != 0 {
		return "killed by " + e.Signal.String()
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// stderrTail is how much of a child's standard error Exit keeps.
const stderrTail = 16 << 10

// Run starts the child, calls onLine with each line of its standard
// output as it arrives (without the newline; the slice is reused after
// onLine returns), and waits for it to exit. When ctx ends first, the
// child's group gets SIGTERM, then SIGKILL after the grace period; Run
// still waits for the exit and reports Stopped. The error is non-nil only
// when the child could not be started.
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
	c, err := start(spec, lines, tail, grace, log)
	if err != nil {
		return Exit{}, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	pid := c.pid()
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
	ws, waitErr := c.wait()
	close(done)
	unwatch()
	// The CLI is gone; whatever it left behind in its group goes too.
	signalGroup(pid, syscall.SIGKILL)
	lines.flush()
	spec.Registry.remove(entry)
	if waitErr != nil {
		log.Debug("wait for child", "pid", pid, "err", waitErr)
	}

	stopMu.Lock()
	ex := Exit{Code: -1, Stopped: stopped, Stderr: tail.String(), Elapsed: time.Since(started)}
	stopMu.Unlock()
	switch {
	case ws.Exited():
		ex.Code = ws.ExitStatus()
	case ws.Signaled():
		ex.Signal = ws.Signal()
	}
	return ex, nil
}

// A child is a started process, whoever forked it.
type child interface {
	pid() int
	// wait waits for the exit, and then for the output to be read to its
	// end, but no longer than the grace period: a grandchild that escaped
	// the group could hold the pipes open.
	wait() (syscall.WaitStatus, error)
}

// start starts the child: through the registry's supervisor when it has
// one that works, else ourselves.
func start(spec Spec, stdout, stderr io.Writer, grace time.Duration, log *slog.Logger) (child, error) {
	if sup := spec.Registry.supervisor(); sup != nil {
		c, err := startSupervised(sup, spec, stdout, stderr, grace)
		if err == nil || errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return c, err
		}
		log.Warn("starting the agent without its supervisor", "err", err)
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	if spec.Stdin != nil {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = grace
	if err := startCmd(cmd); err != nil {
		return nil, err
	}
	return execChild{cmd}, nil
}

// execChild is a child we forked.
type execChild struct{ cmd *exec.Cmd }

func (c execChild) pid() int { return c.cmd.Process.Pid }

func (c execChild) wait() (syscall.WaitStatus, error) {
	err := c.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) || errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	ws, _ := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws, err
}
