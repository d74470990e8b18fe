package proc

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/executors"
)

// errAncestorDied is why a runtime whose ancestor died starts nothing.
type errAncestorDied struct{ pid int }

func (e errAncestorDied) Error() string {
	return fmt.Sprintf("the dynworkflow process that ran this runtime (pid %d) was killed, and the runtime is going down with it", e.pid)
}

// shortages are the errors of a start that failed for want of a resource
// that may come back: memory, processes, descriptors; and ETXTBSY, which
// a fork racing another thread's write of the binary can meet.
var shortages = []error{syscall.EAGAIN, syscall.ENOMEM, syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ETXTBSY}

// transient reports whether err is one of the shortages.
func transient(err error) bool {
	for _, e := range shortages {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// infrastructure is an executors.Infrastructure failure: ours, not an
// agent's.
func infrastructure(msg string, err error, fix string) error {
	if fix == "" && transient(err) {
		fix = "free memory or processes, or raise the open-file limit (ulimit -n); the call runs again once it can start"
	}
	return &executors.Error{Class: executors.Infrastructure, Message: msg, Fix: fix, Err: err}
}

// signalName is a signal as a user reads it in a message: "SIGKILL".
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(sig))
}
