package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symlinked state directory is refused before anything is written or
// chmodded through it.
func TestSymlinkedStateIsRefused(t *testing.T) {
	target := t.TempDir()
	if err := os.Chmod(target, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, link := range map[string]func(root string) string{
		"root":     func(root string) string { return root },
		"projects": func(root string) string { return filepath.Join(root, "projects") },
	} {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "state")
			if name != "root" {
				if err := os.Mkdir(root, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(target, link(root)); err != nil {
				t.Fatal(err)
			}
			_, err := Open(root, "/work/p")
			if !errors.Is(err, ErrUnsafeState) || !strings.Contains(err.Error(), "symbolic link") {
				t.Fatalf("Open = %v, want ErrUnsafeState naming the link", err)
			}
			if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o755 {
				t.Errorf("the link's target was chmodded to %v", fi.Mode().Perm())
			}
			if entries, _ := os.ReadDir(target); len(entries) != 0 {
				t.Errorf("files were written through the link: %v", entries)
			}
		})
	}
}

// A state directory that belongs to another user is refused, even to root,
// with a message that says whose it is.
func TestForeignStateIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a directory that belongs to another user")
	}
	root := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(root, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := Open(root, "/work/p")
	if !errors.Is(err, ErrUnsafeState) || !strings.Contains(err.Error(), "uid 65534") || !strings.Contains(err.Error(), "--state-dir") {
		t.Fatalf("Open = %v, want ErrUnsafeState naming the owner and the way out", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("Open wrote into another user's root: %v", entries)
	}
}

// A lock file planted as a symlink is never opened through: the lease is
// refused and the link's target is untouched.
func TestPlantedLockSymlink(t *testing.T) {
	s := openT(t, t.TempDir())
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, s.RunPaths("r1").Lock); err != nil {
		t.Fatal(err)
	}
	if l, err := s.AcquireLease("r1", "me"); err == nil {
		l.Release()
		t.Fatal("AcquireLease went through a symlinked lock file")
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	if fi, _ := os.Stat(victim); fi.Mode().Perm() != 0o644 {
		t.Errorf("the symlink's target was chmodded to %v", fi.Mode().Perm())
	}
	if _, _, err := s.LeaseHolder("r1"); err == nil {
		t.Error("LeaseHolder read through a symlinked lock file")
	}
}

// SweepLeftovers removes the lock and half-made journal of a start killed
// before its run existed, and a snapshot's temp file, and nothing else.
func TestSweepLeftovers(t *testing.T) {
	s := openT(t, t.TempDir())
	orphan, live := s.RunPaths("orphan"), s.RunPaths("live")
	for _, f := range []string{orphan.Lock, orphan.Journal + ".new", live.Journal, live.Snapshot + ".tmp"} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SweepLeftovers(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{orphan.Lock, orphan.Journal + ".new", live.Snapshot + ".tmp"} {
		if _, err := os.Lstat(f); !os.IsNotExist(err) {
			t.Errorf("%s is still there", filepath.Base(f))
		}
	}
	if _, err := os.Stat(live.Journal); err != nil {
		t.Errorf("the sweep removed a journal: %v", err)
	}
}
