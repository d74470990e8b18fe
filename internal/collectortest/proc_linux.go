package collectortest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the collector exit with the test binary, even when
// the binary is killed and cannot close the collector's stdin.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
