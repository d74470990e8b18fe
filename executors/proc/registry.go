package proc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// Registry records live children in a directory of the state root, so
// that a later process can reap the children of one that was killed.
//
// Each process that starts children keeps one file there, opened with its
// first child and held open: a record per child in a slot of fixed size,
// written in place with one pwrite when the child starts and blanked when
// it exits, for the next child to take. Files per child, created or
// rewritten, cost far more: on ext4 without a journal every new file scans
// past the inodes deleted in the last minutes, and a file truncated to
// nothing is written to disk when it is closed (lest a crash leave it
// empty); each made the registry a fifth of the runtime's CPU in a
// 1,000-agent run. Files of the older layout, one entry each (*.json), are
// still read and reaped.
type Registry struct {
	dir string
	// self identifies our process to the entries we write.
	self identity
	log  *slog.Logger

	mu    sync.Mutex
	file  *os.File // our file, opened with the first child
	free  []int    // blank slots
	slots int      // slots in the file
}

// slotSize is the size of a record in a registry file: an entry in JSON,
// padded with spaces, and a newline. A longer name is cut to fit.
const slotSize = 512

// childrenSuffix ends the name of a registry file; legacySuffix the name of
// a file of the older layout.
const (
	childrenSuffix = ".children"
	legacySuffix   = ".json"
)

// identity names a process across pid reuse: its pid and its start time
// (clock ticks since boot, as /proc says; zero where unknown). A child's
// start time is not read from /proc, which costs more than a registry
// write, but bracketed: it was forked no earlier than Start and no later
// than StartMax. A pid is reused only long after its process ended, so no
// other process with that pid can have started inside the bracket.
type identity struct {
	Pid      int    `json:"pid"`
	Start    uint64 `json:"start"`
	StartMax uint64 `json:"startMax,omitempty"`
}

// startedAt reports whether a process that started at start (from /proc)
// can be the one id names.
func (id identity) startedAt(start uint64) bool {
	if id.StartMax == 0 {
		return start == id.Start
	}
	return id.Start <= start && start <= id.StartMax
}

// entry is one child's record.
type entry struct {
	Child identity `json:"child"`
	// Pgid is the child's process group, led by the child; 0 in a vacant
	// entry of the older layout, which names only its owner.
	Pgid      int       `json:"pgid"`
	Owner     identity  `json:"owner"`
	Name      string    `json:"name,omitempty"`
	StartedAt time.Time `json:"startedAt"`

	slot int
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

// Close closes our file, leaving it for the next Reap to remove once we
// have exited; the registry records nothing more.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.file == nil {
		return nil
	}
	err := r.file.Close()
	r.file = nil
	r.slots = -1 // never opened again
	return err
}

// add records a child that just started, forked between the clock ticks
// since boot before and after (see identity). A nil registry records
// nothing.
func (r *Registry) add(pid int, name string, before, after uint64) (*entry, error) {
	if r == nil {
		return nil, nil
	}
	// Without a start time (no /proc) Reap will not signal the group: a
	// missed orphan is better than a wrong kill.
	child := identity{Pid: pid}
	if before > 0 {
		child.Start, child.StartMax = before, max(after, before)
	}
	e := &entry{Child: child, Pgid: pid, Owner: r.self, Name: name, StartedAt: time.Now().UTC()}
	b, err := json.Marshal(e)
	for err == nil && len(b) > slotSize-1 && e.Name != "" {
		// Only the name can be long: cut it, on a rune boundary.
		keep := max(0, len(e.Name)-(len(b)-(slotSize-1))-8)
		e.Name = strings.ToValidUTF8(e.Name[:keep], "") + "…"
		if keep == 0 {
			e.Name = ""
		}
		b, err = json.Marshal(e)
	}
	if err != nil {
		return nil, fmt.Errorf("record child %d: %w", pid, err)
	}
	f, slot, err := r.take()
	if err != nil {
		return nil, fmt.Errorf("record child %d: %w", pid, err)
	}
	e.slot = slot
	// No fsync: the file matters only if we die, and a child that outlives
	// a machine crash is not a concern.
	if err := writeSlot(f, slot, b); err != nil {
		r.give(slot)
		return nil, fmt.Errorf("record child %d: %w", pid, err)
	}
	return e, nil
}

// take opens our file if need be and takes a blank slot of it.
func (r *Registry) take() (*os.File, int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.file == nil {
		if r.slots < 0 {
			return nil, 0, errors.New("the registry is closed")
		}
		f, err := os.OpenFile(r.path(), os.O_RDWR|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, 0, err
		}
		r.file = f
	}
	if n := len(r.free); n > 0 {
		slot := r.free[n-1]
		r.free = r.free[:n-1]
		return r.file, slot, nil
	}
	r.slots++
	return r.file, r.slots - 1, nil
}

// path is our file's. The owner's start time in its name keeps a later
// process that reuses our pid from writing over the entries we left.
func (r *Registry) path() string {
	return filepath.Join(r.dir, fmt.Sprintf("%d-%d%s", r.self.Pid, r.self.Start, childrenSuffix))
}

// give puts a slot back for the next child.
func (r *Registry) give(slot int) {
	r.mu.Lock()
	r.free = append(r.free, slot)
	r.mu.Unlock()
}

// remove forgets a child that exited: its slot is blanked for the next
// child.
func (r *Registry) remove(e *entry) {
	if r == nil || e == nil {
		return
	}
	r.mu.Lock()
	f := r.file
	r.mu.Unlock()
	if f == nil {
		return // closed
	}
	if err := writeSlot(f, e.slot, nil); err != nil {
		// The slot keeps naming an exited child: its pid's start time
		// will not match, and Reap never signals it.
		r.log.Warn("cannot blank a child's registry entry", "path", f.Name(), "err", err)
		return
	}
	r.give(e.slot)
}

// writeSlot writes b, padded, in slot of f; nil b blanks it.
func writeSlot(f *os.File, slot int, b []byte) error {
	var rec [slotSize]byte
	n := copy(rec[:], b)
	for i := n; i < slotSize-1; i++ {
		rec[i] = ' '
	}
	rec[slotSize-1] = '\n'
	_, err := f.WriteAt(rec[:], int64(slot)*slotSize)
	return err
}

// Groups lists the process groups of the children recorded now.
func (r *Registry) Groups() []int {
	names, _ := os.ReadDir(r.dir)
	var groups []int
	for _, de := range names {
		entries, err := readEntries(filepath.Join(r.dir, de.Name()))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.Pgid > 0 {
				groups = append(groups, e.Pgid)
			}
		}
	}
	return groups
}

// errNotOurs is the error of a registry file that another user wrote, or
// that is not a regular file: it is never acted on.
var errNotOurs = errors.New("not a file of ours")

// errUnreadable is the error of a registry file that holds something else
// than entries.
var errUnreadable = errors.New("not a registry file")

// readEntries reads the entries of a registry file that we wrote: a
// regular file (never a symlink) owned by the user we run as, of either
// layout. Blank slots are left out.
func readEntries(path string) ([]entry, error) {
	legacy := strings.HasSuffix(path, legacySuffix)
	if !legacy && !strings.HasSuffix(path, childrenSuffix) {
		return nil, errUnreadable
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fsx.Ours(fi) || !fi.Mode().IsRegular() {
		return nil, errNotOurs
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil, err
	}
	var entries []entry
	if legacy {
		var e entry
		if json.Unmarshal(b, &e) != nil {
			return nil, errUnreadable
		}
		return append(entries, e), nil
	}
	for line := range bytes.Lines(b) {
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		var e entry
		if json.Unmarshal(line, &e) != nil || e.Pgid < 0 {
			return nil, errUnreadable
		}
		entries = append(entries, e)
	}
	return entries, nil
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
// removes their files. Files of live owners (other dynworkflow processes,
// or us) are left alone. It returns what it found.
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
		name := de.Name()
		if !strings.HasSuffix(name, childrenSuffix) && !strings.HasSuffix(name, legacySuffix) {
			continue
		}
		path := filepath.Join(r.dir, name)
		if owner, ok := ownerOf(name); ok && same(owner) {
			continue
		}
		entries, err := readEntries(path)
		switch {
		case errors.Is(err, errNotOurs) || errors.Is(err, unix.ELOOP):
			r.log.Warn("ignoring a child registry file that is not ours", "path", path)
			continue
		case errors.Is(err, errUnreadable):
			r.log.Warn("removing an unreadable child registry file", "path", path)
			_ = os.Remove(path)
			continue
		case err != nil:
			continue // removed by its owner meanwhile
		}
		if len(entries) > 0 && same(entries[0].Owner) {
			continue // a file of the older layout, of a live owner
		}
		for _, e := range entries {
			if e.Pgid == 0 {
				continue // a vacant file of the older layout
			}
			o := Orphan{Pid: e.Child.Pid, Pgid: e.Pgid, Name: e.Name}
			if ours(e) {
				signalGroup(e.Pgid, syscall.SIGKILL)
				o.Killed = true
				r.log.Info("reaped an orphaned agent process", "pid", o.Pid, "name", o.Name)
			}
			found = append(found, o)
		}
		_ = os.Remove(path)
	}
	return found, nil
}

// ownerOf reads the owner of a registry file from its name, PID-START.children.
func ownerOf(name string) (identity, bool) {
	base, ok := strings.CutSuffix(name, childrenSuffix)
	if !ok {
		return identity{}, false
	}
	p, st, _ := strings.Cut(base, "-")
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(st, 10, 64)
	return identity{Pid: pid, Start: start}, err1 == nil && err2 == nil
}

// same reports whether id still names the same live process (a zombie
// has ended).
func same(id identity) bool {
	if id.Pid <= 0 || !alive(id.Pid) || ended(id.Pid) {
		return false
	}
	start, err := startTime(id.Pid)
	if err != nil {
		// Without /proc we cannot tell reuse apart; assume it is alive,
		// which errs on the side of not killing.
		return true
	}
	return id.Start == 0 || id.startedAt(start)
}

// ours reports whether signalling the entry's group reaches the child's
// group and nothing else. If the group leader is alive it must be the same
// process. If it is dead, the group number can still be in use only by
// members of that same group: Linux does not hand out a pid that is a live
// group's id.
func ours(e entry) bool {
	if alive(e.Pgid) {
		start, err := startTime(e.Pgid)
		return err == nil && e.Child.startedAt(start)
	}
	return groupHasMembers(e.Pgid)
}
