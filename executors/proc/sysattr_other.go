//go:build unix && !linux

package proc

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the child in a new process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// startCmd starts cmd.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
