// Package temporaltest starts a real Temporal server for tests: the dev
// server program of internal/temporaldev (Temporal's own embeddable server,
// SQLite in memory), as a separate process on a loopback port.
//
// The program lives in its own Go module so that the product's go.mod never
// pulls the server in. `go run ./internal/temporaltest/prebuild` builds it
// into a cache outside the repository, keyed by a hash of its sources and
// the Go version; a cold build takes 15-20 minutes on 2 CPUs, longer than
// any test may take, so the tests only use it when it is built and skip
// (or fail, under CI=true) when it is not.
package temporaltest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/devbuild"
)

// Server is a running dev server.
type Server struct {
	// Address is the frontend's host:port on 127.0.0.1.
	Address string `json:"address"`
	// Namespace is the namespace the server registered for tests.
	Namespace string `json:"namespace"`

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *devbuild.LogBuffer
}

// program is the dev server program of internal/temporaldev.
var program = devbuild.Program{
	Module:   "temporaldev",
	Title:    "Temporal dev server",
	Prebuild: "./internal/temporaltest/prebuild",
	Cold:     "15-20 minutes cold",
	Tests:    "Temporal",
}

// Binary returns the path of the dev server program for the sources in
// this checkout, building it when the cache does not have it (what
// `go run ./internal/temporaltest/prebuild` does). Build output goes to
// log. Another process's build of it is waited for, not repeated; when ctx
// ends the build stops and leaves nothing behind. A builder killed
// outright leaves its build running, and the build still fills the cache.
//
// DYNWORKFLOW_TEMPORALDEV names a server program to use instead, such as
// one built with other settings to compare against.
func Binary(ctx context.Context, log *os.File) (string, error) {
	if bin := os.Getenv("DYNWORKFLOW_TEMPORALDEV"); bin != "" {
		return bin, nil
	}
	return program.Build(ctx, log)
}

// Built returns the path of the dev server program for the sources in this
// checkout if the cache has it (or DYNWORKFLOW_TEMPORALDEV, as for
// Binary), or an error that says how to build it.
func Built() (string, error) {
	if bin := os.Getenv("DYNWORKFLOW_TEMPORALDEV"); bin != "" {
		return bin, nil
	}
	return program.Built()
}

// Start runs a dev server until ctx is done or Stop is called.
func Start(ctx context.Context, bin string) (*Server, error) {
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, stdin: stdin, stderr: &devbuild.LogBuffer{}}
	cmd.Stderr = s.stderr
	devbuild.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("temporaltest: start the dev server: %w", err)
	}
	line := make(chan []byte, 1)
	go func() {
		b, _ := bufio.NewReader(stdout).ReadBytes('\n')
		line <- b
		_, _ = io.Copy(io.Discard, stdout)
	}()
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	select {
	case b := <-line:
		if err := json.Unmarshal(b, s); err != nil || s.Address == "" {
			s.Stop()
			return nil, fmt.Errorf("temporaltest: the dev server did not start: %q %s", b, s.stderr.String())
		}
	case <-startCtx.Done():
		s.Stop()
		return nil, fmt.Errorf("temporaltest: the dev server did not start in time: %s", s.stderr.String())
	}
	return s, nil
}

// PID is the server process's id, for a benchmark to read its CPU time.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Stop stops the server and waits for it to exit.
func (s *Server) Stop() {
	_ = s.stdin.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// Shared is one dev server shared by the tests of a package, started on
// first use; the process ends with the test binary.
type Shared struct {
	once   sync.Once
	server *Server
	err    error
}

// Get returns the shared server, starting it on first use. Tests never
// build it: a cold build takes far longer than a test may. When it is not
// built, or does not start, Get skips t with one line that says how to
// build it, or fails t under CI=true, where the tests must run.
func (sh *Shared) Get(t testing.TB) *Server {
	t.Helper()
	sh.once.Do(func() {
		bin, err := Built()
		if err != nil {
			sh.err = err
			return
		}
		sh.server, sh.err = Start(context.Background(), bin)
	})
	if sh.err != nil {
		program.Unavailable(t, sh.err)
	}
	return sh.server
}
