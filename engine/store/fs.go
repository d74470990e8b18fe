package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

const (
	dirMode  = 0o700
	fileMode = 0o600
)

// ensureDir creates dir with mode 0700 (and its missing parents), or checks
// and tightens it; see fsx.PrivateDir.
func ensureDir(dir string) (tightened bool, err error) {
	tightened, err = fsx.PrivateDir(dir, HomeEnv)
	if errors.Is(err, fsx.ErrUnsafeDir) {
		err = fmt.Errorf("%w: %w", ErrUnsafeState, err)
	}
	return tightened, err
}

// openNoFollow opens a run file for reading, refusing a symlink.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
}

// readFileNoFollow reads a run file, refusing a symlink.
func readFileNoFollow(path string) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
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

// writeFileSync writes data to a new file at path with mode 0600 and, when
// sync is set, syncs it, replacing a leftover file of that name.
func writeFileSync(path string, data []byte, sync bool) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, fileMode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
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
