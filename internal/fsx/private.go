package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// ErrUnsafeDir is matched by the error of PrivateDir for a directory that
// is a symlink, not a directory, or another user's.
var ErrUnsafeDir = errors.New("unsafe state directory")

// PrivateDir creates dir with mode 0700 (and its missing parents), or checks
// an existing one and tightens it to 0700; tightened reports that it did.
// It refuses a dir that is a symlink or that another user owns, before
// changing anything: state directories hold prompts, answers and tokens,
// and a process that writes or chmods files in a directory someone else
// controls can be made to write or chmod files of their choosing, which
// matters most when it runs as root. env names the variable that moves the
// state root, for the message.
func PrivateDir(dir, env string) (tightened bool, err error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// Missing parents are made the same way, so each is checked.
		if parent := filepath.Dir(dir); parent != dir {
			if _, perr := os.Lstat(parent); errors.Is(perr, fs.ErrNotExist) {
				if _, err := PrivateDir(parent, env); err != nil {
					return false, err
				}
			}
		}
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, err
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return false, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(dir)
		return false, fmt.Errorf("%w: %s is a symbolic link (to %s); state directories must be real directories: "+
			"point --state-dir (or %s) at the target itself", ErrUnsafeDir, dir, target, env)
	case !fi.IsDir():
		return false, fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, dir)
	}
	if uid, ok := Owner(fi); ok && uid != os.Geteuid() {
		return false, fmt.Errorf("%w: %s belongs to %s, not to you (%s): "+
			"run dynworkflow as its owner, or use a state root of your own with --state-dir or %s",
			ErrUnsafeDir, dir, UserName(uid), UserName(os.Geteuid()), env)
	}
	if fi.Mode().Perm() != 0o700 {
		return true, os.Chmod(dir, 0o700)
	}
	return false, nil
}

// Owner returns the uid that owns a file, where the system says.
func Owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// Ours reports whether fi is a regular file owned by the user we run as.
// Files planted by someone else in a state directory are never acted on.
func Ours(fi fs.FileInfo) bool {
	uid, ok := Owner(fi)
	return fi.Mode().IsRegular() && (!ok || uid == os.Geteuid())
}

// UserName names uid for a message: its login name and number.
func UserName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil {
		return "user " + u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}
