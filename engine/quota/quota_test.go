package quota

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

func open(t *testing.T, dir string) *Governor {
	t.Helper()
	return Open(dir)
}

// A limit one governor records, another on the same directory (another
// process) sees, until the reset.
func TestLimitIsShared(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "quota")
	a, b := open(t, dir), open(t, dir)
	if _, blocked := b.Blocked("pi-1", t0); blocked {
		t.Fatal("blocked before any limit")
	}
	if _, err := a.Limit("pi-1", "pi", 5*time.Second, "429 retry after 5s", t0); err != nil {
		t.Fatal(err)
	}
	blk, blocked := b.Blocked("pi-1", t0.Add(time.Second))
	if !blocked || !blk.Until.Equal(t0.Add(5*time.Second)) || blk.Executor != "pi" || !blk.Known {
		t.Fatalf("Blocked = %+v, %v; want blocked until the reset", blk, blocked)
	}
	if _, blocked := b.Blocked("codex-2", t0.Add(time.Second)); blocked {
		t.Fatal("another account is blocked")
	}
	if _, blocked := b.Blocked("pi-1", t0.Add(5*time.Second)); blocked {
		t.Fatal("still blocked at the reset")
	}
}

// Without a reset time, the wait doubles with each limit met right after
// the last one ran out, and a success forgets the strikes.
func TestUnknownResetBacksOff(t *testing.T) {
	g := open(t, t.TempDir())
	now := t0
	var waits []time.Duration
	for range 4 {
		b, err := g.Limit("codex-1", "codex", 0, "429", now)
		if err != nil {
			t.Fatal(err)
		}
		waits = append(waits, b.Until.Sub(now))
		now = b.Until
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
	g.Succeeded("codex-1", now)
	if b, _ := g.Limit("codex-1", "codex", 0, "429", now); b.Until.Sub(now) != time.Minute {
		t.Fatalf("after a success the wait is %v, want a minute again", b.Until.Sub(now))
	}
}

// A later reset recorded by one run is not cut short by an earlier one
// another run reports.
func TestLaterResetStands(t *testing.T) {
	g := open(t, t.TempDir())
	if _, err := g.Limit("a", "x", time.Hour, "usage limit", t0); err != nil {
		t.Fatal(err)
	}
	b, err := g.Limit("a", "x", 5*time.Second, "429", t0)
	if err != nil || !b.Until.Equal(t0.Add(time.Hour)) {
		t.Fatalf("Limit = %+v, %v; want the hour's reset to stand", b, err)
	}
}

// Many writers at once, as many runs meeting the limit together: every
// one gets a block, and the file is never torn.
func TestConcurrentLimits(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := open(t, dir)
			if _, err := g.Limit("a", "x", time.Duration(i+1)*time.Second, "429", t0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, blocked := open(t, dir).Blocked("a", t0)
	if !blocked || !b.Until.Equal(t0.Add(16*time.Second)) {
		t.Fatalf("Blocked = %+v, %v; want the latest reset", b, blocked)
	}
}
