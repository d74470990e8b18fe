package store

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrBadRunID is matched by the error of every method given a run id
	// that ValidRunID rejects.
	ErrBadRunID = errors.New("invalid run id")

	// ErrNotFound is returned for a run that has no files.
	ErrNotFound = errors.New("run not found")

	// ErrSnapshotCorrupt is matched when neither the snapshot nor its
	// backup can be read. The run's journal is the truth: rebuild from it.
	ErrSnapshotCorrupt = errors.New("run snapshot is unreadable")

	// ErrLeased is matched by a *LeasedError: a live process owns the run.
	ErrLeased = errors.New("run is owned by another process")

	// ErrUnsafeState is matched when a state directory is a symlink or
	// belongs to another user: the store refuses to use it.
	ErrUnsafeState = errors.New("unsafe state directory")

	// ErrLeaseLost is returned by Lease.Check and Lease.Renew once the lease
	// is no longer ours: released, or its lock file removed or replaced.
	ErrLeaseLost = errors.New("run lease lost")
)

// A LeasedError says who holds the lease of a run, as far as the lock file
// tells; Holder is zero if the holder had not written it yet.
type LeasedError struct {
	RunID  string
	Holder LeaseInfo
}

func (e *LeasedError) Error() string {
	h := e.Holder
	if h.PID == 0 {
		return fmt.Sprintf("run %s is owned by another process", e.RunID)
	}
	return fmt.Sprintf("run %s is owned by pid %d (owner %q on host %q, lease until %s)",
		e.RunID, h.PID, h.Owner, h.Host, h.ExpiresAt.Format(time.RFC3339))
}

func (e *LeasedError) Unwrap() error { return ErrLeased }
