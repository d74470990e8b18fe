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

// reserve allocates n bytes of f from off on, without changing its size:
// appends into them need no more room on the disk.
func reserve(f *os.File, off, n int64) error {
	return control(f, func(fd int) error { return unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, off, n) })
}

// unreserve gives back the room reserve kept from off on.
func unreserve(f *os.File, off, n int64) error {
	return control(f, func(fd int) error {
		return unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
	})
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
