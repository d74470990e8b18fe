// Package temporaltest starts a real Temporal server for tests: the dev
// server program of internal/temporaldev (Temporal's own embeddable server,
// SQLite in memory), as a separate process on a loopback port.
//
// The program lives in its own Go module so that the product's go.mod never
// pulls the server in. It is built on first use into a cache outside the
// repository, keyed by a hash of its sources and the Go version, so `go test
// ./...` needs nothing prepared; a cold build takes minutes, which CI pays
// once with `go run ./internal/temporaltest/prebuild`.
package temporaltest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running dev server.
type Server struct {
	// Address is the frontend's host:port on 127.0.0.1.
	Address string `json:"address"`
	// Namespace is the namespace the server registered for tests.
	Namespace string `json:"namespace"`

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *lockedBuffer
}

// SourceDir is the dev server's module directory in this checkout.
func SourceDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("temporaltest: cannot locate its own source")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "temporaldev")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("temporaltest: the dev server's module is missing: %w", err)
	}
	return dir, nil
}

// CacheDir is where built dev servers are kept:
// ${XDG_CACHE_HOME:-~/.cache}/dynworkflow-ci/temporaldev.
func CacheDir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "dynworkflow-ci", "temporaldev"), nil
}

// Binary returns the path of the dev server program for the sources in
// this checkout, building it when the cache does not have it. Build output
// goes to log. The build runs in its own process group: should the caller
// die (a test timing out), it still finishes and fills the cache.
//
// DYNWORKFLOW_TEMPORALDEV names a server program to use instead, such as
// one built with other settings to compare against.
func Binary(ctx context.Context, log io.Writer) (string, error) {
	if bin := os.Getenv("DYNWORKFLOW_TEMPORALDEV"); bin != "" {
		return bin, nil
	}
	src, err := SourceDir()
	if err != nil {
		return "", err
	}
	key, err := sourceHash(src)
	if err != nil {
		return "", err
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, key)
	bin := filepath.Join(dir, "temporaldev")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, "build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // another process built it while we waited
	}
	tmp := fmt.Sprintf("%s.tmp-%d", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	cmd.Stdout, cmd.Stderr = log, log
	detach(cmd)
	fmt.Fprintf(log, "temporaltest: building the Temporal dev server into %s (a cold build takes minutes)\n", dir)
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("temporaltest: build the dev server: %w", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			return "", fmt.Errorf("temporaltest: build the dev server in %s: %w", src, err)
		}
	case <-ctx.Done():
		return "", fmt.Errorf("temporaltest: the dev server is still building (pid %d) and will be cached when done: %w", cmd.Process.Pid, ctx.Err())
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// sourceHash keys the cache: the module's files and the Go version.
func sourceHash(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); n == "go.mod" || n == "go.sum" || strings.HasSuffix(n, ".go") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", runtime.Version())
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
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
	s := &Server{cmd: cmd, stdin: stdin, stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	dieWithParent(cmd)
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

// Get returns the shared server, starting it (and building it, if need
// be) on first use. When the server cannot be had it skips t, or fails it
// under CI=true, where the tests must run.
func (sh *Shared) Get(t testing.TB) *Server {
	t.Helper()
	sh.once.Do(func() {
		ctx := context.Background()
		if dl, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
			if d, ok := dl.Deadline(); ok {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
				defer cancel()
			}
		}
		var log bytes.Buffer
		bin, err := Binary(ctx, &log)
		if err != nil {
			sh.err = fmt.Errorf("%w\n%s", err, log.String())
			return
		}
		sh.server, sh.err = Start(context.Background(), bin)
	})
	if sh.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Temporal dev server: %v", sh.err)
		}
		t.Skipf("no Temporal dev server (CI=true makes this a failure): %v", sh.err)
	}
	return sh.server
}

// lockedBuffer collects a child's stderr while the test may read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 1<<20 {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
