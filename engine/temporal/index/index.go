// Package index records which of a project's runs are on Temporal, and on
// which Temporal: the part of the Temporal backend that needs no Temporal
// SDK. A build of dynworkflow without the SDK (the default build, lean and
// fast to start) reads it to know that a run, a listing or a command
// involves Temporal, and hands those to the build with the SDK; that build
// (engine/temporal) writes it.
package index

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// The defaults of a Config and of a run's settings on Temporal. They live
// here, not beside the client, so that both builds offer the same flags.
const (
	DefaultNamespace = "default"
	DefaultTaskQueue = "dynworkflow"
	// DefaultHeartbeat is how long a worker may go silent while an agent
	// runs before its call goes to another worker.
	DefaultHeartbeat = 30 * time.Second
)

// Config says which Temporal to use.
type Config struct {
	// Address is the frontend's host:port.
	Address   string `json:"address"`
	Namespace string `json:"namespace"`
	// TaskQueue is where runs go and workers poll.
	TaskQueue string `json:"taskQueue"`
	// Blobs is the directory of the blob store, where a run keeps what is
	// too large for its history (engine/temporal/blobs): every worker and
	// client of a run must see the same one.
	Blobs string `json:"blobs,omitempty"`
}

// WithDefaults fills in the namespace and task queue.
func (c Config) WithDefaults() Config {
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.TaskQueue == "" {
		c.TaskQueue = DefaultTaskQueue
	}
	return c
}

// An Index is a project's list of its runs on Temporal, kept in the
// project's state directory: what `list` shows beside the local runs, and
// how `show`, `pause`, `resume` and the rest know a run id is Temporal's
// and which server holds it. Temporal is the truth about a run; an entry
// caches its last summary, so that listing a finished run costs no call.
type Index struct{ dir string }

// Open returns the index of the project whose state directory is
// projectDir (store.Store.ProjectDir).
func Open(projectDir string) Index { return Index{dir: filepath.Join(projectDir, "temporal")} }

// Entry is one run on Temporal.
type Entry struct {
	RunID  string `json:"runId"`
	Config Config `json:"temporal"`
	// Summary is the run's summary when last read from Temporal, and
	// Execution the Temporal run id of the execution it reflects.
	Summary   store.Summary `json:"summary"`
	Execution string        `json:"execution,omitempty"`
}

func (ix Index) path(runID string) (string, error) {
	if err := store.ValidRunID(runID); err != nil {
		return "", err
	}
	return filepath.Join(ix.dir, runID+".json"), nil
}

// Put writes an entry, replacing the run's previous one.
func (ix Index) Put(e Entry) error {
	path, err := ix.path(e.RunID)
	if err != nil {
		return err
	}
	return writeJSON(path, e)
}

// Get returns the run's entry; ok is false when the run is not Temporal's.
func (ix Index) Get(runID string) (e Entry, ok bool, err error) {
	path, err := ix.path(runID)
	if err != nil {
		return e, false, err
	}
	return readJSON[Entry](path)
}

// List returns every entry, in no particular order.
func (ix Index) List() ([]Entry, error) {
	out, err := listJSON(ix.dir, ix.Get)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Entry) int { return b.Summary.StartedAt.Compare(a.Summary.StartedAt) })
	return out, nil
}

// Delete forgets a run.
func (ix Index) Delete(runID string) error {
	path, err := ix.path(runID)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", store.ErrNotFound, runID)
		}
		return err
	}
	return nil
}

// Schedule is one of a project's schedules on Temporal: a workflow that
// Temporal starts as a run on a timetable (engine/temporal's schedules).
// Temporal is the truth about it; the entry says which Temporal has it,
// what it runs, and which of its runs the project has seen.
type Schedule struct {
	ID     string `json:"id"`
	Config Config `json:"temporal"`
	// Name and Script say what it runs; Spec when, as the user gave it.
	Name      string    `json:"name"`
	Script    string    `json:"script"`
	Spec      string    `json:"spec"`
	CreatedAt time.Time `json:"createdAt"`
}

func (ix Index) schedulePath(id string) (string, error) {
	if err := store.ValidRunID(id); err != nil {
		return "", fmt.Errorf("schedule id: %w", err)
	}
	return filepath.Join(ix.dir, "schedules", id+".json"), nil
}

// PutSchedule writes a schedule's entry.
func (ix Index) PutSchedule(s Schedule) error {
	path, err := ix.schedulePath(s.ID)
	if err != nil {
		return err
	}
	return writeJSON(path, s)
}

// GetSchedule returns a schedule's entry; ok is false when the project has
// no schedule of that id.
func (ix Index) GetSchedule(id string) (s Schedule, ok bool, err error) {
	path, err := ix.schedulePath(id)
	if err != nil {
		return s, false, err
	}
	return readJSON[Schedule](path)
}

// Schedules returns the project's schedules, oldest first.
func (ix Index) Schedules() ([]Schedule, error) {
	out, err := listJSON(filepath.Join(ix.dir, "schedules"), ix.GetSchedule)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Schedule) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// DeleteSchedule forgets a schedule.
func (ix Index) DeleteSchedule(id string) error {
	path, err := ix.schedulePath(id)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Runs and schedules are each one JSON file named by its id; the helpers
// below read, write and list such files the same way for both.

// writeJSON replaces the file at path with v, durably: written beside it,
// renamed into place, and the directory synced.
func writeJSON(path string, v any) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return fsx.SyncDir(dir)
}

// readJSON reads the file at path; ok is false when there is none.
func readJSON[T any](path string) (v T, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, false, fmt.Errorf("%s: %w", path, err)
	}
	return v, true, nil
}

// listJSON reads, with get, every <id>.json in dir whose id is valid.
func listJSON[T any](dir string, get func(id string) (T, bool, error)) ([]T, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []T
	for _, de := range des {
		id, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok || store.ValidRunID(id) != nil {
			continue
		}
		v, ok, err := get(id)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, v)
		}
	}
	return out, nil
}
