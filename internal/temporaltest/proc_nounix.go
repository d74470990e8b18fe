//go:build !unix

package temporaltest

import (
	"context"
	"os/exec"
)

func detach(*exec.Cmd) {}

// lockFile does not lock: concurrent builds both finish, and the second
// rename replaces the first binary with an identical one.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
