// Package collectortest runs a real OpenTelemetry Collector for tests: the
// program of internal/collectordev (the collector's OTLP receiver and the
// contrib file exporter), as a separate process on loopback ports, and
// reads back the spans it received.
//
// The program lives in its own Go module so that the product's go.mod
// never pulls the collector in. It is built into a cache outside the
// repository (internal/devbuild), keyed by a hash of its sources and the Go
// version, by `go run ./internal/collectortest/prebuild` (which .ci/run
// calls); a test never builds it, since a cold build takes minutes: without
// it a test skips with the command to run, or fails under CI=true.
package collectortest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/devbuild"
)

// program is the collector program of internal/collectordev.
var program = devbuild.Program{
	Module:   "collectordev",
	Title:    "test collector",
	Prebuild: "./internal/collectortest/prebuild",
	Cold:     "minutes cold",
	Tests:    "tracing",
}

// Binary returns the built collector, or an error saying how to build it.
func Binary() (string, error) { return program.Built() }

// Build builds the collector into the cache unless it is there, and
// returns its path (what `go run ./internal/collectortest/prebuild` does).
// Build output goes to log. Another process's build of it is waited for,
// not repeated; when ctx ends the build stops and leaves nothing behind.
func Build(ctx context.Context, log *os.File) (string, error) { return program.Build(ctx, log) }

// Require returns the built collector, or skips t (fails it under
// CI=true, where the tests must run) with how to build it.
func Require(t testing.TB) string {
	t.Helper()
	return program.Require(t)
}

// Collector is a running collector.
type Collector struct {
	// HTTPEndpoint is the OTLP/HTTP base URL, http://127.0.0.1:PORT, for
	// OTEL_EXPORTER_OTLP_ENDPOINT; GRPCEndpoint the OTLP/gRPC one.
	HTTPEndpoint string
	GRPCEndpoint string

	file   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *devbuild.LogBuffer
	exited chan struct{}
}

// Start runs the collector bin until t ends, writing what it receives
// under t's temporary directory.
func Start(t testing.TB, bin string) *Collector {
	t.Helper()
	dir := t.TempDir()
	var c *Collector
	var err error
	// The ports are picked free and then handed over: another process may
	// take one in between, so a failure to start is tried again.
	for range 3 {
		if c, err = start(bin, dir); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

func start(bin, dir string) (*Collector, error) {
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	grpcPort, err := freePort()
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "spans-"+strconv.Itoa(httpPort)+".jsonl")
	config := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  file:
    path: %s
    flush_interval: 50ms
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: info
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`, httpPort, grpcPort, strconv.Quote(file))
	cmd := exec.Command(bin, config)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	c := &Collector{
		HTTPEndpoint: fmt.Sprintf("http://127.0.0.1:%d", httpPort),
		GRPCEndpoint: fmt.Sprintf("http://127.0.0.1:%d", grpcPort),
		file:         file, cmd: cmd, stdin: stdin, stderr: &devbuild.LogBuffer{}, exited: make(chan struct{}),
	}
	devbuild.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("collectortest: start the collector: %w", err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = c.stderr.Write([]byte(line + "\n"))
			if !signalled && strings.Contains(line, "Everything is ready") {
				close(ready)
				signalled = true
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(c.exited) }()
	select {
	case <-ready:
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("collectortest: the collector exited at start:\n%s", c.stderr.String())
	case <-time.After(time.Minute):
		c.Stop()
		return nil, fmt.Errorf("collectortest: the collector did not start in a minute:\n%s", c.stderr.String())
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Stop stops the collector and waits for it to exit.
func (c *Collector) Stop() {
	_ = c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// Log is what the collector wrote to stderr so far.
func (c *Collector) Log() string { return c.stderr.String() }

// Spans reads every span the collector has written so far.
func (c *Collector) Spans() ([]Span, error) {
	b, err := os.ReadFile(c.file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseSpans(b)
}

// WaitSpans waits until the spans the collector wrote satisfy done, and
// returns them; it fails t after a minute.
func (c *Collector) WaitSpans(t testing.TB, what string, done func([]Span) bool) []Span {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		spans, err := c.Spans()
		if err != nil {
			t.Fatal(err)
		}
		if done(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector did not receive %s in a minute; it has %d spans; its log:\n%s", what, len(spans), c.Log())
		}
		// The file exporter flushes every 50 ms.
		time.Sleep(50 * time.Millisecond)
	}
}
