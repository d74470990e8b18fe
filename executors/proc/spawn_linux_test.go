package proc

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// A child must not die when the goroutine that started it ends on a thread
// it had locked: Go then ends the thread, and Pdeathsig would kill a child
// forked from it.
func TestChildOutlivesItsStartersThread(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = sysProcAttr()
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: Go ends this thread on return
		started <- startCmd(cmd)
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	// The starter's thread is gone by the time its goroutine has been
	// reaped; give the kernel a moment to deliver a death signal, which
	// would end sleep at once.
	select {
	case <-exited:
		t.Fatalf("the child died with the thread of the goroutine that started it: %v", cmd.ProcessState)
	case <-time.After(500 * time.Millisecond):
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the child is gone: %v", err)
	}
}
