package journal

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockExclusive takes a non-blocking exclusive flock on f. The lock belongs
// to the open file description, so a second open of the same file, even in
// this process, cannot take it while the first is held.
func lockExclusive(f *os.File) (busy bool, err error) {
	err = control(f, func(fd int) error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) })
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

func unlock(f *os.File) error {
	return control(f, func(fd int) error { return unix.Flock(fd, unix.LOCK_UN) })
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

// syncDir makes a directory entry created or removed in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
