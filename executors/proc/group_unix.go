//go:build unix

package proc

import "syscall"

// signalGroup signals the process group led by pid. Errors are ignored:
// ESRCH only means the group is already gone.
func signalGroup(pid int, sig syscall.Signal) {
	_ = syscall.Kill(-pid, sig)
}

// alive reports whether pid names a live process we may signal.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
