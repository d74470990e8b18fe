package proc

import (
	"os"
	"runtime"
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
