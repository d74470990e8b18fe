package proc

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
)

// readBuffers are the buffers children's output is read into. os/exec
// copies a pipe into a writer with a fresh 32 KiB buffer per stream per
// child unless the writer reads for itself (io.ReaderFrom): with two
// streams a call, a 1,000-call run churned through 64 MB of buffers, and
// the heap grew to match. Pooled, they are as many as the calls running.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

// readFrom reads r to its end into a pooled buffer, handing each read to
// write.
func readFrom(r io.Reader, write func([]byte)) (int64, error) {
	bp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bp)
	var n int64
	for {
		k, err := r.Read(*bp)
		if k > 0 {
			n += int64(k)
			write((*bp)[:k])
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// lineWriter splits a child's standard output into lines and hands each
// complete line to onLine as soon as it arrives. Lines are split on '\n'
// only (Pi warns that splitting on U+2028 breaks its records).
type lineWriter struct {
	onLine func([]byte)
	mu     sync.Mutex
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			return n, nil
		}
		if len(w.buf) > 0 {
			w.buf = append(w.buf, p[:i]...)
			w.emit(w.buf)
			w.buf = w.buf[:0]
		} else {
			w.emit(p[:i])
		}
		p = p[i+1:]
	}
}

// ReadFrom reads the child's output with a pooled buffer (see readBuffers).
func (w *lineWriter) ReadFrom(r io.Reader) (int64, error) {
	return readFrom(r, func(p []byte) { _, _ = w.Write(p) })
}

// flush hands over a last line that had no newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = nil
	}
}

func (w *lineWriter) emit(line []byte) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) > 0 && w.onLine != nil {
		w.onLine(line)
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// ReadFrom reads the child's output with a pooled buffer (see readBuffers).
func (t *tailBuffer) ReadFrom(r io.Reader) (int64, error) {
	return readFrom(r, func(p []byte) { _, _ = t.Write(p) })
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
