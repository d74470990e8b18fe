// Package devbuild builds the programs the tests start (the Temporal dev
// server, the OpenTelemetry Collector), each from its own Go module, into a
// cache outside the repository, keyed by its sources. A cold build takes
// minutes, so only the prebuild commands build; tests use what is built.
//
// Two builders never both build: a build holds its cache entry's lock for
// as long as it runs. Nothing is left behind: a build writes into a private
// directory, removed however the build ends, and sweeps what builds killed
// outright left.
package devbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Builder builds one program into a cache entry, a directory that holds
// the program, once built, and the build.lock that serializes its builds.
//
// A build holds the lock for as long as it runs, through a descriptor its
// processes inherit, not just while the process that started it lives: a
// builder killed mid-build leaves the build running and locked, and it
// still fills the cache. A build writes into a private temporary directory
// of the entry, removed on every exit path, and renamed into place only
// when whole; one left by a build killed outright is swept by the next.
type Builder struct {
	Dir  string   // the cache entry
	Name string   // the program's file name in Dir
	Src  string   // the build's working directory
	Argv []string // the build command; the output file is appended
	Env  []string // the build's environment
}

// lockName is the lock file of a cache entry.
const lockName = "build.lock"

// tmpPrefix starts the name of a build's private directory.
const tmpPrefix = "build-"

// Path is where the program is, once built.
func (b Builder) Path() string { return filepath.Join(b.Dir, b.Name) }

// Built reports whether the program is in the cache.
func (b Builder) Built() bool {
	_, err := os.Stat(b.Path())
	return err == nil
}

// Ensure returns the program's path, building it first when the cache
// does not have it. A build another process runs is waited for, not
// repeated. Build output goes to log. When ctx ends, the build is stopped
// and nothing of it is left.
func (b Builder) Ensure(ctx context.Context, log *os.File) (string, error) {
	if b.Built() {
		return b.Path(), nil
	}
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		return "", err
	}
	lock, err := lockFile(ctx, filepath.Join(b.Dir, lockName), func() {
		fmt.Fprintf(log, "devbuild: another process is building %s; waiting for it\n", b.Path())
	})
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if b.Built() {
		return b.Path(), nil // built while we waited
	}
	b.sweep(log)
	tmp, err := os.MkdirTemp(b.Dir, tmpPrefix)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := runBuild(ctx, b, tmp, lock, log); err != nil {
		return "", err
	}
	if !b.Built() {
		return "", fmt.Errorf("devbuild: the build in %s ended without writing %s", b.Src, b.Path())
	}
	return b.Path(), nil
}

// sweep removes what builds killed outright left in the entry. It runs
// under the lock, which every running build holds, so a private
// directory found here belongs to no build. Older versions of this
// package wrote "<name>.tmp-<pid>" files, locked only while their
// builder lived: those are removed once that process is gone.
func (b Builder) sweep(log *os.File) {
	if !buildsLock {
		return
	}
	entries, err := os.ReadDir(b.Dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		stale := strings.HasPrefix(n, tmpPrefix) && e.IsDir()
		if pid, ok := strings.CutPrefix(n, b.Name+".tmp-"); ok {
			p, err := strconv.Atoi(pid)
			stale = err == nil && !processAlive(p)
		}
		if !stale {
			continue
		}
		if err := os.RemoveAll(filepath.Join(b.Dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(log, "devbuild: remove what a killed build left: %v\n", err)
		}
	}
}

// SourceHash keys a cache entry: the Go files, go.mod and go.sum of the
// module in dir, and the Go version.
func SourceHash(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); n == "go.mod" || n == "go.sum" || strings.HasSuffix(n, ".go") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", runtime.Version())
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// CacheDir is where the programs called name are kept:
// ${XDG_CACHE_HOME:-~/.cache}/dynworkflow-ci/name.
func CacheDir(name string) (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "dynworkflow-ci", name), nil
}

// Module is the Builder of the Go module in src, a program called name,
// cached under CacheDir(name) by the hash of its sources.
func Module(name, src string) (Builder, error) {
	key, err := SourceHash(src)
	if err != nil {
		return Builder{}, err
	}
	cache, err := CacheDir(name)
	if err != nil {
		return Builder{}, err
	}
	return Builder{
		Dir:  filepath.Join(cache, key),
		Name: name,
		Src:  src,
		Argv: []string{"go", "build", "-o"},
		Env:  append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false"),
	}, nil
}
