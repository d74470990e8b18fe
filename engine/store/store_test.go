package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func openT(t testing.TB, root string) *Store {
	t.Helper()
	s, err := Open(root, "/work/My Project")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s has mode %#o, want %#o", path, got, want)
	}
}

func TestProjectID(t *testing.T) {
	// The ids the Node runtime (@fish59fish/dynamic-workflows 0.1.0,
	// workflowProjectKey) gives these directories; cmd/dynworkflow's
	// interop test asks the installed runtime for many more.
	for cwd, want := range map[string]string{
		"/work/My_Proj.v2":              "my_proj.v2-599323e8eacc",
		"/x/My Project!!":               "my-project-f914e867dd7c",
		"/x/İstanbul":                   "i-stanbul-c984cf17ccee",
		"/x/Kelvin\u212a":               "kelvink-3dfdd61d54a6",
		"/":                             "project-8a5edab28263",
		"/x/日本語":                        "project-c3d9c9feab79",
		"/x/--a--":                      "a-9d1adfefd443",
		"/x/a - b":                      "a---b-02fdb9447605",
		"/x/trailing/":                  "trailing-5551f8088967",
		"/x/.hidden":                    ".hidden-ec1df0d6968d",
		"/x/" + strings.Repeat("a", 60): strings.Repeat("a", 48) + "-6a28d150cfbe",
	} {
		if got := ProjectID(cwd); got != want {
			t.Errorf("ProjectID(%q) = %q, want %q (the Node runtime's)", cwd, got, want)
		}
	}
	sum := sha256.Sum256([]byte("/work/My Project!!"))
	if got, want := ProjectID("/work/My Project!!"), "my-project-"+hex.EncodeToString(sum[:])[:12]; got != want {
		t.Errorf("ProjectID = %q, want %q", got, want)
	}
	wd, _ := os.Getwd()
	if ProjectID(".") != ProjectID(wd) {
		t.Errorf("ProjectID of . and of the absolute working directory differ")
	}
	if ProjectID("/a/app") == ProjectID("/b/app") {
		t.Errorf("two directories called app share a project id")
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"My Project":              "my-project",
		"  --Hello,  World!--  ":  "hello-world",
		"日本語":                     "fallback",
		"":                        "fallback",
		"a_b.c":                   "a-b-c",
		strings.Repeat("ab ", 30): "ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-a", // cut at 40
	} {
		if got := Slug(in, "fallback"); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
		if got := Slug(in, "fallback"); len(got) > 40 {
			t.Errorf("Slug(%q) is %d bytes long", in, len(got))
		}
	}
}

func TestDefaultRoot(t *testing.T) {
	t.Setenv(HomeEnv, "/somewhere/else")
	if got, err := DefaultRoot(); err != nil || got != "/somewhere/else" {
		t.Errorf("DefaultRoot with %s set = %q, %v", HomeEnv, got, err)
	}
	home := t.TempDir()
	t.Setenv(HomeEnv, "")
	t.Setenv("HOME", home)
	if got, err := DefaultRoot(); err != nil || got != filepath.Join(home, ".pi", "workflows") {
		t.Errorf("DefaultRoot = %q, %v; want ~/.pi/workflows", got, err)
	}
}

func TestOpenLayoutAndModes(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state")
	id := ProjectID("/work/My Project")
	runs := filepath.Join(root, "projects", id, "runs")
	// A state directory left loose by someone else, with a loose file.
	if err := os.MkdirAll(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(runs, "old.json")
	if err := os.WriteFile(loose, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o755)

	s := openT(t, root)
	for _, dir := range []string{root, filepath.Join(root, "projects"), s.ProjectDir(), s.RunsDir(), s.SavedDir()} {
		checkMode(t, dir, 0o700)
	}
	checkMode(t, loose, 0o600)

	if s.ProjectDir() != filepath.Join(root, "projects", id) ||
		s.RunsDir() != runs ||
		s.RuntimePath() != filepath.Join(s.ProjectDir(), "runtime.json") {
		t.Errorf("unexpected layout: %s, %s, %s", s.ProjectDir(), s.RunsDir(), s.RuntimePath())
	}
	if dirs := s.SavedDirs(); len(dirs) != 2 || dirs[0] != filepath.Join(s.ProjectDir(), "saved") || dirs[1] != filepath.Join(root, "saved") {
		t.Errorf("SavedDirs = %q", dirs)
	}
	p := s.RunPaths("r1")
	base := filepath.Join(runs, "r1")
	if p != (Paths{Snapshot: base + ".json", Backup: base + ".json.bak", Lock: base + ".lock", Journal: base + ".jsonl"}) {
		t.Errorf("RunPaths = %+v", p)
	}
}

func TestValidRunID(t *testing.T) {
	for _, id := range []string{"a", "R", "run-1.2_3", "lrx1k2-abc123", strings.Repeat("a", 192), "a..b"} {
		if err := ValidRunID(id); err != nil {
			t.Errorf("ValidRunID(%q) = %v", id, err)
		}
	}
	bad := []string{"", ".", "..", "../x", "a/b", "a\\b", "/abs", ".hidden", "-dash", "a b", "a\x00b",
		"ü", strings.Repeat("a", 193), strings.Repeat("a", 200), "x\n"}
	for _, id := range bad {
		if err := ValidRunID(id); !errors.Is(err, ErrBadRunID) {
			t.Errorf("ValidRunID(%q) = %v, want ErrBadRunID", id, err)
		}
	}

	s := openT(t, t.TempDir())
	for _, id := range []string{"../x", "a/b", "", strings.Repeat("a", 200)} {
		if p := s.RunPaths(id); p != (Paths{}) {
			t.Errorf("RunPaths(%q) = %+v, want no paths", id, p)
		}
		err2 := s.WriteSnapshot(id, &Snapshot{})
		_, err3 := s.ReadSnapshot(id)
		_, err4 := s.AcquireLease(id, "test")
		_, _, err5 := s.LeaseHolder(id)
		err6 := s.DeleteRun(id)
		for i, err := range []error{err2, err3, err4, err5, err6} {
			if !errors.Is(err, ErrBadRunID) {
				t.Errorf("method %d with run id %q: %v, want ErrBadRunID", i+1, id, err)
			}
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(s.RunsDir())); len(entries) != 2 {
		t.Errorf("rejected ids created files: %v", entries)
	}
}

func TestNewRunID(t *testing.T) {
	shape := regexp.MustCompile(`^my-flow-[0-9a-z]+-[0-9a-z]{6}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := NewRunID("My Flow!")
		if !shape.MatchString(id) || ValidRunID(id) != nil {
			t.Fatalf("NewRunID = %q", id)
		}
		if seen[id] {
			t.Fatalf("NewRunID repeated %q", id)
		}
		seen[id] = true
	}
	if id := NewRunID(""); !strings.HasPrefix(id, "run-") {
		t.Errorf("NewRunID(\"\") = %q", id)
	}
	if id := NewRunID(strings.Repeat("x", 100)); ValidRunID(id) != nil || !strings.HasPrefix(id, strings.Repeat("x", 40)+"-") {
		t.Errorf("NewRunID(long) = %q", id)
	}
}

func TestSlugNeverEndsInDash(t *testing.T) {
	// 39 letters then a separator: the dash must not be written at 40.
	if got := Slug(strings.Repeat("a", 39)+" b", "x"); got != strings.Repeat("a", 39) {
		t.Errorf("slug = %q", got)
	}
}
