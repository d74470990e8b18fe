package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// DeleteRun removes every file of run runID: snapshot, backup, journal,
// torn-tail side files and lock. It takes the run's lease for the duration,
// so it fails with ErrLeased while a live owner holds it, and no owner can
// start while it deletes.
func (s *Store) DeleteRun(runID string) error {
	paths, err := s.runPaths(runID)
	if err != nil {
		return err
	}
	if !exists(paths.Snapshot) && !exists(paths.Backup) && !exists(paths.Journal) && !exists(paths.Lock) {
		return fmt.Errorf("run %s: %w", runID, ErrNotFound)
	}
	lease, err := s.AcquireLease(runID, "delete")
	if err != nil {
		return fmt.Errorf("deleting run %s: %w", runID, err)
	}
	return s.deleteLeased(runID, paths, lease)
}

// DeleteLeased is DeleteRun for a caller that holds the run's lease; it
// releases it.
func (s *Store) DeleteLeased(runID string, lease *Lease) error {
	paths, err := s.runPaths(runID)
	if err != nil {
		return err
	}
	return s.deleteLeased(runID, paths, lease)
}

func (s *Store) deleteLeased(runID string, paths Paths, lease *Lease) error {
	victims := []string{paths.Snapshot, paths.Backup, paths.Snapshot + ".tmp", paths.Journal, paths.Journal + ".new"}
	sides, err := tornSideFiles(s.runsDir, runID)
	victims = append(victims, sides...)
	for _, path := range victims {
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	s.forget(runID)
	err = errors.Join(err, lease.Release(), fsx.SyncDir(s.runsDir))
	if err != nil {
		return fmt.Errorf("deleting run %s: %w", runID, err)
	}
	return nil
}

// tornSideFiles lists the <run>.jsonl.torn-<nanos> files journal repairs
// left. The suffix must be all digits: "a.jsonl.torn-1.json" is the
// snapshot of run "a.jsonl.torn-1", not a side file of run "a".
func tornSideFiles(dir, runID string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	prefix := runID + ".jsonl.torn-"
	var out []string
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), prefix)
		if ok && stamp != "" && strings.Trim(stamp, "0123456789") == "" {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// SweepLeftovers removes what a process killed while starting a run, or
// while writing a snapshot, leaves behind and no reader looks at: a lock
// file, a half-made journal (<run>.jsonl.new) or a snapshot's temp file of
// a run nobody holds. Lock and half-made journal go only when the run has
// no journal and no snapshot; a temp file goes whenever the run's lease is
// free.
func (s *Store) SweepLeftovers() error {
	entries, err := os.ReadDir(s.runsDir)
	if err != nil {
		return err
	}
	var errs error
	for _, e := range entries {
		name := e.Name()
		var id string
		var ok bool
		for _, suffix := range []string{".lock", ".jsonl.new", ".json.tmp"} {
			if id, ok = strings.CutSuffix(name, suffix); ok {
				break
			}
		}
		if !ok || ValidRunID(id) != nil {
			continue
		}
		paths, _ := s.runPaths(id)
		orphan := !exists(paths.Journal) && !exists(paths.Snapshot) && !exists(paths.Backup)
		if !orphan && !strings.HasSuffix(name, ".json.tmp") {
			continue
		}
		lease, err := s.AcquireLease(id, "sweep")
		if err != nil {
			continue // someone is starting it right now
		}
		for _, p := range []string{paths.Snapshot + ".tmp", paths.Journal + ".new"} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = errors.Join(errs, err)
			}
		}
		// Releasing removes the lock file, as every release does.
		errs = errors.Join(errs, lease.Release())
	}
	return errs
}
