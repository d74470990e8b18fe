package temporaltest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the server exit with the test binary, even when the
// binary is killed and cannot close the server's stdin.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
