// Package blobs is the store of a Temporal run's large values: answers,
// transcripts, prompts and ledger pages too big for a workflow's history.
// Temporal bounds one payload (2 MB) and one history (50 MB, 51,200
// events); a run of thousands of agents answering tens of kilobytes each
// passes both. The history keeps a key; the value lives here.
//
// Keys are content addresses (the SHA-256 of the value), so a value is
// written once however often it is stored, never changes, and is checked
// against its key when read: a damaged or replaced file is refused, never
// handed to a script. That also makes reading one from workflow code
// deterministic: a key always gives the same bytes, or an error.
//
// The store is a directory. Everything that runs a run's workflow or its
// agents, or reads it (workers, `run`, `resume`, `show`), must see the
// same one: by default the state directory, which the workers and clients
// of one machine share; across machines, a directory on a shared file
// system (see the README). A worker that cannot find a value fails its
// task, which Temporal retries, rather than lose or replace the answer.
package blobs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// keyPrefix opens every key: the hash that addresses the value.
const keyPrefix = "sha256:"

// Store is a directory of values by content address.
type Store struct{ dir string }

// Open returns the store in dir, creating it (0700) if need be.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("blobs: no directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	return &Store{dir: abs}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// KeyOf is the key data is stored under.
func KeyOf(data []byte) string {
	sum := sha256.Sum256(data)
	return keyPrefix + hex.EncodeToString(sum[:])
}

// path is where the value of key lives: sha256/ab/cdef…, so that no
// directory holds more than a few thousand files.
func (s *Store) path(key string) (string, error) {
	h, ok := strings.CutPrefix(key, keyPrefix)
	if !ok || len(h) != 2*sha256.Size {
		return "", fmt.Errorf("blobs: %q is not a key", key)
	}
	if _, err := hex.DecodeString(h); err != nil || strings.ToLower(h) != h {
		return "", fmt.Errorf("blobs: %q is not a key", key)
	}
	return filepath.Join(s.dir, "sha256", h[:2], h[2:]), nil
}

// Put stores data and returns its key. It returns once the value is on
// disk (synced), so that a history may name it: a key recorded before its
// value was durable could outlive it.
func (s *Store) Put(data []byte) (string, error) {
	key := KeyOf(data)
	p, err := s.path(key)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(p); err == nil && fi.Size() == int64(len(data)) {
		return key, nil // stored before: the same bytes
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("blob store: %w", err)
	}
	f, err := os.CreateTemp(dir, ".put-*")
	if err != nil {
		return "", fmt.Errorf("blob store: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err == nil {
		err = fsx.SyncDir(dir)
	}
	if err != nil {
		return "", fmt.Errorf("blob store %s: %w", s.dir, err)
	}
	return key, nil
}

// ErrMissing is matched by the error of a key the store does not have.
var ErrMissing = errors.New("blob not found")

// Get returns the value stored under key, checked against it.
func (s *Store) Get(key string) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is not in the blob store %s; every worker and client of a run must share its blob store "+
			"(on several machines, a directory on a shared file system: --blob-dir)", ErrMissing, key, s.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	if got := KeyOf(data); got != key {
		return nil, fmt.Errorf("blob store %s: %s holds other content (%s): the file was damaged or replaced", s.dir, key, got)
	}
	return data, nil
}
