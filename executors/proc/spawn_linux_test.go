package proc

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A child must not die when the goroutine that started it ends on a thread
// it had locked: Go then ends the thread, and Pdeathsig would kill a child
// forked from it.
func TestChildOutlivesItsStartersThread(t *testing.T) {
	started := make(chan spawned, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: Go ends this thread on return
		p, err := startProcess("/bin/sleep", []string{"sleep", "30"}, &os.ProcAttr{Sys: sysProcAttr()})
		started <- spawned{p, err}
	}()
	s := <-started
	if s.err != nil {
		t.Fatal(s.err)
	}
	exited := make(chan *os.ProcessState, 1)
	go func() {
		st, _ := s.p.Wait()
		exited <- st
	}()
	defer func() {
		if s.p.Kill() == nil {
			<-exited
		}
	}()
	// The starter's thread is gone by the time its goroutine has been
	// reaped; give the kernel a moment to deliver a death signal, which
	// would end sleep at once.
	select {
	case st := <-exited:
		t.Fatalf("the child died with the thread of the goroutine that started it: %v", st)
	case <-time.After(500 * time.Millisecond):
	}
	if err := s.p.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the child is gone: %v", err)
	}
}

// threads is the number of threads of this process.
func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// Children that run a while must not each hold one of our threads while
// we wait for them: a run at concurrency 256 would keep 256 threads, each
// with stacks the Go runtime never gives back.
func TestWaitingForChildrenHoldsNoThreads(t *testing.T) {
	const children = 32
	reg := openRegistry(t)
	before := threads(t)
	release := filepath.Join(t.TempDir(), "release")
	var started, done sync.WaitGroup
	started.Add(children)
	errs := make(chan error, children)
	for range children {
		done.Add(1)
		go func() {
			defer done.Done()
			// Each child says it is up, then waits for the release file.
			_, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c",
				`echo up; while [ ! -e "$1" ]; do sleep 0.05; done`, "sh", release}, Registry: reg},
				func([]byte) { started.Done() })
			errs <- err
		}()
	}
	started.Wait()
	during := threads(t)
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	done.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Waiting with a thread per child took at least one more thread per
	// child. A burst of starts on a loaded machine may still make the
	// runtime start a few threads for system calls that block, and keep
	// them: half a thread per child is far from either.
	if limit := before + children/2; during > limit {
		t.Fatalf("%d threads while %d children ran (%d before): a thread per child waited for", during, children, before)
	}
}
