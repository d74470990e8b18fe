//go:build !linux

package journal

import "os"

// datasync falls back to a full sync where fdatasync is unavailable (on
// darwin, os.File.Sync issues F_FULLFSYNC).
func datasync(f *os.File) error {
	return f.Sync()
}
