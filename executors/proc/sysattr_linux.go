package proc

import "syscall"

// sysProcAttr puts the child in a new process group and has the kernel
// kill it when the thread that started it dies, which on Linux covers a
// SIGKILL of our process. The Go runtime does not end its threads while
// the process lives, so the signal fires only when we die.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
