//go:build unix

package devbuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests run builders as separate processes (this test binary again,
// in helper mode) around a fake build that waits for the test's signal, and
// kill them, and their builds, at the worst moments.

// helperEnv selects helper mode: the process builds into the entry named
// by DEVBUILD_DIR and prints the program's path.
const helperEnv = "DEVBUILD_HELPER"

// fakeBuild logs its start and end and, when GATE is set, waits for that
// file to appear before it writes the program ($1, the output file).
const fakeBuild = `echo "start $$" >>"$LOG"
if [ -n "$GATE" ]; then
  while [ ! -e "$GATE" ]; do sleep 0.02; done
fi
printf 'built by %s' $$ >"$1"
echo "end $$" >>"$LOG"`

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "build" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

// helperMain is a builder process, stopped by SIGINT or SIGTERM as
// prebuild is.
func helperMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := fakeBuilder(os.Getenv("DEVBUILD_DIR"))
	path, err := b.Ensure(ctx, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(path)
	return 0
}

func fakeBuilder(dir string) Builder {
	return Builder{Dir: dir, Name: "prog", Src: dir, Argv: []string{"/bin/sh", "-c", fakeBuild, "fake"}, Env: os.Environ()}
}

// cache is one test's cache entry, build log and gate.
type cache struct {
	t    *testing.T
	dir  string
	log  string
	gate string
}

func newCache(t *testing.T) *cache {
	root := t.TempDir()
	return &cache{t: t, dir: filepath.Join(root, "entry"), log: filepath.Join(root, "build.log"), gate: filepath.Join(root, "gate")}
}

// helper is a builder process. Its stderr goes to a file, not a pipe: the
// build inherits it and may outlive the helper.
type helper struct {
	cmd    *exec.Cmd
	stdout strings.Builder
	stderr string // the file
	exited chan struct{}
	err    error // how it exited, once exited is closed
}

// builder starts a builder process; gated builds wait for open.
func (c *cache) builder(gated bool) *helper {
	c.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		c.t.Fatal(err)
	}
	h := &helper{cmd: exec.Command(exe, "-test.run=^$"), stderr: filepath.Join(c.t.TempDir(), "stderr"), exited: make(chan struct{})}
	h.cmd.Env = append(os.Environ(), helperEnv+"=build", "DEVBUILD_DIR="+c.dir, "LOG="+c.log, "GATE=")
	if gated {
		h.cmd.Env = append(h.cmd.Env, "GATE="+c.gate)
	}
	h.cmd.Stdout = &h.stdout
	f, err := os.Create(h.stderr)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	h.cmd.Stderr = f
	if err := h.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() {
		h.err = h.cmd.Wait()
		close(h.exited)
	}()
	c.t.Cleanup(func() {
		_ = h.cmd.Process.Kill()
		<-h.exited
	})
	return h
}

// said returns what the helper wrote to stderr so far.
func (h *helper) said() string {
	b, _ := os.ReadFile(h.stderr)
	return string(b)
}

// waitLine waits until the helper writes want to stderr.
func (c *cache) waitLine(h *helper, want string) {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(h.said(), want) {
		select {
		case <-h.exited:
			if !strings.Contains(h.said(), want) {
				c.t.Fatalf("the builder ended without saying %q:\n%s", want, h.said())
			}
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the builder did not say %q in a minute:\n%s", want, h.said())
		}
	}
}

// wait waits for the helper to exit and returns its stdout and error.
func (c *cache) wait(h *helper) (string, error) {
	c.t.Helper()
	select {
	case <-h.exited:
		if h.err != nil {
			c.t.Logf("the builder exited with %v:\n%s", h.err, h.said())
		}
		return strings.TrimSpace(h.stdout.String()), h.err
	case <-time.After(time.Minute):
		c.t.Fatalf("the builder did not exit in a minute:\n%s", h.said())
		return "", nil
	}
}

// builds returns the pids of the builds the log records as started, and
// the number that ended.
func (c *cache) builds() (started []int, ended int) {
	c.t.Helper()
	b, err := os.ReadFile(c.log)
	if err != nil && !os.IsNotExist(err) {
		c.t.Fatal(err)
	}
	for l := range strings.Lines(string(b)) {
		what, pid, _ := strings.Cut(strings.TrimSpace(l), " ")
		switch what {
		case "start":
			p, _ := strconv.Atoi(pid)
			started = append(started, p)
		case "end":
			ended++
		}
	}
	return started, ended
}

// waitBuildStarted waits until a build has started and returns its pid.
func (c *cache) waitBuildStarted() int {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if started, _ := c.builds(); len(started) > 0 {
			return started[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatal("no build started in a minute")
	return 0
}

// open lets gated builds finish.
func (c *cache) open() {
	c.t.Helper()
	if err := os.WriteFile(c.gate, nil, 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// left lists what the entry holds.
func (c *cache) left() []string {
	c.t.Helper()
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		c.t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// expectLeft fails the test unless the entry holds exactly names.
func (c *cache) expectLeft(names ...string) {
	c.t.Helper()
	if got := c.left(); !slices.Equal(got, names) {
		c.t.Errorf("the cache entry holds %q, want %q", got, names)
	}
}

// expectProgram fails the test unless path is the entry's program, whole.
func (c *cache) expectProgram(path string) {
	c.t.Helper()
	if want := filepath.Join(c.dir, "prog"); path != want {
		c.t.Errorf("the builder printed %q, want %q", path, want)
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "prog"))
	if err != nil || !strings.HasPrefix(string(b), "built by ") {
		c.t.Errorf("the program is %q (%v)", b, err)
	}
}

// Two builders started together: one builds, the other waits for that
// build and uses its program.
func TestConcurrentBuildersBuildOnce(t *testing.T) {
	c := newCache(t)
	first := c.builder(true)
	c.waitBuildStarted()
	second := c.builder(true)
	c.waitLine(second, "another process is building")
	c.open()
	for _, h := range []*helper{first, second} {
		path, err := c.wait(h)
		if err != nil {
			t.Fatalf("a builder failed: %v", err)
		}
		c.expectProgram(path)
	}
	if started, ended := c.builds(); len(started) != 1 || ended != 1 {
		t.Errorf("%d builds started and %d ended, want one", len(started), ended)
	}
	c.expectLeft(lockName, "prog")
}

// A builder killed outright mid-build leaves its build running and holding
// the lock: the next builder waits for it rather than building beside it,
// and the build still puts the program in place and cleans up after itself.
func TestBuildOutlivesItsBuilder(t *testing.T) {
	c := newCache(t)
	first := c.builder(true)
	c.waitBuildStarted()
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.wait(first); err == nil {
		t.Fatal("the killed builder exited cleanly")
	}
	second := c.builder(false)
	c.waitLine(second, "another process is building")
	c.open()
	path, err := c.wait(second)
	if err != nil {
		t.Fatalf("the second builder failed: %v", err)
	}
	c.expectProgram(path)
	if started, ended := c.builds(); len(started) != 1 || ended != 1 {
		t.Errorf("%d builds started and %d ended, want the first one only", len(started), ended)
	}
	c.expectLeft(lockName, "prog")
}

// A builder told to stop (Ctrl-C, or its caller's context ending) stops its
// build and leaves nothing of it.
func TestStoppedBuildLeavesNothing(t *testing.T) {
	c := newCache(t)
	h := c.builder(true)
	pid := c.waitBuildStarted()
	if err := h.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if _, err := c.wait(h); err == nil {
		t.Fatal("the stopped builder exited cleanly")
	}
	if processAlive(pid) {
		t.Errorf("the build (pid %d) still runs", pid)
	}
	c.expectLeft(lockName)
}

// A build killed from outside, by a signal it can handle or by SIGKILL,
// fails its builder and leaves nothing; the next builder builds.
func TestKilledBuildLeavesNothing(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			c := newCache(t)
			h := c.builder(true)
			pid := c.waitBuildStarted()
			killBuild(t, pid, sig)
			if _, err := c.wait(h); err == nil {
				t.Fatal("the builder of a killed build exited cleanly")
			}
			c.expectLeft(lockName)
			path, err := c.wait(c.builder(false))
			if err != nil {
				t.Fatalf("the next builder failed: %v", err)
			}
			c.expectProgram(path)
			c.expectLeft(lockName, "prog")
		})
	}
}

// When a builder and its build are both killed outright, the next builder
// sweeps what they left (and what builders of older versions left) before
// it builds.
func TestNextBuildSweepsWhatKilledOnesLeft(t *testing.T) {
	c := newCache(t)
	h := c.builder(true)
	pid := c.waitBuildStarted()
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = c.wait(h)
	killBuild(t, pid, syscall.SIGKILL)
	stale := c.left()
	if !slices.ContainsFunc(stale, func(n string) bool { return strings.HasPrefix(n, tmpPrefix) }) {
		t.Fatalf("expected the killed build's directory in the entry, found %q", stale)
	}
	// An older builder's file, whose process is gone.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(c.dir, fmt.Sprintf("prog.tmp-%d", gone.Process.Pid))
	if err := os.WriteFile(old, []byte("half a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	path, err := c.wait(c.builder(false))
	if err != nil {
		t.Fatalf("the next builder failed: %v", err)
	}
	c.expectProgram(path)
	c.expectLeft(lockName, "prog")
}

// killBuild sends sig to the process group of the build whose fake build
// script has pid.
func killBuild(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	group, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-group, sig); err != nil {
		t.Fatal(err)
	}
}
