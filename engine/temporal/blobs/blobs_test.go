package blobs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPutGet(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(strings.Repeat("answer ", 1000))
	key, err := s.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.Put(data); err != nil || again != key {
		t.Fatalf("a second put gave %q, %v", again, err)
	}
	got, err := s.Get(key)
	if err != nil || string(got) != string(data) {
		t.Fatalf("get: %d bytes, %v", len(got), err)
	}
	fi, err := os.Stat(s.Dir())
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the store's directory: %v %v", fi.Mode(), err)
	}
}

func TestGetRefuses(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key, err := s.Put([]byte("the answer"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(KeyOf([]byte("never stored"))); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "--blob-dir") {
		t.Errorf("a missing key: %v", err)
	}
	p, _ := s.path(key)
	if err := os.WriteFile(p, []byte("another answer"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(key); err == nil || !strings.Contains(err.Error(), "damaged or replaced") {
		t.Errorf("a replaced value: %v", err)
	}
	for _, bad := range []string{"", "sha256:", "sha256:../../etc/passwd", "md5:0123", "sha256:" + strings.Repeat("A", 64)} {
		if _, err := s.Get(bad); err == nil {
			t.Errorf("Get(%q) did not fail", bad)
		}
	}
}
