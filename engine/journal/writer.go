package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// A Writer appends records to one journal file. It is safe for concurrent
// use. It holds an exclusive flock on the file while open, so a second
// Writer on the same journal fails with ErrBusy instead of interleaving.
type Writer struct {
	path     string
	file     *os.File
	opts     Options
	repaired Repair

	mu      sync.Mutex
	pending *batch // the batch records are currently added to
	closed  bool
	broken  error // sticky: set by the first failed write, sync or fence
	// inflight is the batch the commit loop took last.
	inflight *batch
	// undone says that the write that broke the Writer was undone: the
	// file was cut back to its last whole record, so that one last record
	// (see AppendLast) can still be tried.
	undone bool

	urgent chan struct{} // a pending record waits for durability
	lazy   chan struct{} // a pending record may wait for the flush interval
	quit   chan struct{}
	exited chan struct{}

	// Owned by the commit loop.
	spare *bytes.Buffer
	dirty bool // written since the last sync
	// reservedTo is the end of the room kept allocated past the file's
	// end (see keepRoom); -1 where the file system cannot keep any.
	reservedTo int64

	records, batches, fsyncs, bytesWritten atomic.Int64

	markMu sync.Mutex
	mark   Mark // as of the last write
}

// A batch is the set of records that go out in one write. Waiters hold on
// to it until done is closed, after which err is their result.
type batch struct {
	buf               *bytes.Buffer
	records           int
	durable           bool   // someone waits for the batch to be synced
	last              bool   // it holds a record of AppendLast
	firstSum, lastSum uint32 // checksums of the first and last records
	done              chan struct{}
	err               error
	// written is closed once the batch is written, before its sync;
	// writeErr is then the outcome of the write.
	written  chan struct{}
	writeErr error
	// then holds the callbacks of AppendThen, run once the batch is
	// written and synced (or failed).
	then []func(error)
}

// Open opens the journal at path for appending, creating it with mode 0600
// (and tightening an existing file to 0600). Before it returns, a torn tail
// left by a crash has been moved aside; OpenRepair reports it. At most one
// Options may be given; none means the defaults.
func Open(path string, opts ...Options) (*Writer, error) {
	var o Options
	switch len(opts) {
	case 0:
	case 1:
		o = opts[0]
	default:
		return nil, fmt.Errorf("journal.Open: %d Options given, want at most one", len(opts))
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = DefaultFlushInterval
	}
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{
		path:   path,
		file:   f,
		opts:   o,
		urgent: make(chan struct{}, 1),
		lazy:   make(chan struct{}, 1),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
		spare:  new(bytes.Buffer),
	}
	if w.repaired, err = repairTail(f, path); err != nil {
		f.Close()
		return nil, err
	}
	if w.mark, err = markOf(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("reading journal %s: %w", path, err)
	}
	w.pending = w.newBatch()
	w.keepRoom()
	go w.commitLoop()
	return w, nil
}

// The journal keeps room on the disk for its last record. Past its end it
// keeps roomSize bytes allocated (fallocate with KEEP_SIZE: the file does
// not grow), topped up as records fill it; when the disk has no room left
// to top it up, the Writer takes no more records while at least roomLow
// bytes remain, and AppendLast can still write how the run ended. Without
// it, a run that filled the disk to the last byte could not say why it
// paused, and list showed it as left by a process that exited.
const (
	roomSize = 64 << 10
	roomLow  = 16 << 10
)

// keepRoom tops up the room past the journal's end. Called by Open and by
// the commit loop.
func (w *Writer) keepRoom() {
	size := w.Mark().Size
	if w.reservedTo < 0 || w.reservedTo-size >= roomLow {
		return
	}
	keep := reserve
	if w.opts.hooks.reserve != nil {
		keep = w.opts.hooks.reserve
	}
	switch err := keep(w.file, size, roomSize); {
	case err == nil:
		w.reservedTo = size + roomSize
	case errors.Is(err, unix.ENOSPC) && w.reservedTo > 0:
		w.mu.Lock()
		w.undone = true // the room left is the last record's
		w.mu.Unlock()
		_ = w.breakWith(fmt.Errorf("writing journal %s: %w: the disk's last room is kept for the journal's last record", w.path, err))
	case errors.Is(err, unix.ENOSPC):
		// Opened on a full disk: nothing in reserve; writes will say.
	default:
		w.reservedTo = -1 // not supported by this file system
	}
}

// Create makes a new journal at path whose first record is first, and opens
// it. The journal appears whole or not at all: first is written to a side
// file, synced, and then linked into place, so that a crash at any moment
// leaves either no journal or one that begins with first, never an empty
// one. It fails with an error matching fs.ErrExist if path exists.
func Create(path string, first []byte, opts ...Options) (*Writer, error) {
	if err := checkRecord(first); err != nil {
		return nil, err
	}
	tmp := path + ".new"
	err := writeNew(tmp, append(appendSealed(nil, first), '\n'))
	if err == nil {
		// A link, unlike a rename, never replaces an existing journal.
		err = os.Link(tmp, path)
	}
	if rerr := os.Remove(tmp); err == nil && rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = rerr
	}
	if err == nil {
		err = fsx.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		return nil, fmt.Errorf("creating journal %s: %w", path, err)
	}
	return Open(path, opts...)
}

// writeNew writes data to a new file at path with mode 0600 and syncs it.
// A leftover file of that name from a crash is replaced.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		if err := os.Remove(path); err != nil {
			return err
		}
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// openFile opens or creates the journal and takes its lock.
func openFile(path string) (*os.File, error) {
	created := true
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		created = false
		f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND|unix.O_NOFOLLOW, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("opening journal: %w", err)
	}
	busy, err := fsx.Flock(f, unix.LOCK_EX)
	if err == nil && busy {
		err = fmt.Errorf("%w: %s", ErrBusy, path)
	}
	if err == nil {
		err = tighten(f)
	}
	if err == nil && created {
		// Without this the new name, and so every record, could vanish
		// in a crash even after the records were synced.
		err = fsx.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening journal %s: %w", path, err)
	}
	return f, nil
}

func tighten(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != 0o600 {
		return f.Chmod(0o600)
	}
	return nil
}

// Path returns the journal's file name.
func (w *Writer) Path() string { return w.path }

// OpenRepair reports the torn tail Open moved aside, if any.
func (w *Writer) OpenRepair() Repair { return w.repaired }

// Append queues rec without waiting. It becomes durable with the next
// synced batch, at Flush or Close, or at the latest by the background flush
// one flush interval later. An error in writing it is reported by later
// calls, since the Writer breaks.
func (w *Writer) Append(rec []byte) error {
	_, err := w.enqueue(rec, queueOpts{})
	return err
}

// WaitWritten waits for the write the journal is making, if any (not for
// its sync: only until the file system took the batch or refused it), and
// returns why the Writer takes no more records, or nil. A caller about to
// do something costly (start an agent) learns so whether the file system
// took the journal's latest write, for the price of a wait for a write
// that goes out anyway, and which is done long before its sync. Nothing
// is written for it.
func (w *Writer) WaitWritten(ctx context.Context) error {
	w.mu.Lock()
	b := w.inflight
	w.mu.Unlock()
	if b != nil {
		select {
		case <-b.written:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return w.Err()
}

// AppendLast is AppendSync for the last record a Writer gets (how a run
// ended): it is tried even after a write failed, as long as that write
// could be undone. On a full disk, undoing the write that did not fit
// frees its space, and a short last record may fit where it did not. A
// Writer broken by a failed sync or by its Fence takes nothing more.
func (w *Writer) AppendLast(ctx context.Context, rec []byte) error {
	b, err := w.enqueue(rec, queueOpts{durable: true, last: true})
	if err != nil {
		return err
	}
	return w.wait(ctx, b)
}

// Err reports why the Writer takes no more records, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refuse()
}

// AppendSync queues rec and waits until it has been written and synced.
// Records appended concurrently share one write and one sync.
//
// If ctx is done first, AppendSync returns ctx.Err(), but the record stays
// queued and may still become durable.
func (w *Writer) AppendSync(ctx context.Context, rec []byte) error {
	b, err := w.enqueue(rec, queueOpts{durable: true})
	if err != nil {
		return err
	}
	return w.wait(ctx, b)
}

// AppendThen queues rec like AppendSync but returns at once: then is called
// with the outcome once the record is on disk, or could not get there. It
// runs on the journal's own goroutine, so it must not block; it is how a
// caller that must not wait for an fsync (a worker with the next call to
// start) still learns that its record is durable.
func (w *Writer) AppendThen(rec []byte, then func(error)) {
	if _, err := w.enqueue(rec, queueOpts{durable: true, then: then}); err != nil {
		then(err)
	}
}

// Flush waits until every record appended so far is durable.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	if err := w.refuse(); err != nil {
		w.mu.Unlock()
		return err
	}
	b := w.pending
	kick := !b.durable
	b.durable = true
	w.mu.Unlock()
	if kick {
		signal(w.urgent)
	}
	return w.wait(ctx, b)
}

// Close makes every appended record durable and closes the file, releasing
// its lock. Later appends fail with ErrClosed, as does a second Close.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return fmt.Errorf("journal %s: %w", w.path, ErrClosed)
	}
	w.closed = true
	b := w.pending
	b.durable = true
	w.mu.Unlock()

	close(w.quit)
	<-w.exited // the commit loop commits b on its way out
	if size := w.Mark().Size; w.reservedTo > size {
		_ = unreserve(w.file, size, w.reservedTo-size) // a closed journal keeps no room
	}
	err := b.err
	if cerr := w.file.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("closing journal %s: %w", w.path, cerr))
	}
	return err
}

// queueOpts say how a record is queued: durable waits for a sync, last is
// AppendLast's, then is AppendThen's callback.
type queueOpts struct {
	durable, last bool
	then          func(error)
}

func (w *Writer) enqueue(rec []byte, o queueOpts) (*batch, error) {
	durable, then := o.durable, o.then
	if err := checkRecord(rec); err != nil {
		return nil, err
	}
	sum := crc32.Checksum(rec, crcTable)
	sealed := seal(sum)
	w.mu.Lock()
	if err := w.refuse(); err != nil && !(o.last && w.undone && !w.closed) {
		w.mu.Unlock()
		return nil, err
	}
	b := w.pending
	first := b.records == 0
	b.buf.Write(rec[:len(rec)-1])
	b.buf.Write(sealed[:])
	b.buf.WriteByte('\n')
	if b.records == 0 {
		b.firstSum = sum
	}
	b.records++
	b.lastSum = sum
	if then != nil {
		b.then = append(b.then, then)
	}
	// Only the first record that needs a sync has to wake the commit
	// loop; the others ride along in the same batch.
	kick := durable && !b.durable
	if durable {
		b.durable = true
	}
	if o.last {
		b.last = true
	}
	w.mu.Unlock()

	switch {
	case kick:
		signal(w.urgent)
	case first:
		signal(w.lazy)
	}
	if w.opts.hooks.queued != nil {
		w.opts.hooks.queued()
	}
	return b, nil
}

// refuse reports why nothing more can be appended. w.mu must be held.
func (w *Writer) refuse() error {
	if w.closed {
		return fmt.Errorf("journal %s: %w", w.path, ErrClosed)
	}
	return w.broken
}

func (w *Writer) wait(ctx context.Context, b *batch) error {
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkRecord guards the line framing: a record is one line holding a
// non-empty JSON object, whose closing brace the seal replaces. It does not
// re-parse the JSON, which would cost the hot path a second pass over every
// record its caller just encoded; the checksum proves on reading that a
// line is what the caller gave.
func checkRecord(rec []byte) error {
	switch {
	case len(rec) == 0:
		return fmt.Errorf("%w: empty", ErrBadRecord)
	case bytes.IndexByte(rec, '\n') >= 0:
		return fmt.Errorf("%w: contains a newline (indented JSON?)", ErrBadRecord)
	case rec[0] != '{' || rec[len(rec)-1] != '}' || len(rec) < len(`{"":0}`):
		return fmt.Errorf("%w: not a non-empty JSON object", ErrBadRecord)
	}
	return nil
}

// signal wakes the commit loop without blocking; one pending wake-up is
// enough because the loop takes everything pending when it wakes.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
