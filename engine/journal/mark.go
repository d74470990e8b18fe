package journal

import (
	"bytes"
	"fmt"
	"hash/crc32"
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
// small read at each end. A line of any size is read at most twice, in
// large chunks after the first, and never held whole: a run's result is in
// its last line and its args in its first, and `list` reads the Mark of
// every run. Reading the last line chunk by chunk, each in front of the
// last, copied it once per chunk: a 20 MB result made every list take 18 s.
func markOf(f *os.File) (Mark, error) {
	fi, err := f.Stat()
	if err != nil {
		return Mark{}, err
	}
	m := Mark{Size: fi.Size()}
	if m.Size < 2 {
		return m, nil
	}
	r := lineReader{f: f}
	var end [1]byte
	if _, err := f.ReadAt(end[:], m.Size-1); err != nil {
		return m, err
	}
	if end[0] != '\n' {
		return m, nil // a torn tail: no good last record
	}
	nl, err := r.lastNewline(m.Size - 1)
	if err != nil {
		return m, err
	}
	if m.Tail, err = r.seal(nl+1, m.Size-1); err != nil {
		return m, err
	}
	if nl < 0 {
		m.Head = m.Tail
		return m, nil
	}
	firstEnd, err := r.nextNewline(0, m.Size)
	if err != nil {
		return m, err
	}
	m.Head, err = r.seal(0, firstEnd)
	return m, err
}

// firstChunk is how much a lineReader reads first: a record of usual size
// is one read of it. list reads both ends of every run's journal, and a
// first read of markChunk copied and cleared 128 KB per run for lines of
// a few hundred bytes.
const firstChunk = 4 << 10

// markChunk is how much a lineReader reads at a time once a line has
// outgrown its first read.
const markChunk = 64 << 10

// lineReader reads lines of a file in chunks of one reused buffer.
type lineReader struct {
	f   *os.File
	buf []byte
}

func (r *lineReader) chunk(n int64) []byte {
	if r.buf == nil {
		r.buf = make([]byte, firstChunk)
	}
	return r.buf[:min(n, int64(len(r.buf)))]
}

// grow makes the next chunks large: the line being read is a long one.
func (r *lineReader) grow() {
	if len(r.buf) < markChunk {
		r.buf = make([]byte, markChunk)
	}
}

// lastNewline returns the offset of the last '\n' before end, or -1.
func (r *lineReader) lastNewline(end int64) (int64, error) {
	for end > 0 {
		c := r.chunk(end)
		n := int64(len(c))
		if _, err := r.f.ReadAt(c, end-n); err != nil {
			return 0, err
		}
		// IndexByte is vectorized and LastIndexByte is not: a chunk
		// without a newline, all of a long line's but one, is skipped at
		// the faster speed.
		if bytes.IndexByte(c, '\n') >= 0 {
			return end - n + int64(bytes.LastIndexByte(c, '\n')), nil
		}
		if end -= n; end > 0 {
			r.grow()
		}
	}
	return -1, nil
}

// nextNewline returns the offset of the first '\n' at or after off, or
// size.
func (r *lineReader) nextNewline(off, size int64) (int64, error) {
	for off < size {
		c := r.chunk(size - off)
		if _, err := r.f.ReadAt(c, off); err != nil {
			return 0, err
		}
		if i := bytes.IndexByte(c, '\n'); i >= 0 {
			return off + int64(i), nil
		}
		if off += int64(len(c)); off < size {
			r.grow()
		}
	}
	return size, nil
}

// seal returns the seal of the line [start, end) when it is a good sealed
// line (one checkLine finds sealed), else "", computed as it is read.
func (r *lineReader) seal(start, end int64) (string, error) {
	n := end - start
	if n < int64(sealLen)+1 {
		return "", nil
	}
	var first [1]byte
	var tail [sealLen]byte
	if _, err := r.f.ReadAt(first[:], start); err != nil {
		return "", err
	}
	if _, err := r.f.ReadAt(tail[:], end-int64(sealLen)); err != nil {
		return "", err
	}
	// The seal's shape, as looksSealed and sealOf check it on a line.
	probe := append([]byte{first[0]}, tail[:]...)
	sum, ok := sealOf(probe)
	if !ok {
		return "", nil
	}
	crc := uint32(0)
	for off := start; off < end-int64(sealLen); {
		c := r.chunk(end - int64(sealLen) - off)
		if _, err := r.f.ReadAt(c, off); err != nil {
			return "", err
		}
		crc = crc32.Update(crc, crcTable, c)
		if off += int64(len(c)); off < end-int64(sealLen) {
			r.grow()
		}
	}
	if crc32.Update(crc, crcTable, []byte{'}'}) != sum {
		return "", nil
	}
	return string(tail[len(sealPrefix) : len(sealPrefix)+8]), nil
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
