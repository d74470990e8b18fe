package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// A project whose slug changed with the Node-compatible id ("My_Proj.v2"
// was my-proj-v2-… and is my_proj.v2-…) keeps its runs after an upgrade.
func TestOpenMovesTheLegacyProjectDirectory(t *testing.T) {
	const cwd = "/work/My_Proj.v2"
	legacy, id := legacyProjectID(cwd), ProjectID(cwd)
	if legacy == id {
		t.Fatalf("the test needs a name whose slug changed, got %s for both", id)
	}
	cases := []struct {
		name string
		// setup prepares root; it returns a function that undoes whatever
		// keeps the directory in use.
		setup     func(t *testing.T, root string) func()
		wantMoved bool
	}{
		{"only the legacy directory", func(t *testing.T, root string) func() { return func() {} }, true},
		{"both directories, the new one written by the Node runtime", func(t *testing.T, root string) func() {
			write(t, filepath.Join(root, "projects", id, "runs", "node-run.json"), `{"runId":"node-run"}`)
			return func() {}
		}, true},
		{"a run of the legacy directory still leased", func(t *testing.T, root string) func() {
			lock := filepath.Join(root, "projects", legacy, "runs", "r1.lock")
			write(t, lock, "")
			f, err := os.Open(lock)
			if err != nil {
				t.Fatal(err)
			}
			if held(lock) {
				t.Fatal("lock held before locking")
			}
			lockFile(t, f)
			return func() { f.Close() }
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			old := filepath.Join(root, "projects", legacy)
			write(t, filepath.Join(old, "runs", "r1.jsonl"), "journal\n")
			write(t, filepath.Join(old, "runs", "r1.json"), `{"summary":{"runId":"r1"}}`)
			write(t, filepath.Join(old, "saved", "mine.workflow.js"), "saved")
			release := tc.setup(t, root)
			s, err := Open(root, cwd)
			release()
			if err != nil {
				t.Fatal(err)
			}
			moved := fileExists(filepath.Join(s.RunsDir(), "r1.jsonl"))
			if moved != tc.wantMoved {
				t.Fatalf("journal moved = %v, want %v", moved, tc.wantMoved)
			}
			if !tc.wantMoved {
				if s.LegacyDir() != old {
					t.Errorf("LegacyDir = %q, want %q", s.LegacyDir(), old)
				}
				if !fileExists(filepath.Join(old, "runs", "r1.jsonl")) {
					t.Error("the journal of a leased run is gone from the legacy directory")
				}
				// Once nothing holds it, the next Open moves it.
				if s, err = Open(root, cwd); err != nil || !fileExists(filepath.Join(s.RunsDir(), "r1.jsonl")) {
					t.Fatalf("second Open did not move the legacy directory (err %v)", err)
				}
			}
			if s.LegacyDir() != "" {
				t.Errorf("LegacyDir = %q after a complete move", s.LegacyDir())
			}
			if fileExists(old) {
				t.Errorf("the legacy directory %s is still there", old)
			}
			for _, p := range []string{
				filepath.Join(s.RunsDir(), "r1.json"),
				filepath.Join(s.SavedDir(), "mine.workflow.js"),
			} {
				if !fileExists(p) {
					t.Errorf("%s was not moved", p)
				}
			}
			if strings.HasPrefix(tc.name, "both") && !fileExists(filepath.Join(s.RunsDir(), "node-run.json")) {
				t.Error("the Node runtime's run was lost")
			}
		})
	}
}

func TestOpenKeepsALegacyFileThatWouldReplaceAnother(t *testing.T) {
	const cwd = "/work/a_b"
	root := t.TempDir()
	old := filepath.Join(root, "projects", legacyProjectID(cwd))
	write(t, filepath.Join(old, "runs", "same.json"), "old")
	write(t, filepath.Join(root, "projects", ProjectID(cwd), "runs", "same.json"), "new")
	s, err := Open(root, cwd)
	if err != nil {
		t.Fatal(err)
	}
	if s.LegacyDir() != old {
		t.Errorf("LegacyDir = %q, want %q", s.LegacyDir(), old)
	}
	for path, want := range map[string]string{
		filepath.Join(old, "runs", "same.json"): "old",
		filepath.Join(s.RunsDir(), "same.json"): "new",
	} {
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func lockFile(t *testing.T, f *os.File) {
	t.Helper()
	if busy, err := fsx.Flock(f, unix.LOCK_EX); err != nil || busy {
		t.Fatalf("flock: busy %v, %v", busy, err)
	}
}
