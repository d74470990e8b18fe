//go:build !linux

package temporaltest

import "os/exec"

// dieWithParent relies on the server's stdin closing with the test binary.
func dieWithParent(*exec.Cmd) {}
