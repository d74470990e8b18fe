package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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
	c, forked, err := start(spec, lines, tail)
	if err != nil {
		return Exit{}, startError(spec.Path, err)
	}
	pid := c.p.Pid // noted as an agent by its start
	entry, regErr := spec.Registry.add(pid, spec.Name, forked[0], forked[1])
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
	ws, waitErr := c.wait(grace)
	noteAgent(pid, false)
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
	if err := downErr(); err != nil && !ex.Success() {
		// We killed it, going down: not the agent's failure.
		return ex, &executors.Error{Class: executors.Infrastructure, Message: spec.Path + " " + ex.String(), Err: err}
	}
	return ex, nil
}

// child is a started process and our ends of its pipes.
type child struct {
	p *os.Process
	// exited becomes readable when p exits (see exitNotice); nil where
	// the system cannot tell us.
	exited *os.File
	// in is the write end of its input, while we copy a large input to
	// it; nil otherwise.
	in *os.File
	// out and errs are the read ends of its output and error, and copied
	// receives a value as each is read to its end.
	out, errs *os.File
	copied    chan struct{}
}

// start starts spec's child, with its output written to stdout and its
// error to stderr, and returns it with the clock ticks since boot before
// and after its fork. Not os/exec: it looks the path up again, and copies
// and de-duplicates the whole environment, a map of it, for each child.
func start(spec Spec, stdout, stderr io.ReaderFrom) (*child, [2]uint64, error) {
	var forked [2]uint64
	c := &child{copied: make(chan struct{}, 2)}
	var in *os.File
	var err error
	switch {
	case spec.Stdin == nil:
		in, err = devNull()
	default:
		if in, err = stdinPipe(spec.Stdin); err == nil && in == nil {
			// Too large for a pipe: copied while the child runs.
			in, c.in, err = os.Pipe()
		}
	}
	if err != nil {
		return nil, forked, err
	}
	var outW, errW *os.File
	if c.out, outW, err = os.Pipe(); err == nil {
		if c.errs, errW, err = os.Pipe(); err != nil {
			closeAll(c.out, outW)
		}
	}
	if err != nil {
		if spec.Stdin != nil {
			closeAll(in, c.in)
		}
		return nil, forked, err
	}
	argv := make([]string, 0, 1+len(spec.Args))
	argv = append(append(argv, spec.Path), spec.Args...)
	attr := &os.ProcAttr{Dir: spec.Dir, Env: environ(spec), Files: []*os.File{in, outW, errW}, Sys: sysProcAttr()}
	forked[0] = bootTicks()
	c.p, err = startProcess(spec.Path, argv, attr)
	forked[1] = bootTicks()
	// The child has its own copies of its ends now.
	closeAll(outW, errW)
	if spec.Stdin != nil {
		in.Close()
	}
	if err != nil {
		closeAll(c.out, c.errs, c.in)
		return nil, forked, err
	}
	c.exited = exitNotice(c.p.Pid)
	go c.copy(stdout, c.out)
	go c.copy(stderr, c.errs)
	if c.in != nil {
		go func() {
			// A child that does not read its input gets EPIPE here; one
			// that escaped and holds it unread, ErrClosed once wait has
			// given up on it.
			_, _ = c.in.Write(spec.Stdin)
			c.in.Close()
		}()
	}
	return c, forked, nil
}

// copy reads r to its end into w.
func (c *child) copy(w io.ReaderFrom, r *os.File) {
	_, _ = w.ReadFrom(r)
	c.copied <- struct{}{}
}

// wait waits for the child to exit, and then for its output to be read to
// its end, but no longer than grace: a process that escaped the child's
// group could hold the pipes open. It closes our ends of the pipes.
func (c *child) wait(grace time.Duration) (syscall.WaitStatus, error) {
	if c.exited != nil {
		awaitExit(c.exited)
		c.exited.Close()
	}
	st, err := c.p.Wait()
	var ws syscall.WaitStatus
	if st != nil {
		ws, _ = st.Sys().(syscall.WaitStatus)
	}
	var timeout <-chan time.Time
	for range 2 {
		select {
		case <-c.copied:
			continue
		default:
		}
		if timeout == nil {
			t := time.NewTimer(grace)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-c.copied:
		case <-timeout:
			// Wakes the readers, and a writer of a large input, blocked
			// on pipes that an escaped process keeps open.
			closeAll(c.out, c.errs, c.in)
			<-c.copied
		}
	}
	closeAll(c.out, c.errs, c.in)
	return ws, err
}

// closeAll closes the files that are not nil. Closing one twice is
// harmless: os.File says ErrClosed.
func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// devNull is /dev/null, opened once for every child without input.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

// environ is the environment of spec's child: nil for ours as it is.
// Later values of a variable win, as with os/exec: the additions over our
// environment (or Env), and, when the child works in a directory of its
// own with our environment, PWD, as a shell would set it. Only the few
// additions are looked for in the rest, with no map per child.
func environ(spec Spec) []string {
	extra := spec.ExtraEnv
	if spec.Dir != "" && spec.Env == nil {
		dir := spec.Dir
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		extra = append([]string{"PWD=" + dir}, extra...)
	}
	base, env := spec.Env, []string(nil)
	if base == nil {
		if len(extra) == 0 {
			return nil
		}
		// A copy of its own: filtered in place.
		base = os.Environ()
		env = base[:0]
	} else {
		env = make([]string, 0, len(base)+len(extra))
	}
	for i, kv := range base {
		if !setLater(kv, base[i+1:]) && !setLater(kv, extra) {
			env = append(env, kv)
		}
	}
	for i, kv := range extra {
		if !setLater(kv, extra[i+1:]) {
			env = append(env, kv)
		}
	}
	return env
}

// setLater reports whether the variable kv sets is set again in later.
func setLater(kv string, later []string) bool {
	key, _, _ := strings.Cut(kv, "=")
	for _, l := range later {
		if len(l) > len(key) && l[len(key)] == '=' && l[:len(key)] == key {
			return true
		}
	}
	return false
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
