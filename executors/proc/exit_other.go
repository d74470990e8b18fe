//go:build !linux

package proc

import "os"

// exitNotice returns nil: the child is waited for by os.Process.Wait.
func exitNotice(int) *os.File { return nil }

// awaitExit is never called without an exit notice.
func awaitExit(*os.File) {}
