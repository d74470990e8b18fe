package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func snapshotV(runID string, version int) *Snapshot {
	return &Snapshot{
		Summary: Summary{
			RunID:      runID,
			Name:       "flow",
			Status:     "running",
			StartedAt:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			JournalSeq: int64(version),
		},
		Detail: json.RawMessage(fmt.Sprintf(`{"version":%d}`, version)),
	}
}

// version reads a snapshot as a fresh process would and returns its
// version and the file it came from.
func version(t *testing.T, root, runID string) (int64, string) {
	t.Helper()
	snap, err := openT(t, root).ReadSnapshot(runID)
	if err != nil {
		t.Fatal(err)
	}
	return snap.Summary.JournalSeq, snap.Source
}

func writeT(t *testing.T, s *Store, runID string, v int) {
	t.Helper()
	if err := s.WriteSnapshot(runID, snapshotV(runID, v)); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	s := openT(t, t.TempDir())
	p := s.RunPaths("r1")
	if _, err := s.ReadSnapshot("r1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadSnapshot of an unknown run = %v, want ErrNotFound", err)
	}
	snap := snapshotV("", 1)
	snap.Result = json.RawMessage(`{"ok": true}`)
	if err := s.WriteSnapshot("r1", snap); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadSnapshot("r1")
	if err != nil || got.Source != p.Snapshot {
		t.Fatalf("ReadSnapshot = %v, %v; want it read from the primary", got, err)
	}
	if got.Summary.RunID != "r1" || string(got.Result) != `{"ok":true}` || !got.Summary.StartedAt.Equal(snap.Summary.StartedAt) {
		t.Errorf("read back %+v", got)
	}
	data, _ := os.ReadFile(p.Snapshot)
	if !strings.HasPrefix(string(data), `{"summary":{"runId":"r1",`) || strings.Contains(string(data), "\n") {
		t.Errorf("snapshot is not compact with the summary first: %.60s", data)
	}
	checkMode(t, p.Snapshot, 0o600)

	writeT(t, s, "r1", 2)
	checkMode(t, p.Backup, 0o600)
	if v, _ := version(t, s.Root(), "r1"); v != 2 {
		t.Errorf("read version %d after writing 2", v)
	}
	bak, _ := os.ReadFile(p.Backup)
	if string(bak) != string(data) {
		t.Errorf("backup is not the previous snapshot")
	}
	if err := s.WriteSnapshot("r1", snapshotV("r2", 3)); err == nil {
		t.Errorf("WriteSnapshot accepted a summary of another run")
	}
}

// TestWriteSnapshotCrashPoints stops WriteSnapshot after each step, as a
// crash would, and checks that a fresh process reads a good snapshot, then
// recovers on its next write.
func TestWriteSnapshotCrashPoints(t *testing.T) {
	for _, tc := range []struct {
		step        string
		wantVersion int64
		wantBackup  bool // read from the .bak
	}{
		{"tmp written", 2, false},
		{"rotated", 2, true},
		{"renamed", 3, false},
	} {
		t.Run(tc.step, func(t *testing.T) {
			root := t.TempDir()
			s := openT(t, root)
			writeT(t, s, "r", 1)
			writeT(t, s, "r", 2)
			errCrash := errors.New("crash")
			s.hooks.afterStep = func(step string) error {
				if step == tc.step {
					return errCrash
				}
				return nil
			}
			if err := s.WriteSnapshot("r", snapshotV("r", 3)); !errors.Is(err, errCrash) {
				t.Fatalf("WriteSnapshot = %v, want the simulated crash", err)
			}

			v, from := version(t, root, "r")
			if v != tc.wantVersion || strings.HasSuffix(from, ".bak") != tc.wantBackup {
				t.Errorf("after a crash at %q read version %d from %s; want %d (backup: %v)",
					tc.step, v, from, tc.wantVersion, tc.wantBackup)
			}
			sums, err := openT(t, root).ListSummaries()
			if err != nil || len(sums) != 1 || sums[0].JournalSeq != tc.wantVersion {
				t.Errorf("ListSummaries after the crash = %+v, %v", sums, err)
			}

			s2 := openT(t, root)
			writeT(t, s2, "r", 4)
			if v, from := version(t, root, "r"); v != 4 || strings.HasSuffix(from, ".bak") {
				t.Errorf("after recovery read version %d from %s", v, from)
			}
			p := s2.RunPaths("r")
			if _, err := os.Stat(p.Snapshot + ".tmp"); err == nil {
				t.Errorf("a tmp file is left after a successful write")
			}
		})
	}
}

func TestFirstWriteCrash(t *testing.T) {
	root := t.TempDir()
	s := openT(t, root)
	s.hooks.afterStep = func(string) error { return errors.New("crash") }
	s.WriteSnapshot("r", snapshotV("r", 1))
	if _, err := openT(t, root).ReadSnapshot("r"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadSnapshot after a crash in the first write = %v, want ErrNotFound", err)
	}
}

func TestReadSnapshotFallsBack(t *testing.T) {
	s := openT(t, t.TempDir())
	p := s.RunPaths("r")
	writeT(t, s, "r", 1)
	writeT(t, s, "r", 2)

	os.WriteFile(p.Snapshot, []byte(`{"summary":{"runId":"r"`), 0o600) // torn
	if v, from := version(t, s.Root(), "r"); v != 1 || from != p.Backup {
		t.Errorf("with a corrupt snapshot read version %d from %s, want 1 from the backup", v, from)
	}
	os.Remove(p.Snapshot)
	if v, from := version(t, s.Root(), "r"); v != 1 || from != p.Backup {
		t.Errorf("with no snapshot read version %d from %s, want 1 from the backup", v, from)
	}

	os.WriteFile(p.Snapshot, []byte("garbage"), 0o600)
	os.WriteFile(p.Backup, []byte(`{"summary":{"runId":"other"}}`), 0o600) // wrong run
	_, err := s.ReadSnapshot("r")
	if !errors.Is(err, ErrSnapshotCorrupt) || !strings.Contains(err.Error(), "r.json") {
		t.Errorf("with both corrupt ReadSnapshot = %v, want ErrSnapshotCorrupt naming the files", err)
	}

	os.Remove(p.Snapshot)
	os.Remove(p.Backup)
	os.WriteFile(p.Journal, []byte("{}\n"), 0o600)
	if _, err := s.ReadSnapshot("r"); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Errorf("with only a journal ReadSnapshot = %v, want ErrSnapshotCorrupt (rebuild)", err)
	}
}

// A corrupt snapshot must not be rotated over a good backup, or a crash
// before the new snapshot is in place would leave nothing good.
func TestWriteSnapshotKeepsGoodBackup(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		t.Run(fmt.Sprintf("fresh store %v", fresh), func(t *testing.T) {
			root := t.TempDir()
			s := openT(t, root)
			p := s.RunPaths("r")
			writeT(t, s, "r", 1)
			writeT(t, s, "r", 2)
			good, _ := os.ReadFile(p.Backup)
			os.WriteFile(p.Snapshot, []byte(`{"summary":`), 0o600)
			if fresh {
				s = openT(t, root)
			}
			s.hooks.afterStep = func(step string) error {
				if step == "rotated" {
					return errors.New("crash")
				}
				return nil
			}
			s.WriteSnapshot("r", snapshotV("r", 3))
			if bak, _ := os.ReadFile(p.Backup); string(bak) != string(good) {
				t.Errorf("the good backup was replaced by %q", bak)
			}
			if v, from := version(t, root, "r"); v != 1 || from != p.Backup {
				t.Errorf("read version %d from %s, want 1 from the backup", v, from)
			}
		})
	}
}

func TestWriteSnapshotConcurrent(t *testing.T) {
	s := openT(t, t.TempDir())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 5 {
				if err := s.WriteSnapshot("r", snapshotV("r", i*10+j)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if snap, err := s.ReadSnapshot("r"); err != nil || strings.HasSuffix(snap.Source, ".bak") {
		t.Errorf("ReadSnapshot = %v, %v", snap, err)
	}
}

// A summary that no longer matches its checksum is not believed: the
// backup is read instead, and a listing marks it stale.
func TestDamagedSummaryIsNotBelieved(t *testing.T) {
	root := t.TempDir()
	s := openT(t, root)
	writeT(t, s, "r1", 1)
	writeT(t, s, "r1", 2)
	p := s.RunPaths("r1")
	b, err := os.ReadFile(p.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"summaryCrc":"`) {
		t.Fatalf("snapshot has no summary checksum: %s", b)
	}
	damaged := strings.Replace(string(b), `"journalSeq":2`, `"journalSeq":7`, 1)
	if err := os.WriteFile(p.Snapshot, []byte(damaged), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, src := version(t, root, "r1"); v != 1 || src != p.Backup {
		t.Errorf("read version %d from %s, want the backup's 1", v, src)
	}
	sums, err := openT(t, root).ListSummaries()
	if err != nil || len(sums) != 1 || !sums[0].Stale || sums[0].JournalSeq != 1 {
		t.Errorf("ListSummaries = %+v, %v; want the backup's summary, stale", sums, err)
	}
}
