package journal

import (
	"bytes"
	"fmt"
	"os"
	"time"
)

// maxSpare caps the buffer kept for reuse, so that one huge record does not
// pin its memory for the life of the Writer.
const maxSpare = 1 << 20

// commitLoop is the only goroutine that writes to the file. While it writes
// and syncs one batch, appends fill the next, which is how concurrent
// AppendSync calls come to share a sync.
func (w *Writer) commitLoop() {
	defer close(w.exited)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-w.urgent:
		case <-w.lazy:
			timer.Reset(w.opts.FlushInterval)
			continue
		case <-timer.C:
			// The interval bounds how long an Append may stay volatile,
			// so the background flush syncs too.
			w.mu.Lock()
			w.pending.durable = true
			w.mu.Unlock()
		case <-w.quit:
			timer.Stop()
			w.commit()
			return
		}
		w.commit()
	}
}

// commit takes the pending batch, writes it and wakes its waiters.
func (w *Writer) commit() {
	w.mu.Lock()
	b := w.pending
	if b.records == 0 && !b.durable {
		w.mu.Unlock()
		return
	}
	w.pending = w.newBatch()
	w.inflight = b
	broken := w.broken
	if b.last && w.undone {
		broken = nil // see AppendLast
	}
	w.mu.Unlock()

	b.err = broken
	if b.err == nil {
		b.err = w.write(b)
	} else {
		b.wrote(b.err)
	}
	close(b.done)
	for _, then := range b.then {
		then(b.err)
	}

	if b.buf.Cap() <= maxSpare {
		b.buf.Reset()
		w.spare = b.buf
	}
	b.buf = nil
}

// newBatch is called with w.mu held, by Open and by the commit loop.
func (w *Writer) newBatch() *batch {
	buf := w.spare
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	w.spare = nil
	return &batch{buf: buf, done: make(chan struct{}), written: make(chan struct{})}
}

// wrote ends the wait of AppendWritten for b, with the write's outcome.
func (b *batch) wrote(err error) {
	b.writeErr = err
	close(b.written)
}

func (w *Writer) write(b *batch) error {
	if b.records > 0 {
		if w.opts.Fence != nil {
			if err := w.opts.Fence(); err != nil {
				err = w.breakWith(fmt.Errorf("journal %s: %w: %w", w.path, ErrFenced, err))
				b.wrote(err)
				return err
			}
		}
		w.markMu.Lock()
		before := w.mark
		w.markMu.Unlock()
		write := (*os.File).Write
		if w.opts.hooks.write != nil {
			write = w.opts.hooks.write
		}
		n, err := write(w.file, b.buf.Bytes())
		w.bytesWritten.Add(int64(n))
		w.markMu.Lock()
		if w.mark.Size == 0 && n > 0 {
			w.mark.Head = hexOf(b.firstSum)
		}
		w.mark.Size += int64(n)
		if n == b.buf.Len() {
			w.mark.Tail = hexOf(b.lastSum)
		} else {
			w.mark.Tail = ""
		}
		w.markMu.Unlock()
		if n > 0 {
			w.dirty = true
		}
		if err != nil {
			// A partial write leaves a torn tail; appending after it would
			// bury it mid-file. It is cut off at once when the file system
			// lets us (on a full disk it does, and frees the space the
			// write took), else the next Open repairs it.
			err = fmt.Errorf("writing journal %s: %w", w.path, err)
			b.wrote(err)
			undone := n == 0 || w.file.Truncate(before.Size) == nil
			if undone {
				w.markMu.Lock()
				w.mark = before
				w.markMu.Unlock()
			}
			w.mu.Lock()
			w.undone = undone
			w.mu.Unlock()
			return w.breakWith(err)
		}
		w.records.Add(int64(b.records))
		w.batches.Add(1)
		w.keepRoom()
	}
	b.wrote(nil)
	if b.durable && w.dirty {
		if w.opts.hooks.beforeSync != nil {
			w.opts.hooks.beforeSync()
		}
		sync := datasync
		if w.opts.hooks.sync != nil {
			sync = w.opts.hooks.sync
		}
		began := time.Now()
		err := sync(w.file)
		if w.opts.ObserveSync != nil {
			w.opts.ObserveSync(time.Since(began))
		}
		if err != nil {
			// After a failed fsync the kernel may have dropped the dirty
			// pages; retrying could report success for lost data.
			w.mu.Lock()
			w.undone = false
			w.mu.Unlock()
			return w.breakWith(fmt.Errorf("syncing journal %s: %w", w.path, err))
		}
		w.dirty = false
		w.fsyncs.Add(1)
	}
	return nil
}

// breakWith makes err the answer to every later append.
func (w *Writer) breakWith(err error) error {
	w.mu.Lock()
	if w.broken == nil {
		w.broken = err
	}
	w.mu.Unlock()
	return err
}
