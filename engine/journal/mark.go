package journal

import (
	"bytes"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// A Mark identifies the state of a journal cheaply: its size, and the
// checksums of its first and last records. A reader that kept the Mark of a
// journal (a run's snapshot does) can tell with a stat and two small reads
// whether the journal is still the one it saw: grown, cut, replaced, or
// with a damaged first or last record (a run's header, how it ended), it
// has another Mark.
type Mark struct {
	Size int64
	// Head and Tail are the seals of the first and last records, eight hex
	// digits each; "" when the journal is empty or the line is unsealed,
	// torn or damaged.
	Head, Tail string
}

// ReadMark returns the Mark of the journal at path. A missing journal is
// an error matching fs.ErrNotExist.
func ReadMark(path string) (Mark, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return Mark{}, err
	}
	defer f.Close()
	m, err := markOf(f)
	if err != nil {
		return Mark{}, fmt.Errorf("reading journal %s: %w", path, err)
	}
	return m, nil
}

// markOf reads the Mark of f: a stat and, for records of usual sizes, one
// read at each end.
func markOf(f *os.File) (Mark, error) {
	fi, err := f.Stat()
	if err != nil {
		return Mark{}, err
	}
	m := Mark{Size: fi.Size()}
	if m.Size < 2 {
		return m, nil
	}
	last, err := lastLine(f, m.Size)
	if err != nil || last == nil {
		return m, err
	}
	m.Tail = sealHex(last)
	if int64(len(last))+1 == m.Size {
		m.Head = m.Tail
		return m, nil
	}
	first, err := firstLine(f, m.Size)
	if err != nil {
		return m, err
	}
	m.Head = sealHex(first)
	return m, nil
}

// markChunk is how much markOf reads at a time from each end.
const markChunk = 4 << 10

// lastLine reads the complete last line of a file of size bytes, without
// its newline; nil when the file does not end with one. It looks for the
// line's start first and then reads the line once: gathering it chunk by
// chunk, each in front of the last, copied the line once per chunk, and a
// run whose result was a 20 MB string made every list take 18 s.
func lastLine(f *os.File, size int64) ([]byte, error) {
	var end [1]byte
	if _, err := f.ReadAt(end[:], size-1); err != nil {
		return nil, err
	}
	if end[0] != '\n' {
		return nil, nil
	}
	nl, err := lastNewline(f, size-1)
	if err != nil {
		return nil, err
	}
	line := make([]byte, size-1-(nl+1))
	if _, err := f.ReadAt(line, nl+1); err != nil {
		return nil, err
	}
	return line, nil
}

// firstLine reads the line that starts a file of size bytes, without its
// newline.
func firstLine(f *os.File, size int64) ([]byte, error) {
	var line []byte
	for off := int64(0); off < size; {
		chunk := make([]byte, min(size-off, markChunk))
		n, err := f.ReadAt(chunk, off)
		if i := bytes.IndexByte(chunk[:n], '\n'); i >= 0 {
			return append(line, chunk[:i]...), nil
		}
		if err != nil {
			return nil, err
		}
		line = append(line, chunk[:n]...)
		off += int64(n)
	}
	return line, nil
}

// sealHex is the seal of a good sealed line, or "".
func sealHex(line []byte) string {
	if checkLine(line) != lineSealed {
		return ""
	}
	return string(line[len(line)-10 : len(line)-2])
}

// hexOf is how a Mark writes the checksum sum of a record.
func hexOf(sum uint32) string {
	s := seal(sum)
	return string(bytes.TrimSuffix(s[len(sealPrefix):], []byte(`"}`)))
}

// Mark returns the journal's Mark as of the last write: what ReadMark
// would return once every record written so far is on disk.
func (w *Writer) Mark() Mark {
	w.markMu.Lock()
	defer w.markMu.Unlock()
	return w.mark
}
