//go:build unix && !linux

package proc

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in a new process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// startProcess starts a process.
func startProcess(path string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	return os.StartProcess(path, argv, attr)
}
