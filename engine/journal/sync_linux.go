package journal

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes f's data and the metadata needed to read it back (its
// size), skipping timestamps: cheaper than fsync for an append-only file.
func datasync(f *os.File) error {
	return control(f, unix.Fdatasync)
}

// control runs fn with f's descriptor without switching f to blocking mode,
// as f.Fd() would.
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) { opErr = fn(int(fd)) }); err != nil {
		return err
	}
	return opErr
}
