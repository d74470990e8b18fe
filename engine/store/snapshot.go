package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// Stats counts a run's agent calls and what they cost.
type Stats struct {
	Agents   int `json:"agents"`   // agent calls resolved (replayed + live finished + failed)
	Replayed int `json:"replayed"` // answered from the journal in the latest execution
	Live     int `json:"live"`     // ran on an executor and finished (latest execution)
	Failed   int `json:"failed"`   // ended without a result (null) in the latest execution
	// Retried counts the attempts of the latest execution that ran again
	// after a failure (transient, a fault of ours, a broken schema).
	Retried int `json:"retried,omitempty"`
	// ScriptErrors counts the parallel() branches and pipeline() items of
	// the latest execution that threw and became null (engine.ScriptError).
	ScriptErrors int `json:"scriptErrors,omitempty"`
	Running      int `json:"running"`
	// Queued is the agent() calls made and waiting for a worker under the
	// run's concurrency, while it runs: the total a live view shows is
	// Agents + Running + Queued.
	Queued            int     `json:"queued,omitempty"`
	InputTokens       int64   `json:"inputTokens"`
	CachedInputTokens int64   `json:"cachedInputTokens"`
	OutputTokens      int64   `json:"outputTokens"`
	CostUSD           float64 `json:"costUsd"`
}

// A Summary is what a listing shows of a run.
type Summary struct {
	RunID       string `json:"runId"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Status      string `json:"status"` // running, paused, completed, failed, stopped, damaged
	PauseReason string `json:"pauseReason,omitempty"`
	// ResumeAt is, for a run parked until its executor's quota resets,
	// when that is (see engine/quota).
	ResumeAt *time.Time `json:"resumeAt,omitempty"`
	Error    string     `json:"error,omitempty"`
	// ErrorCode is the stable code of the error that ended the run, when it
	// has one (TOKEN_BUDGET_EXHAUSTED, ...).
	ErrorCode  string     `json:"errorCode,omitempty"`
	ScriptPath string     `json:"scriptPath,omitempty"`
	ScriptHash string     `json:"scriptHash,omitempty"`
	Executor   string     `json:"executor,omitempty"`
	Phase      string     `json:"phase,omitempty"`
	Epoch      int        `json:"epoch"` // 0 for the first execution, +1 per resume
	StartedAt  time.Time  `json:"startedAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
	EndedAt    *time.Time `json:"endedAt,omitempty"`
	Stats      Stats      `json:"stats"`
	JournalSeq int64      `json:"journalSeq"` // last journal record this snapshot reflects
	// JournalSize, JournalHead and JournalTail are the journal's size and
	// the checksums of its first and last records (journal.Mark) when the
	// snapshot was written. A journal that no longer has them has changed
	// since: the journal, not the snapshot, says what the run is.
	JournalSize int64  `json:"journalSize,omitempty"`
	JournalHead string `json:"journalHead,omitempty"`
	JournalTail string `json:"journalTail,omitempty"`
	// Foreign names the runtime that owns a run dynworkflow only reads:
	// ForeignNode for the Node runtime's. Empty for ours.
	Foreign string `json:"foreign,omitempty"`

	// Phases are the phase titles the script's meta declares, in order:
	// with Phase they tell how far a run has come.
	Phases []string `json:"phases,omitempty"`
	// MaxCostUSD is the run's dollar cap, 0 for none: Stats.CostUSD is
	// what it spent of it.
	MaxCostUSD float64 `json:"maxCostUsd,omitempty"`
	// Stale marks a summary ListSummaries read from the backup: it is older
	// than the journal, which the caller should fold instead.
	Stale bool `json:"-"`
}

// crcTable is CRC-32C, as the journal's.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// summaryCRC is the checksum a snapshot file carries of its summary's
// bytes, as its "summaryCrc" field, so that a damaged summary is read as
// damaged rather than believed. Snapshots written before it have none and
// are read as they are.
func summaryCRC(raw []byte) string {
	return fmt.Sprintf("%08x", crc32.Checksum(raw, crcTable))
}

// summaryOnDisk is the start of a snapshot file, as written: the summary's
// bytes and their checksum.
type summaryOnDisk struct {
	Summary    json.RawMessage `json:"summary"`
	SummaryCRC string          `json:"summaryCrc"`
}

// errSummaryCRC is the error of a summary that does not match its
// checksum.
var errSummaryCRC = errors.New("the summary does not match its checksum")

// A Snapshot is a fast-read projection of a run, rebuildable from its
// journal.
type Snapshot struct {
	// Summary must stay the first field, and SummaryCRC the second:
	// ListSummaries decodes only the start of each file.
	Summary Summary `json:"summary"`
	// SummaryCRC is summaryCRC of the summary's bytes as written; set by
	// WriteSnapshot.
	SummaryCRC string          `json:"summaryCrc,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Detail     json.RawMessage `json:"detail,omitempty"` // opaque to the store
	// Activity is the last activity of each running call, for the views
	// of other processes; opaque to the store.
	Activity json.RawMessage `json:"activity,omitempty"`
	// NodeView repeats the run in the Node runtime's field names, so that
	// its list and show read our runs (see node.go).
	NodeView

	// Source is the file ReadSnapshot read the snapshot from: the
	// snapshot, or its backup when the snapshot was missing or unreadable
	// (worth a log line). It is not stored.
	Source string `json:"-"`
}

// WriteSnapshot replaces the snapshot of run runID, keeping the previous
// good one as the backup. An empty snap.Summary.RunID is filled in.
//
// The caller must own the run's lease; within a process, concurrent writes
// of one run are serialized.
//
// The steps are: (1) write <run>.json.tmp and fsync it; (2) if the current
// snapshot is good, rename it to <run>.json.bak; (3) rename the tmp file to
// <run>.json; (4) fsync the directory. Why no crash leaves neither a good
// snapshot nor a good backup, given that one of them was good before:
//
//   - During (1) only the tmp file changes, and readers ignore it.
//   - Between (2) and (3) there is no snapshot, and the backup is the old
//     snapshot, which was good: step 2 is skipped for a bad one, so a bad
//     snapshot never replaces a good backup.
//   - After (3) the snapshot is the new one, complete on disk before it got
//     its name, because of the fsync in (1).
//   - Until (4) the filesystem may persist either rename without the other.
//     Each is atomic, and each of the four outcomes holds a good file:
//     neither (old snapshot), only (2) (old snapshot as backup), only (3)
//     (new snapshot), both.
//
// A crash can leave a stale tmp file; the next write replaces it.
func (s *Store) WriteSnapshot(runID string, snap *Snapshot) error {
	return s.writeSnapshot(runID, snap, true)
}

// RefreshSnapshot is WriteSnapshot without the fsyncs, for the snapshots a
// running run writes now and then: it keeps the disk free for the
// journal's own fsyncs, on which finished calls wait. A crash can then
// leave the snapshot and its backup older than the journal, or unreadable;
// readers see that from the journal's Mark and the summary's checksum, and
// fold the journal instead.
func (s *Store) RefreshSnapshot(runID string, snap *Snapshot) error {
	return s.writeSnapshot(runID, snap, false)
}

func (s *Store) writeSnapshot(runID string, snap *Snapshot, durable bool) error {
	paths, err := s.runPaths(runID)
	if err != nil {
		return err
	}
	if snap.Summary.RunID == "" {
		snap.Summary.RunID = runID
	} else if snap.Summary.RunID != runID {
		return fmt.Errorf("writing snapshot of run %s: summary names run %q", runID, snap.Summary.RunID)
	}
	snap.fillNodeView()
	// The summary encodes to the same bytes inside the snapshot as alone,
	// which is what the checksum covers.
	summary, err := json.Marshal(snap.Summary)
	if err != nil {
		return fmt.Errorf("writing snapshot of run %s: %w", runID, err)
	}
	snap.SummaryCRC = summaryCRC(summary)
	data, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("writing snapshot of run %s: %w", runID, err)
	}

	mu := s.snapshotLock(runID)
	mu.Lock()
	defer mu.Unlock()

	tmp := paths.Snapshot + ".tmp"
	renamed := false
	defer func() {
		// A failed write (a full disk) must not leave its temp file.
		if !renamed {
			_ = os.Remove(tmp)
		}
	}()
	fail := func(err error) error { return fmt.Errorf("writing snapshot of run %s: %w", runID, err) }
	if err := writeFileSync(tmp, data, durable); err != nil {
		return fail(err)
	}
	written, err := os.Stat(tmp)
	if err != nil {
		return fail(err)
	}
	if err := s.step("tmp written"); err != nil {
		return err
	}
	if s.trustworthy(runID, paths.Snapshot) {
		if err := os.Rename(paths.Snapshot, paths.Backup); err != nil {
			return fail(err)
		}
	}
	if err := s.step("rotated"); err != nil {
		return err
	}
	if err := os.Rename(tmp, paths.Snapshot); err != nil {
		return fail(err)
	}
	renamed = true
	s.remember(runID, written)
	if err := s.step("renamed"); err != nil {
		return err
	}
	if !durable {
		return nil
	}
	if err := fsx.SyncDir(s.runsDir); err != nil {
		return fail(err)
	}
	return nil
}

// trustworthy reports whether the snapshot at path is good enough to become
// the backup. A file this Store wrote (same inode, size and mtime) is
// trusted as is; anything else is read and checked once.
func (s *Store) trustworthy(runID, path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	s.writtenMu.Lock()
	prev := s.written[runID]
	s.writtenMu.Unlock()
	if prev != nil && os.SameFile(prev, fi) && prev.Size() == fi.Size() && prev.ModTime().Equal(fi.ModTime()) {
		return true
	}
	_, err = readSnapshotFile(path, runID)
	return err == nil
}

func (s *Store) remember(runID string, fi os.FileInfo) {
	s.writtenMu.Lock()
	s.written[runID] = fi
	s.writtenMu.Unlock()
}

func (s *Store) forget(runID string) {
	s.writtenMu.Lock()
	delete(s.written, runID)
	s.writtenMu.Unlock()
}

// ReadSnapshot returns the snapshot of run runID, read from the snapshot
// file or, if that is missing or unreadable, from its backup; Source says
// which.
//
// If neither can be read the error matches ErrSnapshotCorrupt, and the run
// should be rebuilt from its journal; that includes a run that has a
// journal but no snapshot yet. A run with no files at all is ErrNotFound.
func (s *Store) ReadSnapshot(runID string) (*Snapshot, error) {
	paths, err := s.runPaths(runID)
	if err != nil {
		return nil, err
	}
	return readEither(paths, runID, readSnapshotFile)
}

// readEither reads a run's snapshot, or else its backup, with read, which
// sets the Source of what it returns.
func readEither[T any](paths Paths, runID string, read func(path, runID string) (T, error)) (T, error) {
	v, primaryErr := read(paths.Snapshot, runID)
	if primaryErr == nil {
		return v, nil
	}
	v, backupErr := read(paths.Backup, runID)
	if backupErr == nil {
		return v, nil
	}
	if errors.Is(primaryErr, fs.ErrNotExist) && errors.Is(backupErr, fs.ErrNotExist) {
		if !exists(paths.Journal) {
			return v, fmt.Errorf("run %s: %w", runID, ErrNotFound)
		}
		return v, fmt.Errorf("run %s: %w: it has a journal but no snapshot; rebuild it from the journal",
			runID, ErrSnapshotCorrupt)
	}
	return v, fmt.Errorf("run %s: %w (rebuild it from the journal): %w",
		runID, ErrSnapshotCorrupt, errors.Join(primaryErr, backupErr))
}

// snapshotDecoding reads a snapshot with encoding/json's semantics on the
// faster decoder of the JSON v2 work: a run of 10,000 calls has a snapshot
// of megabytes, read whole when its run is resumed or opened.
var snapshotDecoding = jsonv1.DefaultOptionsV1()

func readSnapshotFile(path, runID string) (*Snapshot, error) {
	data, err := readFileNoFollow(path)
	if err != nil {
		return nil, err
	}
	var head summaryOnDisk
	if err := jsonv2.Unmarshal(data, &head, snapshotDecoding); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if head.SummaryCRC != "" && head.SummaryCRC != summaryCRC(head.Summary) {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), errSummaryCRC)
	}
	var snap Snapshot
	if err := jsonv2.Unmarshal(data, &snap, snapshotDecoding); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if snap.Summary.RunID != runID {
		return nil, fmt.Errorf("%s: summary names run %q", filepath.Base(path), snap.Summary.RunID)
	}
	snap.Source = path
	return &snap, nil
}
