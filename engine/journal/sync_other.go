//go:build !linux

package journal

import (
	"errors"
	"os"
)

// datasync falls back to a full sync where fdatasync is unavailable (on
// darwin, os.File.Sync issues F_FULLFSYNC).
func datasync(f *os.File) error {
	return f.Sync()
}

// reserve is not available here: the journal keeps no room in reserve.
func reserve(*os.File, int64, int64) error { return errors.ErrUnsupported }

func unreserve(*os.File, int64, int64) error { return nil }
