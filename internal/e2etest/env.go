package e2etest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Env is one test's project: a project directory (--cwd and the working
// directory of every process) and a state directory (--state-dir).
type Env struct {
	T       *testing.T
	Dir     string // the project directory
	State   string // the state root
	Workdir string // the processes' working directory; dir when empty
	// config is the processes' XDG_CONFIG_HOME, so that no user file of
	// the machine's user (dynworkflow/executors.json) leaks into a test.
	Config string
	// Bin is the binary the processes run; Binary() when empty.
	Bin string
	// environ is added to the processes' environment, after the rest.
	Environ []string
	// group starts the processes in a process group of their own, which
	// a test may kill whole.
	Group bool
}

// NewEnv is a new project and state directory of t's own.
func NewEnv(t *testing.T) *Env {
	t.Helper()
	return &Env{T: t, Dir: t.TempDir(), State: t.TempDir(), Config: t.TempDir()}
}

// Write writes a file of the project and returns its path.
func (e *Env) Write(name, content string) string {
	e.T.Helper()
	p := filepath.Join(e.Dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.T.Fatal(err)
	}
	return p
}

// WriteAllowed writes a project file that names programs or a server
// (.dynworkflow/executors.json, .dynworkflow/backend.json) and allows it
// with dynworkflow allow, as its user would.
func (e *Env) WriteAllowed(name, content string) string {
	e.T.Helper()
	p := e.Write(name, content)
	e.DWOK("allow", p)
	return p
}

// Command builds an invocation of the binary; the state and project flags
// go last, so that they do not change how a test's arguments parse.
func (e *Env) Command(ctx context.Context, args ...string) *exec.Cmd {
	full := append(append([]string{}, args...), "--state-dir", e.State, "--cwd", e.Dir)
	bin := Binary()
	if e.Bin != "" {
		bin = e.Bin
	}
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Dir = e.Dir
	if e.Workdir != "" {
		cmd.Dir = e.Workdir
	}
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DYNWORKFLOW_") && !strings.HasPrefix(kv, "DYNAMIC_WORKFLOWS_HOME=") && !strings.HasPrefix(kv, "GORACE=") &&
			!strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			environ = append(environ, kv)
		}
	}
	// A race-enabled binary sleeps a second at exit unless told not to.
	cmd.Env = append(environ, "DYNAMIC_WORKFLOWS_HOME="+e.State, "GORACE=atexit_sleep_ms=0", "XDG_CONFIG_HOME="+e.Config)
	cmd.Env = append(cmd.Env, e.Environ...)
	cmd.WaitDelay = 5 * time.Second
	if e.Group {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	return cmd
}

// Result is how one invocation ended.
type Result struct {
	Args   []string
	Code   int // -1 when killed by a signal
	Signal syscall.Signal
	Stdout string
	Stderr string
}

func (r Result) String() string {
	how := fmt.Sprintf("exit code %d", r.Code)
	if r.Signal != 0 {
		how = "killed by " + r.Signal.String()
	}
	return fmt.Sprintf("dynworkflow %s: %s\n--- stdout:\n%s\n--- stderr:\n%s", strings.Join(r.Args, " "), how, r.Stdout, r.Stderr)
}

// ResultOf is how cmd, run with args, ended: err is what running it
// returned, and an error that is not an exit status is returned as is.
func ResultOf(args []string, cmd *exec.Cmd, err error, stdout, stderr string) (Result, error) {
	r := Result{Args: args, Stdout: stdout, Stderr: stderr}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		return r, err
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.Signal = ws.Signal()
	}
	return r, nil
}

// CheckRace fails the test when the race-enabled binary reported a race.
func (e *Env) CheckRace(r Result) {
	e.T.Helper()
	if strings.Contains(r.Stderr, "WARNING: DATA RACE") {
		e.T.Errorf("the binary reported a data race:\n%s", r)
	}
}

// DW runs the binary to completion.
func (e *Env) DW(args ...string) Result {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), CmdTimeout)
	defer cancel()
	cmd := e.Command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r, err := ResultOf(args, cmd, err, stdout.String(), stderr.String())
	if err != nil {
		e.T.Fatalf("dynworkflow %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		e.T.Fatalf("dynworkflow %s did not finish within %v:\n%s", strings.Join(args, " "), CmdTimeout, r)
	}
	e.CheckRace(r)
	return r
}

// DWOK runs the binary and fails the test unless it exits 0.
func (e *Env) DWOK(args ...string) Result {
	e.T.Helper()
	r := e.DW(args...)
	if r.Code != 0 {
		e.T.Fatalf("want exit code 0:\n%s", r)
	}
	return r
}

// ExpectCode fails the test unless r exited with code.
func ExpectCode(t *testing.T, r Result, code int) {
	t.Helper()
	if r.Code != code || r.Signal != 0 {
		t.Fatalf("want exit code %d:\n%s", code, r)
	}
}

// WatchBuffer collects a process's output and wakes up whoever waits for
// some text to appear in it.
type WatchBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

// NewWatchBuffer is an empty WatchBuffer.
func NewWatchBuffer() *WatchBuffer { return &WatchBuffer{changed: make(chan struct{})} }

func (w *WatchBuffer) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(b)
	close(w.changed)
	w.changed = make(chan struct{})
	return n, err
}

// Bytes returns a copy of what was written so far.
func (w *WatchBuffer) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// Changes returns a copy of what was written so far, and a channel that
// is closed at the next write.
func (w *WatchBuffer) Changes() ([]byte, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes()), w.changed
}

func (w *WatchBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// Proc is a dynworkflow process running in the background.
type Proc struct {
	Env            *Env
	Args           []string
	Cmd            *exec.Cmd
	Stdout, Stderr *WatchBuffer
	Exited         chan struct{}
	Res            Result // set when exited is closed
}

// Start starts the binary in the background. The test's cleanup kills it
// if it is still running.
func (e *Env) Start(args ...string) *Proc {
	e.T.Helper()
	return e.StartFor(CmdTimeout, args...)
}

// StartFor is start with its own time limit.
func (e *Env) StartFor(limit time.Duration, args ...string) *Proc {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	p := &Proc{Env: e, Args: args, Cmd: e.Command(ctx, args...), Stdout: NewWatchBuffer(), Stderr: NewWatchBuffer(), Exited: make(chan struct{})}
	p.Cmd.Stdout, p.Cmd.Stderr = p.Stdout, p.Stderr
	if err := p.Cmd.Start(); err != nil {
		cancel()
		e.T.Fatalf("start dynworkflow %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		defer cancel()
		err := p.Cmd.Wait()
		r, rerr := ResultOf(args, p.Cmd, err, p.Stdout.String(), p.Stderr.String())
		if rerr != nil {
			r.Code, r.Stderr = -1, r.Stderr+"\n(wait: "+rerr.Error()+")"
		}
		p.Res = r
		close(p.Exited)
	}()
	e.T.Cleanup(func() {
		select {
		case <-p.Exited:
		default:
			_ = p.Cmd.Process.Kill()
			<-p.Exited
		}
	})
	return p
}

// Alive reports whether the process has not exited yet.
func (p *Proc) Alive() bool {
	select {
	case <-p.Exited:
		return false
	default:
		return true
	}
}

// Wait waits for the process to exit and returns how it ended.
func (p *Proc) Wait() Result {
	p.Env.T.Helper()
	return p.WaitFor(CmdTimeout)
}

// WaitFor is wait for a process started with a time limit of its own.
func (p *Proc) WaitFor(limit time.Duration) Result {
	p.Env.T.Helper()
	select {
	case <-p.Exited:
	case <-time.After(limit + 10*time.Second):
		p.Env.T.Fatalf("dynworkflow %s did not exit", strings.Join(p.Args, " "))
	}
	p.Env.CheckRace(p.Res)
	return p.Res
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) {
	p.Env.T.Helper()
	if err := p.Cmd.Process.Signal(sig); err != nil {
		p.Env.T.Fatalf("send %v to dynworkflow %s: %v", sig, strings.Join(p.Args, " "), err)
	}
}

// WaitStderr waits until the process's stderr contains s, and reports
// whether it did before the process exited.
func (p *Proc) WaitStderr(s string) bool {
	p.Env.T.Helper()
	deadline := time.NewTimer(WaitTimeout)
	defer deadline.Stop()
	for {
		text, changed := p.Stderr.Changes()
		if bytes.Contains(text, []byte(s)) {
			return true
		}
		select {
		case <-changed:
		case <-p.Exited:
			return strings.Contains(p.Stderr.String(), s)
		case <-deadline.C:
			p.Env.T.Fatalf("no %q on the stderr of dynworkflow %s within %v; stderr so far:\n%s", s, strings.Join(p.Args, " "), WaitTimeout, p.Stderr.String())
		}
	}
}

// WaitUntil polls cond every tick until it holds; what names the
// condition in the failure message.
func WaitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", WaitTimeout, what)
		}
		time.Sleep(Tick)
	}
}
