package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// ProjectID names the project of a working directory exactly as the Node
// runtime (@fish59fish/dynamic-workflows, workflowProjectKey) does, so that
// both runtimes keep a project's runs in the same directory: the base name
// of the absolute path, lowercased, each run of characters other than
// a-z, 0-9, '.', '_' and '-' made one '-', leading and trailing '-'
// trimmed, cut to 48 bytes ("project" when nothing is left), then '-' and
// the first 12 hex digits of the SHA-256 of the absolute path.
//
// The path is made absolute lexically, as Node's path.resolve does: no
// symbolic link is followed. Callers that default to the process's working
// directory should pass the physical one (what getcwd(2) returns, as
// Node's process.cwd() does), not $PWD.
func ProjectID(cwd string) string {
	abs := absPath(cwd)
	name := filepath.Base(abs)
	if name == string(filepath.Separator) {
		name = ""
	}
	sum := sha256.Sum256([]byte(asJSString(abs)))
	return nodeSlug(name) + "-" + hex.EncodeToString(sum[:])[:12]
}

// absPath is path.resolve: the path joined to the physical working
// directory when relative, then cleaned.
func absPath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	wd, err := unix.Getwd()
	if err != nil {
		wd, _ = os.Getwd() // only if the process has no working directory
	}
	return filepath.Join(wd, p)
}

// asJSString is the string Node holds for a file name: bytes that are not
// UTF-8 become U+FFFD, one per byte, before the name is hashed as UTF-8.
// (Node's decoder folds a truncated multi-byte sequence into one U+FFFD
// where this makes one per byte; no real directory name is known to hit
// the difference.)
func asJSString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError, U+FFFD
	}
	return b.String()
}

// nodeSlug is sanitizePathSegment of the Node runtime's workflow-paths.ts.
func nodeSlug(name string) string {
	const maxLen = 48
	var b strings.Builder
	other := false // inside a run of characters that become one '-'
	keep := func(c rune) {
		if other {
			b.WriteByte('-')
			other = false
		}
		b.WriteRune(c)
	}
	for _, r := range name {
		// JavaScript's toLowerCase maps U+0130 to "i" and a combining dot
		// (U+0307), which then falls in the run of other characters; Go's
		// simple mapping gives a bare "i".
		if r == 'İ' {
			keep('i')
			other = true
			continue
		}
		r = unicode.ToLower(r)
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '.' || r == '_' || r == '-' {
			keep(r)
		} else {
			other = true
		}
	}
	if other {
		b.WriteByte('-')
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > maxLen {
		s = s[:maxLen]
	}
	if s == "" {
		return "project"
	}
	return s
}

// legacyProjectID is the project id of dynworkflow before it matched the
// Node runtime's: only letters and digits survived in the slug, and it was
// cut at 40 bytes. Open moves a project found under it.
func legacyProjectID(cwd string) string {
	abs := absPath(cwd)
	sum := sha256.Sum256([]byte(abs))
	return Slug(filepath.Base(abs), "project") + "-" + hex.EncodeToString(sum[:])[:12]
}

// migrateLegacy moves the project directory that an earlier dynworkflow
// wrote under the legacy id to where both runtimes now look for it, so a
// user's runs do not seem to vanish after an upgrade. When the new
// directory does not exist yet the whole directory is renamed (one atomic
// step); otherwise its runs and saved workflows are moved in one by one,
// never replacing a file already there.
//
// Nothing moves while a process works in the legacy directory (a live
// runtime.json owner, or a run lease held): moving files from under it
// would cost it its lease. left names the legacy directory when something
// stayed there, so the caller can say so.
func migrateLegacy(root, legacyID, id string) (left string, err error) {
	if legacyID == id {
		return "", nil
	}
	projects := filepath.Join(root, "projects")
	from, to := filepath.Join(projects, legacyID), filepath.Join(projects, id)
	fi, err := os.Lstat(from)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return from, nil
	}
	if inUse(from) {
		return from, nil
	}
	err = os.Rename(from, to)
	if err == nil {
		return "", fsx.SyncDir(projects)
	}
	if !errors.Is(err, fs.ErrExist) && !errors.Is(err, unix.ENOTEMPTY) {
		return from, fmt.Errorf("moving project state from %s to %s: %w", from, to, err)
	}
	kept := false
	for _, sub := range []string{"runs", "saved"} {
		k, err := moveEntries(filepath.Join(from, sub), filepath.Join(to, sub))
		if err != nil {
			return from, fmt.Errorf("moving project state from %s to %s: %w", from, to, err)
		}
		kept = kept || k
	}
	if kept {
		return from, nil
	}
	// What is left is a dead server's descriptor and lock, if anything.
	for _, name := range []string{"runs", "saved", "runtime.json", "runtime.json.lock"} {
		_ = os.Remove(filepath.Join(from, name))
	}
	if err := os.Remove(from); err != nil {
		return from, nil
	}
	return "", nil
}

// moveEntries moves every regular file of dir into dst (created 0700 if
// missing) without replacing any; kept reports files left behind because
// dst already had a different file of that name.
func moveEntries(dir, dst string) (kept bool, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := ensureDir(dst); err != nil {
		return false, err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			kept = true
			continue
		}
		src, target := filepath.Join(dir, e.Name()), filepath.Join(dst, e.Name())
		// A hard link never replaces a file: it is the no-clobber rename
		// every Unix file system has.
		if err := os.Link(src, target); err != nil {
			if !errors.Is(err, fs.ErrExist) {
				return kept, err
			}
			a, aerr := os.Stat(src)
			b, berr := os.Stat(target)
			if aerr != nil || berr != nil || !os.SameFile(a, b) {
				kept = true
				continue
			}
		}
		if err := os.Remove(src); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return kept, err
		}
	}
	if err := fsx.SyncDir(dst); err != nil {
		return kept, err
	}
	return kept, nil
}

// inUse reports whether a live process holds the runtime lock of the
// project directory dir, or the lease of one of its runs.
func inUse(dir string) bool {
	locks := []string{filepath.Join(dir, "runtime.json.lock")}
	if entries, err := os.ReadDir(filepath.Join(dir, "runs")); err == nil {
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".lock") {
				locks = append(locks, filepath.Join(dir, "runs", e.Name()))
			}
		}
	}
	for _, path := range locks {
		if held(path) {
			return true
		}
	}
	return false
}

// held probes the flock on path with a shared lock released at once.
func held(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	busy, err := fsx.Flock(f, unix.LOCK_SH)
	if err == nil && !busy {
		_ = fsx.Unflock(f)
	}
	return busy
}
