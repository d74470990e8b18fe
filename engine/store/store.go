package store

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// A Store is the state of one project under one state root. It is safe for
// concurrent use.
type Store struct {
	root       string
	projectID  string
	projectDir string
	runsDir    string
	savedDir   string
	// legacyDir is a project directory under the id earlier versions
	// used that could not be moved (see migrateLegacy), if any.
	legacyDir string

	// snapshotLocks serialize WriteSnapshot per run (striped, so the set
	// does not grow with the number of runs).
	seed          maphash.Seed
	snapshotLocks [32]sync.Mutex

	// written remembers the snapshot files this Store wrote, so that
	// WriteSnapshot can trust them without reading them back.
	writtenMu sync.Mutex
	written   map[string]os.FileInfo

	hooks hooks
}

// hooks let tests stop WriteSnapshot between steps, as a crash would.
type hooks struct {
	afterStep func(step string) error
}

// Paths are the files of one run.
type Paths struct {
	Snapshot string // <run>.json
	Backup   string // <run>.json.bak
	Lock     string // <run>.lock
	Journal  string // <run>.jsonl
}

// Open opens the project of working directory cwd under root, creating its
// directories with mode 0700 and tightening existing ones, along with the
// run files, to 0700 and 0600. An empty root means DefaultRoot. A state
// directory that is a symlink or belongs to another user is refused with an
// error matching ErrUnsafeState.
func Open(root, cwd string) (*Store, error) {
	if root == "" {
		var err error
		if root, err = DefaultRoot(); err != nil {
			return nil, err
		}
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("opening state root %s: %w", root, err)
	}
	id := ProjectID(cwd)
	// The root's parents are the user's (~/.pi, say); from the root down,
	// every directory must be ours (see ensureDir).
	if err := os.MkdirAll(filepath.Dir(root), dirMode); err != nil {
		return nil, fmt.Errorf("opening state directory: %w", err)
	}
	for _, dir := range []string{root, filepath.Join(root, "projects")} {
		if _, err := ensureDir(dir); err != nil {
			return nil, fmt.Errorf("opening state directory: %w", err)
		}
	}
	left, err := migrateLegacy(root, legacyProjectID(cwd), id)
	if err != nil && !readOnly(err) {
		return nil, err
	}
	s := &Store{
		legacyDir:  left,
		root:       root,
		projectID:  id,
		projectDir: filepath.Join(root, "projects", id),
		seed:       maphash.MakeSeed(),
		written:    map[string]os.FileInfo{},
	}
	s.runsDir = filepath.Join(s.projectDir, "runs")
	s.savedDir = filepath.Join(s.projectDir, "saved")
	for _, dir := range []string{root, filepath.Join(root, "projects"), s.projectDir, s.runsDir, s.savedDir} {
		tightened, err := ensureDir(dir)
		if err != nil {
			return nil, fmt.Errorf("opening state directory: %w", err)
		}
		// Behind a 0700 directory a file's own mode hides nothing more, and
		// every file this package writes is 0600: only a directory found
		// loose can hold loose files. Checking them all on every command
		// cost start-up a stat per file.
		if tightened && (dir == s.projectDir || dir == s.runsDir) {
			if err := tightenFiles(dir); err != nil && !readOnly(err) {
				return nil, fmt.Errorf("opening state directory: %w", err)
			}
		}
	}
	if err := s.addNodeViews(); err != nil && !readOnly(err) {
		return nil, fmt.Errorf("opening state directory: %w", err)
	}
	return s, nil
}

// readOnly reports an error of a write the state directory does not allow
// (a read-only file system, or no write permission). Open's housekeeping
// (moving an old project directory, tightening modes, adding the Node
// runtime's view to old snapshots) is left for a later Open then: list and
// show must still work on a state directory that can only be read, to
// inspect a run that paused because its state could no longer be written.
func readOnly(err error) bool {
	return errors.Is(err, unix.EROFS) || errors.Is(err, fs.ErrPermission)
}

// LegacyDir names the project's directory under the id earlier versions
// of dynworkflow computed when Open could not move it where both runtimes
// look (a process was still working in it, or a file of the same name was
// already there); it is empty otherwise.
func (s *Store) LegacyDir() string { return s.legacyDir }

// Root returns the state root.
func (s *Store) Root() string { return s.root }

// ProjectID returns the id of the store's project.
func (s *Store) ProjectID() string { return s.projectID }

// ProjectDir returns <root>/projects/<project-id>.
func (s *Store) ProjectDir() string { return s.projectDir }

// RunsDir returns the directory holding the project's run files.
func (s *Store) RunsDir() string { return s.runsDir }

// SavedDir returns the project's saved-workflow directory.
func (s *Store) SavedDir() string { return s.savedDir }

// SavedDirs returns where saved workflows are looked up, first match
// winning: the project's own, then the root's, shared by every project. The
// second may not exist.
func (s *Store) SavedDirs() []string { return SavedDirs(s.root, s.projectID) }

// SavedDirs is Store.SavedDirs for the project with the given id under
// root, without opening (and so creating) the state.
func SavedDirs(root, projectID string) []string {
	return []string{filepath.Join(root, "projects", projectID, "saved"), filepath.Join(root, "saved")}
}

// WorktreesDir returns the directory holding the git worktrees of run
// runID's isolated calls, created when the first one is. For an invalid id
// it is empty, like RunPaths.
func (s *Store) WorktreesDir(runID string) string {
	if ValidRunID(runID) != nil {
		return ""
	}
	return filepath.Join(s.projectDir, "worktrees", runID)
}

// WorkerWorktreesDir is where a Temporal worker whose state root is root
// makes the worktrees of run runID's isolated calls in the project with id
// projectID: apart from WorktreesDir, which the local engine's recovery
// and clean-up own, and which must never take a worktree an agent on a
// worker is using for a deleted run's. For an invalid id it is empty.
func WorkerWorktreesDir(root, projectID, runID string) string {
	if ValidRunID(runID) != nil {
		return ""
	}
	return filepath.Join(root, "projects", projectID, "worker-worktrees", runID)
}

// WorktreesRoot returns the directory holding every run's WorktreesDir.
func (s *Store) WorktreesRoot() string { return filepath.Join(s.projectDir, "worktrees") }

// RuntimePath returns the file describing the project's live runtime.
func (s *Store) RuntimePath() string { return RuntimePath(s.root, s.projectID) }

// RuntimePath is where the live runtime of the project with the given id
// describes itself under root. It needs no open Store, so a client can look
// for a live runtime without creating the state directories.
func RuntimePath(root, projectID string) string {
	return filepath.Join(root, "projects", projectID, "runtime.json")
}

// RunPaths returns the files of run runID. Check the id with ValidRunID
// first: for an invalid id every path is empty, which no file operation
// accepts, so that a bad id can never reach outside the runs directory.
func (s *Store) RunPaths(runID string) Paths {
	p, _ := s.runPaths(runID)
	return p
}

// runPaths is RunPaths for the methods that report a bad id.
func (s *Store) runPaths(runID string) (Paths, error) {
	if err := ValidRunID(runID); err != nil {
		return Paths{}, err
	}
	base := filepath.Join(s.runsDir, runID)
	return Paths{
		Snapshot: base + ".json",
		Backup:   base + ".json.bak",
		Lock:     base + ".lock",
		Journal:  base + ".jsonl",
	}, nil
}

func (s *Store) snapshotLock(runID string) *sync.Mutex {
	return &s.snapshotLocks[maphash.String(s.seed, runID)%uint64(len(s.snapshotLocks))]
}

func (s *Store) step(name string) error {
	if s.hooks.afterStep != nil {
		return s.hooks.afterStep(name)
	}
	return nil
}
