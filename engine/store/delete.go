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

	victims := []string{paths.Snapshot, paths.Backup, paths.Snapshot + ".tmp", paths.Journal}
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
