// Package fsx holds the few file-system operations the journal, the store
// and the child registry need to make state durable and to own it: flock on
// an open file, fsync of a directory after creating, renaming or removing
// entries in it, and state directories that are ours alone.
package fsx

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Flock applies a non-blocking flock operation (unix.LOCK_EX, LOCK_SH or
// LOCK_UN) to f. busy reports that another open file description holds a
// conflicting lock. The lock belongs to the open file description: another
// open of the same file, even in this process, conflicts with it, and a
// child process does not inherit it because Go opens files close-on-exec.
// It uses the descriptor without switching f to blocking mode, as f.Fd()
// would.
func Flock(f *os.File, how int) (busy bool, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) { opErr = unix.Flock(int(fd), how|unix.LOCK_NB) }); err != nil {
		return false, err
	}
	if errors.Is(opErr, unix.EWOULDBLOCK) {
		return true, nil
	}
	return false, opErr
}

// Unflock releases f's flock.
func Unflock(f *os.File) error {
	_, err := Flock(f, unix.LOCK_UN)
	return err
}

// SyncDir makes the entries created, renamed or removed in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
