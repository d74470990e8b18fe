//go:build !linux

package proc

// runFakeRuntimeIfAsked has nothing to run here: the fake runtime tests
// are Linux's.
func runFakeRuntimeIfAsked() {}
