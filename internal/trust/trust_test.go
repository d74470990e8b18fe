package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestApprovalPinsContentAndProject(t *testing.T) {
	s := At(t.TempDir())
	project := t.TempDir()
	const file = ".dynworkflow/executors.json"
	content := []byte(`{"defaultExecutor": "codex"}`)
	check := func(project string, content []byte) error {
		return s.Check(project, file, content, "it names programs")
	}
	var na *NotAllowedError
	if err := check(project, content); !errors.As(err, &na) || na.Changed {
		t.Fatalf("before any approval: %v, want a new file not allowed", err)
	}
	if !strings.Contains(na.Error(), filepath.Join(project, file)) || !strings.Contains(na.Error(), "dynworkflow allow --cwd "+project) {
		t.Errorf("the message does not name the file and the command: %s", na)
	}
	if _, err := s.Allow(project, file, content); err != nil {
		t.Fatal(err)
	}
	if err := check(project, content); err != nil {
		t.Fatalf("after approval: %v", err)
	}
	if err := check(project, append(content, '\n')); !errors.As(err, &na) || !na.Changed {
		t.Errorf("one byte more: %v, want a changed file not allowed", err)
	}
	// The same content in another project (a second clone) is not approved.
	if err := check(t.TempDir(), content); !errors.As(err, &na) || na.Changed {
		t.Errorf("another project: %v, want not allowed", err)
	}
	// The project reached through a symbolic link is the same project.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	if err := check(link, content); err != nil {
		t.Errorf("through a symbolic link: %v", err)
	}
	list, err := s.List()
	if err != nil || len(list) != 1 || list[0].File != file || list[0].Matches() {
		t.Fatalf("List = %+v, %v; want the one approval, not matching a file that is not on disk", list, err)
	}
	if ok, err := s.Revoke(project, file); !ok || err != nil {
		t.Fatalf("Revoke = %v, %v", ok, err)
	}
	if err := check(project, content); !errors.As(err, &na) {
		t.Errorf("after Revoke: %v", err)
	}
}

// A store that cannot be read approves nothing.
func TestNoStoreAllowsNothing(t *testing.T) {
	var na *NotAllowedError
	if err := At("").Check(t.TempDir(), "x", nil, "it names programs"); !errors.As(err, &na) {
		t.Errorf("Check with no store: %v", err)
	}
	if _, err := At("").Allow(t.TempDir(), "x", nil); err == nil {
		t.Error("Allow with no store succeeded")
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"/srv/app": "/srv/app", "/a b": "'/a b'", "/it's": `'/it'\''s'`, "": "''", "/x;rm": "'/x;rm'"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
