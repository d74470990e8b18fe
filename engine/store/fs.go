package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

const (
	dirMode  = 0o700
	fileMode = 0o600
)

// ensureDir creates dir (and parents) with mode 0700 and tightens it if it
// already existed with a looser mode.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm() != dirMode {
		return os.Chmod(dir, dirMode)
	}
	return nil
}

// tightenFiles sets every regular file directly in dir to mode 0600.
// Symlinks are skipped: chmod would follow them out of the state root.
func tightenFiles(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm() != fileMode {
			if err := os.Chmod(filepath.Join(dir, e.Name()), fileMode); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// writeFileSync writes data to a new file at path with mode 0600 and syncs
// it, replacing a leftover file of that name.
func writeFileSync(path string, data []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes renames and removals in dir durable.
func syncDir(dir string) error {
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

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// flock applies a non-blocking flock operation to f. The lock belongs to the
// open file description: another open of the same file, even in this
// process, conflicts with it, and a child process does not inherit it
// because Go opens files close-on-exec.
func flock(f *os.File, how int) (busy bool, err error) {
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

func unflock(f *os.File) error {
	_, err := flock(f, unix.LOCK_UN)
	return err
}
