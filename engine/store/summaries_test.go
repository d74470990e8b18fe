package store

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestListSummaries(t *testing.T) {
	s := openT(t, t.TempDir())
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"old", "mid", "new", "from-bak", "broken", "cut-detail"} {
		snap := snapshotV(id, i)
		snap.Summary.StartedAt = t0.Add(time.Duration(i) * time.Hour)
		if err := s.WriteSnapshot(id, snap); err != nil {
			t.Fatal(err)
		}
	}
	paths := s.RunPaths
	// from-bak: its snapshot is gone; the backup holds an older version.
	writeT(t, s, "from-bak", 99)
	os.WriteFile(paths("from-bak").Snapshot, []byte("{"), 0o600)
	// broken: nothing readable.
	os.WriteFile(paths("broken").Snapshot, []byte("x"), 0o600)
	os.Remove(paths("broken").Backup)
	// journal-only: never got a snapshot.
	os.WriteFile(paths("journal-only").Journal, []byte("{}\n"), 0o600)
	// cut-detail: the summary is intact, the rest is not. Listing reads
	// only the summary, so it is still listed.
	data, _ := os.ReadFile(paths("cut-detail").Snapshot)
	os.WriteFile(paths("cut-detail").Snapshot, data[:strings.Index(string(data), `"detail"`)+5], 0o600)
	// files that are not runs
	os.WriteFile(paths("old").Snapshot+".tmp", []byte("x"), 0o600)
	os.WriteFile(paths("old").Journal+".torn-123", []byte("x"), 0o600)

	sums, err := s.ListSummaries()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sum := range sums {
		ids = append(ids, sum.RunID)
		switch sum.RunID {
		case "from-bak":
			if sum.JournalSeq != 3 {
				t.Errorf("from-bak listed at version %d, want 3 from the backup", sum.JournalSeq)
			}
		case "broken", "journal-only":
			// Listed, not dropped, and marked for a rebuild.
			if sum.Status != "" || !strings.Contains(sum.Error, ErrSnapshotCorrupt.Error()) {
				t.Errorf("unreadable run listed as %+v", sum)
			}
		default:
			if sum.Status != "running" || sum.Error != "" {
				t.Errorf("run listed as %+v", sum)
			}
		}
	}
	// Newest first; the unreadable ones have no start time and come last.
	if got := strings.Join(ids, " "); got != "cut-detail from-bak new mid old journal-only broken" {
		t.Errorf("ListSummaries listed %q", got)
	}
}

// BenchmarkListSummaries lists 50 runs whose snapshots carry 100 KB of
// detail each. The target is under 5 ms per listing.
func BenchmarkListSummaries(b *testing.B) {
	s := openT(b, b.TempDir())
	var detail strings.Builder
	detail.WriteString(`{"calls":[`)
	for i := 0; detail.Len() < 100<<10; i++ {
		if i > 0 {
			detail.WriteByte(',')
		}
		fmt.Fprintf(&detail, `{"path":"main/agent#%d","output":%q}`, i, strings.Repeat("o", 200))
	}
	detail.WriteString(`]}`)
	for i := range 50 {
		id := fmt.Sprintf("run-%02d", i)
		snap := snapshotV(id, i)
		snap.Detail = json.RawMessage(detail.String())
		if err := s.WriteSnapshot(id, snap); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	for b.Loop() {
		sums, err := s.ListSummaries()
		if err != nil || len(sums) != 50 {
			b.Fatal(len(sums), err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/list")
}
