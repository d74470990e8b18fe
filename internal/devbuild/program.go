package devbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// Program is one of the programs the tests start: the module of that name
// beside this package under internal/, and what to tell a user who has not
// built it. Both dev builds (the Temporal dev server, the OpenTelemetry
// Collector) are Programs, so they are found, built, required and reported
// missing the same way.
type Program struct {
	Module   string // the module's directory under internal/, and the program's file name
	Title    string // what it is, for messages: "test collector"
	Prebuild string // the package whose main builds it: "./internal/collectortest/prebuild"
	Cold     string // how long a cold build takes: "minutes cold"
	Tests    string // the tests that need it: "tracing"
}

// SourceDir is the program's module directory in this checkout.
func (p Program) SourceDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("devbuild: cannot locate its own source")
	}
	dir := filepath.Join(filepath.Dir(file), "..", p.Module)
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("devbuild: the %s's module is missing: %w", p.Title, err)
	}
	return dir, nil
}

// Builder is the builder of the program for the sources in this checkout,
// cached under ${XDG_CACHE_HOME:-~/.cache}/dynworkflow-ci/<Module>.
func (p Program) Builder() (Builder, error) {
	src, err := p.SourceDir()
	if err != nil {
		return Builder{}, err
	}
	return Module(p.Module, src)
}

// Build builds the program into the cache unless it is there, and returns
// its path (what its prebuild command does). Build output goes to log.
// Another process's build of it is waited for, not repeated; when ctx ends
// the build stops and leaves nothing behind.
func (p Program) Build(ctx context.Context, log *os.File) (string, error) {
	b, err := p.Builder()
	if err != nil {
		return "", err
	}
	return b.Ensure(ctx, log)
}

// Built returns the built program, or an error, one line, that says how to
// build it. It never builds.
func (p Program) Built() (string, error) {
	b, err := p.Builder()
	if err != nil {
		return "", err
	}
	if !b.Built() {
		return "", fmt.Errorf("the %s is not built: build it once with `go run %s` (%s)", p.Title, p.Prebuild, p.Cold)
	}
	return b.Path(), nil
}

// Require returns the built program, or ends t as Unavailable does.
func (p Program) Require(t testing.TB) string {
	t.Helper()
	bin, err := p.Built()
	if err != nil {
		p.Unavailable(t, err)
	}
	return bin
}

// Unavailable ends t for want of the program, err saying why: it skips t,
// or fails it under CI=true, where the tests must run.
func (p Program) Unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("no %s (CI=true: the %s tests are required): %v", p.Title, p.Tests, err)
	} else {
		t.Skip(err)
	}
}

// Prebuild is the main of a prebuild command: it builds the program with
// build, and the race-enabled Temporal companion, and prints the program's
// path. Ctrl-C or SIGTERM stops the build and leaves nothing of it behind.
func Prebuild(build func(context.Context, *os.File) (string, error)) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bin, err := build(ctx, os.Stderr)
	if err == nil {
		err = CompileCompanion(ctx, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(bin)
}

// LogBuffer collects a started program's stderr while the test may read
// it, up to a mebibyte.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 1<<20 {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
