//go:build !linux

package collectortest

import "os/exec"

// dieWithParent relies on the collector's stdin closing with the test
// binary.
func dieWithParent(*exec.Cmd) {}
