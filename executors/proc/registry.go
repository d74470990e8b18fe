package proc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// Registry records live children, one file per child, in a directory of
// the state root, so that a later process can reap the children of one
// that was killed.
//
// The file of a child that exited is kept, marked vacant, and the next
// child's entry is written over it: a process makes as many files as it
// ran children at once, not one per child. Creating and deleting a file
// per agent is not free: on ext4 without a journal, every new file scans
// past the inodes deleted in the last minutes, which made the entries a
// fifth of the runtime's CPU in a 1,000-agent run.
type Registry struct {
	dir string
	// self identifies our process to the entries we write.
	self identity
	log  *slog.Logger

	mu     sync.Mutex
	vacant []string // our files whose child exited, to write over
	files  int      // how many files we made
}

// identity names a process across pid reuse: its pid and its start time
// (clock ticks since boot, from /proc; zero where unknown).
type identity struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// entry is one registry file.
type entry struct {
	Child identity `json:"child"`
	// Pgid is the child's process group, led by the child; 0 in a vacant
	// entry, which names only its owner.
	Pgid      int       `json:"pgid"`
	Owner     identity  `json:"owner"`
	Name      string    `json:"name,omitempty"`
	StartedAt time.Time `json:"startedAt"`

	path string
}

// OpenRegistry opens (creating it, mode 0700) the registry in dir. Like
// every state directory, it must be a real directory of the user we run
// as: its entries tell Reap which process groups to kill.
func OpenRegistry(dir string, log *slog.Logger) (*Registry, error) {
	if _, err := fsx.PrivateDir(dir, "DYNAMIC_WORKFLOWS_HOME"); err != nil {
		return nil, fmt.Errorf("open the child registry: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pid := os.Getpid()
	start, _ := startTime(pid)
	return &Registry{dir: dir, self: identity{Pid: pid, Start: start}, log: log}, nil
}

// Dir is the registry's directory.
func (r *Registry) Dir() string { return r.dir }

// add records a child that just started. A nil registry records nothing.
func (r *Registry) add(pid int, name string) (*entry, error) {
	if r == nil {
		return nil, nil
	}
	// Without a start time (no /proc) Reap will not signal the group: a
	// missed orphan is better than a wrong kill.
	start, _ := startTime(pid)
	e := &entry{Child: identity{Pid: pid, Start: start}, Pgid: pid, Owner: r.self, Name: name, StartedAt: time.Now().UTC(),
		path: r.file()}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	// No fsync: the file matters only if we die, and a child that outlives
	// a machine crash is not a concern.
	if err := writeEntry(e.path, b); err != nil {
		return nil, fmt.Errorf("record child %d: %w", pid, err)
	}
	return e, nil
}

// file is the path of a vacant file of ours, or of a new one.
func (r *Registry) file() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.vacant); n > 0 {
		path := r.vacant[n-1]
		r.vacant = r.vacant[:n-1]
		return path
	}
	r.files++
	// The owner's start time keeps a later process that reuses our pid
	// from writing over the entries we left.
	name := fmt.Sprintf("%d-%d-%d.json", r.self.Pid, r.self.Start, r.files)
	return filepath.Join(r.dir, name)
}

// remove forgets a child that exited: its file is marked vacant for the
// next child, or removed if that fails.
func (r *Registry) remove(e *entry) {
	if r == nil || e == nil {
		return
	}
	b, err := json.Marshal(entry{Owner: r.self})
	if err == nil {
		err = writeEntry(e.path, b)
	}
	if err == nil {
		r.mu.Lock()
		r.vacant = append(r.vacant, e.path)
		r.mu.Unlock()
		return
	}
	if err := os.Remove(e.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.log.Warn("cannot remove a child's registry entry", "path", e.path, "err", err)
	}
}

// Groups lists the process groups of the children recorded now.
func (r *Registry) Groups() []int {
	names, _ := os.ReadDir(r.dir)
	var groups []int
	for _, de := range names {
		b, err := readEntry(filepath.Join(r.dir, de.Name()))
		if err != nil {
			continue
		}
		var e entry
		if json.Unmarshal(b, &e) == nil && e.Pgid > 0 {
			groups = append(groups, e.Pgid)
		}
	}
	return groups
}

// writeEntry writes a registry file, never through a symlink.
func writeEntry(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// errNotOurs is the error of a registry entry that another user wrote, or
// that is not a regular file: it is never acted on.
var errNotOurs = errors.New("not a file of ours")

// readEntry reads a registry file that we wrote: a regular file (never a
// symlink) owned by the user we run as.
func readEntry(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fsx.Ours(fi) {
		return nil, errNotOurs
	}
	return io.ReadAll(io.LimitReader(f, 64<<10))
}

// GroupAlive reports whether any process is still in group pgid.
func GroupAlive(pgid int) bool {
	return alive(-pgid)
}

// Orphan is a child that Reap found without a live owner.
type Orphan struct {
	Pid, Pgid int
	Name      string
	// Killed is false when the child was already gone.
	Killed bool
}

// Reap kills the process groups of children whose owner is dead and
// removes their entries. Entries of live owners (other dynworkflow
// processes, or us) are left alone. It returns what it found.
func (r *Registry) Reap(ctx context.Context) ([]Orphan, error) {
	names, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("read the child registry: %w", err)
	}
	var found []Orphan
	for _, de := range names {
		if err := ctx.Err(); err != nil {
			return found, err
		}
		if !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		path := filepath.Join(r.dir, de.Name())
		b, err := readEntry(path)
		if errors.Is(err, errNotOurs) || errors.Is(err, unix.ELOOP) {
			r.log.Warn("ignoring a child registry entry that is not ours", "path", path)
			continue
		}
		if err != nil {
			continue // removed by its owner meanwhile
		}
		var e entry
		if json.Unmarshal(b, &e) != nil || e.Pgid < 0 {
			r.log.Warn("removing an unreadable child registry entry", "path", path)
			_ = os.Remove(path)
			continue
		}
		if same(e.Owner) {
			continue
		}
		if e.Pgid == 0 {
			// A vacant file of a process that has exited.
			_ = os.Remove(path)
			continue
		}
		o := Orphan{Pid: e.Child.Pid, Pgid: e.Pgid, Name: e.Name}
		if ours(e) {
			signalGroup(e.Pgid, syscall.SIGKILL)
			o.Killed = true
			r.log.Info("reaped an orphaned agent process", "pid", o.Pid, "name", o.Name)
		}
		found = append(found, o)
		_ = os.Remove(path)
	}
	return found, nil
}

// same reports whether id still names the same live process.
func same(id identity) bool {
	if id.Pid <= 0 || !alive(id.Pid) {
		return false
	}
	start, err := startTime(id.Pid)
	if err != nil {
		// Without /proc we cannot tell reuse apart; assume it is alive,
		// which errs on the side of not killing.
		return true
	}
	return id.Start == 0 || start == id.Start
}

// ours reports whether signalling the entry's group reaches the child's
// group and nothing else. If the group leader is alive it must be the same
// process. If it is dead, the group number can still be in use only by
// members of that same group: Linux does not hand out a pid that is a live
// group's id.
func ours(e entry) bool {
	if alive(e.Pgid) {
		start, err := startTime(e.Pgid)
		return err == nil && start == e.Child.Start
	}
	return groupHasMembers(e.Pgid)
}
