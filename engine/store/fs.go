package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

const (
	dirMode  = 0o700
	fileMode = 0o600
)

// ensureDir creates dir (and parents) with mode 0700 and tightens it if it
// already existed with a looser mode; tightened reports that it did.
func ensureDir(dir string) (tightened bool, err error) {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return false, err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm() != dirMode {
		return true, os.Chmod(dir, dirMode)
	}
	return false, nil
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

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
