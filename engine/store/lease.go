package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// LeaseTerm is how far Renew pushes a lease's expiry. The expiry is for
// people reading the lock file; the flock is what excludes other owners.
const LeaseTerm = 30 * time.Second

// LeaseInfo is what a lock file says about its holder. RunID, RunPath and
// Token are what the Node runtime reads of a lock file (it shares the
// state directory and the <run>.lock name): with its run file's path and a
// live pid there, it leaves the run alone instead of taking the lock over.
type LeaseInfo struct {
	RunID      string    `json:"runId"`
	RunPath    string    `json:"runPath"`
	Token      string    `json:"token"`
	PID        int       `json:"pid"`
	Owner      string    `json:"owner"`
	Host       string    `json:"host"`
	AcquiredAt time.Time `json:"acquiredAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// A Lease makes its holder the only owner of a run: it holds an exclusive
// flock on the run's lock file. The kernel drops the flock when the holding
// process exits, even by SIGKILL, so a lease never outlives its owner.
type Lease struct {
	runID string
	path  string

	mu   sync.Mutex
	file *os.File    // nil once released
	id   os.FileInfo // of file, to tell whether path still names it
	info LeaseInfo
}

// acquireAttempts bounds how often AcquireLease retries a busy lock. A
// LeaseHolder probe holds the lock for a few microseconds, and a racing
// release can unlink the file just after we opened it; neither should make
// the run look owned.
const acquireAttempts = 5

// AcquireLease makes owner (an id for people: the runtime instance, say) the
// owner of run runID. If a live process holds the lease, the error is a
// *LeasedError naming it.
func (s *Store) AcquireLease(runID, owner string) (*Lease, error) {
	paths, err := s.runPaths(runID)
	if err != nil {
		return nil, err
	}
	var holder LeaseInfo
	for attempt := range acquireAttempts {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Millisecond)
		}
		l, info, err := tryLease(runID, paths, owner)
		if err != nil {
			return nil, fmt.Errorf("acquiring the lease of run %s: %w", runID, err)
		}
		if l != nil {
			return l, nil
		}
		holder = info
	}
	return nil, &LeasedError{RunID: runID, Holder: holder}
}

// tryLease makes one attempt. It returns a nil Lease and the holder's info
// if the lock is held, or was replaced under us.
func tryLease(runID string, paths Paths, owner string) (*Lease, LeaseInfo, error) {
	path := paths.Lock
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, fileMode)
	if err != nil {
		return nil, LeaseInfo{}, err
	}
	busy, err := fsx.Flock(f, unix.LOCK_EX)
	if err != nil || busy {
		info := readLeaseInfo(f)
		f.Close()
		return nil, info, err
	}
	// A releasing owner unlinks the file before unlocking it; if that
	// happened after our open, we hold a lock on a file nobody else will
	// ever open, and must try again.
	id, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, LeaseInfo{}, err
	}
	cur, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !os.SameFile(id, cur) {
		f.Close()
		return nil, LeaseInfo{}, nil
	}
	if err == nil && id.Mode().Perm() != fileMode {
		err = f.Chmod(fileMode)
	}
	if err != nil {
		f.Close()
		return nil, LeaseInfo{}, err
	}

	host, _ := os.Hostname()
	now := time.Now().UTC()
	l := &Lease{
		runID: runID,
		path:  path,
		file:  f,
		id:    id,
		info: LeaseInfo{RunID: runID, RunPath: paths.Snapshot, Token: owner, PID: os.Getpid(), Owner: owner, Host: host,
			AcquiredAt: now, ExpiresAt: now.Add(LeaseTerm)},
	}
	if err := l.writeInfo(); err != nil {
		l.Release()
		return nil, LeaseInfo{}, err
	}
	return l, LeaseInfo{}, nil
}

// RunID returns the run the lease is for.
func (l *Lease) RunID() string { return l.runID }

// Info returns what the lease's lock file says.
func (l *Lease) Info() LeaseInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.info
}

// Check reports whether the lease is still ours: not released, and the lock
// file still the one we locked. A run deleted and recreated by someone
// else has a new lock file, and Check fails with ErrLeaseLost. It costs one
// stat, cheap enough to call before every journal write.
func (l *Lease) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.check()
}

func (l *Lease) check() error {
	if l.file == nil {
		return fmt.Errorf("run %s: %w: released", l.runID, ErrLeaseLost)
	}
	cur, err := os.Lstat(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("run %s: %w: its lock file was removed", l.runID, ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("run %s: checking lease: %w", l.runID, err)
	}
	if !os.SameFile(l.id, cur) {
		return fmt.Errorf("run %s: %w: its lock file was replaced", l.runID, ErrLeaseLost)
	}
	return nil
}

// Renew checks the lease and pushes its expiry LeaseTerm into the future.
func (l *Lease) Renew() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	l.info.ExpiresAt = time.Now().UTC().Add(LeaseTerm)
	if err := l.writeInfo(); err != nil {
		return fmt.Errorf("run %s: renewing lease: %w", l.runID, err)
	}
	return nil
}

// Release gives the lease up, removing the lock file if it is still ours.
// Releasing twice is harmless.
func (l *Lease) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	var err error
	// Remove before unlocking, so that whoever locks the file next finds
	// it unlinked and retries on a fresh one (see tryLease).
	if l.check() == nil {
		if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = rerr
		}
	}
	err = errors.Join(err, fsx.Unflock(l.file), l.file.Close())
	l.file = nil
	if err != nil {
		return fmt.Errorf("run %s: releasing lease: %w", l.runID, err)
	}
	return nil
}

// writeInfo rewrites the lock file's content. l.mu is held or l is new.
func (l *Lease) writeInfo() error {
	data, err := json.Marshal(l.info)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if _, err := l.file.WriteAt(data, 0); err != nil {
		return err
	}
	return l.file.Truncate(int64(len(data)))
}

// LeaseHolder tells whether a live process holds the lease of run runID,
// and what its lock file says (for a lease not held, its last holder). It
// probes with a shared flock released at once; this is how a snapshot left
// "running" by a dead owner is recognized.
func (s *Store) LeaseHolder(runID string) (LeaseInfo, bool, error) {
	paths, err := s.runPaths(runID)
	if err != nil {
		return LeaseInfo{}, false, err
	}
	f, err := openNoFollow(paths.Lock)
	if errors.Is(err, fs.ErrNotExist) {
		return LeaseInfo{}, false, nil
	}
	if err != nil {
		return LeaseInfo{}, false, fmt.Errorf("probing the lease of run %s: %w", runID, err)
	}
	defer f.Close()
	info := readLeaseInfo(f)
	busy, err := fsx.Flock(f, unix.LOCK_SH)
	if err != nil {
		return info, false, fmt.Errorf("probing the lease of run %s: %w", runID, err)
	}
	if !busy {
		fsx.Unflock(f)
	}
	return info, busy, nil
}

// readLeaseInfo reads what it can; a lock file being rewritten or never
// written yields a zero LeaseInfo.
func readLeaseInfo(f *os.File) LeaseInfo {
	var info LeaseInfo
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 4<<10))
	if err == nil {
		json.Unmarshal(data, &info)
	}
	return info
}
