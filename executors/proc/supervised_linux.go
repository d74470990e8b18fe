package proc

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// supervisedChild is a child the supervisor forked for us. We hold the
// other ends of its pipes and copy them as exec.Cmd would.
type supervisedChild struct {
	id     int
	state  *supervised
	grace  time.Duration
	copies sync.WaitGroup
	pipes  []*os.File // our read ends, closed once copied or after the grace period
}

// startSupervised starts spec through sup, with the child's output copied
// to stdout and stderr.
func startSupervised(sup *Supervisor, spec Spec, stdout, stderr io.Writer, grace time.Duration) (child, error) {
	path, err := exec.LookPath(spec.Path)
	if err != nil {
		return nil, err
	}
	if spec.Dir != "" {
		if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
			return nil, &os.PathError{Op: "chdir", Path: spec.Dir, Err: syscall.ENOTDIR}
		}
	}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll([]*os.File{outR, outW})
		return nil, err
	}
	var inR, inW *os.File
	if spec.Stdin != nil {
		if inR, inW, err = os.Pipe(); err != nil {
			closeAll([]*os.File{outR, outW, errR, errW})
			return nil, err
		}
	}
	pid, state, err := sup.start(command{Path: path, Args: spec.Args, Dir: spec.Dir, Env: env}, inR, outW, errW)
	// The child has its own copies now, passed through the socket.
	closeAll([]*os.File{outW, errW})
	if inR != nil {
		inR.Close()
	}
	if err != nil {
		closeAll([]*os.File{outR, errR})
		if inW != nil {
			inW.Close()
		}
		return nil, err
	}
	c := &supervisedChild{id: pid, state: state, grace: grace, pipes: []*os.File{outR, errR}}
	c.copies.Add(2)
	go func() { defer c.copies.Done(); _, _ = io.Copy(stdout, outR) }()
	go func() { defer c.copies.Done(); _, _ = io.Copy(stderr, errR) }()
	if inW != nil {
		go func() {
			// A child that does not read its input gets EPIPE here, as with
			// exec.Cmd.
			_, _ = io.Copy(inW, bytes.NewReader(spec.Stdin))
			inW.Close()
		}()
	}
	return c, nil
}

func (c *supervisedChild) pid() int { return c.id }

// errSupervisorDied is the error of a wait whose supervisor died first,
// taking the child with it.
var errSupervisorDied = errors.New("the agent supervisor exited, killing the agent")

func (c *supervisedChild) wait() (syscall.WaitStatus, error) {
	ws, ok := <-c.state.exited
	var err error
	if !ok {
		// Killed by Pdeathsig with the supervisor, if not before.
		signalGroup(c.id, syscall.SIGKILL)
		ws, err = syscall.WaitStatus(syscall.SIGKILL), errSupervisorDied
	}
	drained := make(chan struct{})
	go func() { c.copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(c.grace):
	}
	closeAll(c.pipes)
	<-drained
	return ws, err
}
