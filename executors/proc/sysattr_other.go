//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr puts the child in a new process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
