package temporaltest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// builder builds one program into a cache entry, a directory that holds
// the program, once built, and the build.lock that serializes its builds.
//
// A build holds the lock for as long as it runs, through a descriptor its
// processes inherit, not just while the process that started it lives: a
// builder killed mid-build leaves the build running and locked, and it
// still fills the cache. A build writes into a private temporary directory
// of the entry, removed on every exit path, and renamed into place only
// when whole; one left by a build killed outright is swept by the next.
type builder struct {
	dir  string   // the cache entry
	name string   // the program's file name in dir
	src  string   // the build's working directory
	argv []string // the build command; the output file is appended
	env  []string // the build's environment
}

// lockName is the lock file of a cache entry.
const lockName = "build.lock"

// tmpPrefix starts the name of a build's private directory.
const tmpPrefix = "build-"

func (b builder) path() string { return filepath.Join(b.dir, b.name) }

// built reports whether the program is in the cache.
func (b builder) built() bool {
	_, err := os.Stat(b.path())
	return err == nil
}

// ensure returns the program's path, building it first when the cache
// does not have it. A build another process runs is waited for, not
// repeated. Build output goes to log. When ctx ends, the build is stopped
// and nothing of it is left.
func (b builder) ensure(ctx context.Context, log *os.File) (string, error) {
	if b.built() {
		return b.path(), nil
	}
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return "", err
	}
	lock, err := lockFile(ctx, filepath.Join(b.dir, lockName), func() {
		fmt.Fprintf(log, "temporaltest: another process is building %s; waiting for it\n", b.path())
	})
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if b.built() {
		return b.path(), nil // built while we waited
	}
	b.sweep(log)
	tmp, err := os.MkdirTemp(b.dir, tmpPrefix)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := runBuild(ctx, b, tmp, lock, log); err != nil {
		return "", err
	}
	if !b.built() {
		return "", fmt.Errorf("temporaltest: the build in %s ended without writing %s", b.src, b.path())
	}
	return b.path(), nil
}

// sweep removes what builds killed outright left in the entry. It runs
// under the lock, which every running build holds, so a private
// directory found here belongs to no build. Older versions of this
// package wrote "<name>.tmp-<pid>" files, locked only while their
// builder lived: those are removed once that process is gone.
func (b builder) sweep(log *os.File) {
	if !buildsLock {
		return
	}
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		stale := strings.HasPrefix(n, tmpPrefix) && e.IsDir()
		if pid, ok := strings.CutPrefix(n, b.name+".tmp-"); ok {
			p, err := strconv.Atoi(pid)
			stale = err == nil && !processAlive(p)
		}
		if !stale {
			continue
		}
		if err := os.RemoveAll(filepath.Join(b.dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(log, "temporaltest: remove what a killed build left: %v\n", err)
		}
	}
}
