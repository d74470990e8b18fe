// Package e2etest runs the dynworkflow binary end to end for the CLI's
// test packages: Main builds the real binary once per test binary; every
// test runs it with os/exec in its own project and state directories and
// asserts what a user would see: exit codes, --json output, list/show, and
// the files on disk. Nothing is mocked.
package e2etest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/collectortest"
	"github.com/dynworkflow/dynworkflow/internal/temporaltest"
)

// binDir holds the binaries Main builds, made on first use: the binary
// under test (Binary) and, where a prebuild compiled it, its Temporal
// Companion (Companion).
var binDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "dynworkflow-e2e-") })

// Binary is the dynworkflow binary Main built.
func Binary() string {
	dir, _ := binDir()
	return filepath.Join(dir, "dynworkflow")
}

const (
	// CmdTimeout bounds one CLI invocation. It guards against hangs, not
	// slowness: no invocation should take more than a second or two on an
	// idle machine, but a race-enabled binary on a busy one (the rest of
	// the suite, other work) can take a minute for what takes seconds.
	CmdTimeout = 5 * time.Minute
	// WaitTimeout bounds every wait on a condition, a hang guard too.
	WaitTimeout = 2 * time.Minute
	// Tick is how often a wait re-checks its condition.
	Tick = 5 * time.Millisecond
)

// Main is the TestMain of a test package of the CLI: it builds the binary
// before the tests run, and exits with their result.
func Main(m *testing.M) { run(m, false) }

// MainWithCompanion is Main for a package whose tests run the Temporal
// companion: where a prebuild compiled it, it is linked now, beside the
// binary, rather than inside the first such test's timeout.
func MainWithCompanion(m *testing.M) { run(m, true) }

func run(m *testing.M, companion bool) {
	unignoreSignals()
	// A race-enabled program sleeps a second as it exits, to let its last
	// races be reported. An env's commands are told not to; this reaches
	// the other processes a test starts (workers, the companion, ours
	// started by the Node runtime's CLI).
	if _, set := os.LookupEnv("GORACE"); !set {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(testMain(m, companion))
}

// unignoreSignals lets the dynworkflow processes the tests start see
// SIGHUP and SIGINT when go test runs under nohup or in the background of
// a script: a signal ignored here stays ignored across exec, and
// dynworkflow started with it ignored keeps ignoring it, by design, so
// the tests that hang up on serve or press Ctrl-C would wait for nothing.
// A signal this process handles is reset to its default in a child
// instead; here it is dropped, as it was ignored.
func unignoreSignals() {
	sink := make(chan os.Signal, 1)
	for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if signal.Ignored(sig) {
			signal.Notify(sink, sig)
		}
	}
}

func testMain(m *testing.M, companion bool) int {
	dir, err := binDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	var companionBuilt sync.WaitGroup
	if companion && CompanionCompiled() == nil {
		companionBuilt.Go(func() { _, _ = Companion() })
	}
	err = BuildBinary(Binary(), RaceEnabled && os.Getenv("DYNWORKFLOW_E2E_RACE") == "1")
	companionBuilt.Wait()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	runMoreInParallel()
	return m.Run()
}

// runMoreInParallel raises go test's -parallel, unless it was given, from
// GOMAXPROCS to twice that. A test here spends most of its time
// waiting on the processes it started (a dead endpoint's 30 s, a quota's
// reset, agents at a gate), not on a CPU: at two at a time on two CPUs the
// package came near go test's 10-minute timeout on a loaded machine,
// mostly idle.
func runMoreInParallel() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", fmt.Sprint(2*runtime.GOMAXPROCS(0)))
	}
}

// BuildBinary builds the command into out, with -race if race, and the
// build tags given.
//
// The binary under test is built with -race only under
// DYNWORKFLOW_E2E_RACE=1, which .ci/run sets for its second pass. Every
// test here runs it many times, two processes a command (the ancestor and
// its runtime), and a race-enabled start costs three times the CPU of a
// plain one (0.4 s against 0.14 s for a one-call run): with it this
// package needed about 800 s of CPU, and beside the rest of the suite it
// passed go test's 10-minute timeout on 2 CPUs. The product's data races
// are the business of the race-enabled unit tests of each package.
func BuildBinary(out string, race bool, tags ...string) error {
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(args, "github.com/dynworkflow/dynworkflow/cmd/dynworkflow")
	build := exec.Command(GoTool(), args...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// GoTool is the go command of the toolchain running the tests.
func GoTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

// Companion builds dynworkflow-temporal next to the binary under test, once.
// Only where a prebuild compiled it (CompanionCompiled): cold, compiling
// the Temporal SDK with -race takes minutes, too long for a test.
var Companion = sync.OnceValues(func() (string, error) {
	path := filepath.Join(filepath.Dir(Binary()), "dynworkflow-temporal")
	return path, BuildBinary(path, RaceEnabled, "temporal")
})

// CompanionCompiled reports whether a prebuild ran, which compiled the
// race-enabled companion into the Go build cache: the Temporal dev server
// or the test collector is built.
func CompanionCompiled() error {
	if _, err := temporaltest.Built(); err == nil {
		return nil
	}
	if _, err := collectortest.Binary(); err == nil {
		return nil
	}
	return errors.New("the Temporal companion is not compiled: run `go run ./internal/temporaltest/prebuild` once (minutes cold)")
}

// NeedCompanion builds the companion, once, or skips t (fails it under
// CI=true) with how to enable it when no prebuild compiled it.
func NeedCompanion(t *testing.T) string {
	t.Helper()
	if err := CompanionCompiled(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: the tests that run the companion are required)", err)
		}
		t.Skip(err)
	}
	path, err := Companion()
	if err != nil {
		t.Fatal(err)
	}
	return path
}
