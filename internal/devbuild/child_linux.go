package devbuild

import (
	"os/exec"
	"syscall"
)

// DieWithParent makes a started program exit with the test binary, even
// when the binary is killed and cannot close the program's stdin.
func DieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
