package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// Repair reports a torn tail that was moved out of a journal.
type Repair struct {
	SidePath string // where the torn bytes were saved; "" if nothing was repaired
	Offset   int64  // where the journal now ends: the end of its last good record
	Bytes    int64  // how many bytes were moved
}

// Repaired reports whether anything was moved.
func (r Repair) Repaired() bool { return r.SidePath != "" }

func (r Repair) String() string {
	if !r.Repaired() {
		return "no torn tail"
	}
	return fmt.Sprintf("moved a torn tail of %d bytes at offset %d to %s", r.Bytes, r.Offset, r.SidePath)
}

// The torn-tail rule, shared by Open and Scan: a crash mid-write leaves a
// prefix of the last batch, so at most one line at the end can be bad —
// either a partial line (no trailing newline) or a complete line that is not
// valid JSON. That line is torn. A bad line with anything after it was not
// made by a crash and is a *DamagedError.

// repairTail moves the torn tail of the locked journal f, if it has one, to
// a side file and truncates f to its last good record. It reads only the
// last two lines, so Open costs the same however long the journal is.
func repairTail(f *os.File, path string) (Repair, error) {
	fi, err := f.Stat()
	if err != nil {
		return Repair{}, fmt.Errorf("journal %s: %w", path, err)
	}
	size := fi.Size()
	goodEnd, err := findGoodEnd(f, path, size)
	if err != nil || goodEnd == size {
		return Repair{}, err
	}

	torn := make([]byte, size-goodEnd)
	if _, err := f.ReadAt(torn, goodEnd); err != nil {
		return Repair{}, fmt.Errorf("reading torn tail of journal %s: %w", path, err)
	}
	// The side file must be durable before the journal is truncated, so
	// that a crash in between loses nothing (at worst the tail is saved
	// twice).
	side, err := saveSideFile(path, torn)
	if err != nil {
		return Repair{}, err
	}
	if err := f.Truncate(goodEnd); err != nil {
		return Repair{}, fmt.Errorf("truncating journal %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return Repair{}, fmt.Errorf("syncing journal %s: %w", path, err)
	}
	return Repair{SidePath: side, Offset: goodEnd, Bytes: int64(len(torn))}, nil
}

// findGoodEnd returns the offset just past the last good record.
func findGoodEnd(f *os.File, path string, size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, fmt.Errorf("reading journal %s: %w", path, err)
	}
	// tornStart is where the suspect last line starts; prevEnd is the
	// newline that ends the line before it, or -1.
	var tornStart, prevEnd int64
	if last[0] == '\n' {
		nl, err := lastNewline(f, size-1)
		if err != nil {
			return 0, fmt.Errorf("reading journal %s: %w", path, err)
		}
		ok, err := validLine(f, nl+1, size-1)
		if err != nil {
			return 0, fmt.Errorf("reading journal %s: %w", path, err)
		}
		if ok {
			return size, nil
		}
		tornStart, prevEnd = nl+1, nl
	} else {
		nl, err := lastNewline(f, size)
		if err != nil {
			return 0, fmt.Errorf("reading journal %s: %w", path, err)
		}
		tornStart, prevEnd = nl+1, nl
	}
	if prevEnd < 0 {
		return tornStart, nil
	}
	start, err := lastNewline(f, prevEnd)
	if err != nil {
		return 0, fmt.Errorf("reading journal %s: %w", path, err)
	}
	start++
	ok, err := validLine(f, start, prevEnd)
	if err != nil {
		return 0, fmt.Errorf("reading journal %s: %w", path, err)
	}
	if !ok {
		return 0, damagedAt(f, path, start)
	}
	return tornStart, nil
}

// lastNewline returns the offset of the last '\n' before end, or -1.
func lastNewline(f *os.File, end int64) (int64, error) {
	var buf [8 << 10]byte
	for end > 0 {
		n := min(end, int64(len(buf)))
		chunk := buf[:n]
		if _, err := f.ReadAt(chunk, end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return end - n + int64(i), nil
		}
		end -= n
	}
	return -1, nil
}

func validLine(f *os.File, start, end int64) (bool, error) {
	line := make([]byte, end-start)
	if _, err := f.ReadAt(line, start); err != nil {
		return false, err
	}
	return json.Valid(line), nil
}

// damagedAt builds the error for the line starting at offset. Counting the
// lines before it reads the file, which is fine on this rare path.
func damagedAt(f *os.File, path string, offset int64) error {
	lines := 1
	r := io.NewSectionReader(f, 0, offset)
	var buf [32 << 10]byte
	for {
		n, err := r.Read(buf[:])
		lines += bytes.Count(buf[:n], []byte{'\n'})
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading journal %s: %w", path, err)
		}
	}
	return &DamagedError{Path: path, Line: lines, Offset: offset}
}

// saveSideFile writes torn bytes to <path>.torn-<unix-nanos>, durably.
func saveSideFile(path string, torn []byte) (string, error) {
	for stamp := time.Now().UnixNano(); ; stamp++ {
		side := fmt.Sprintf("%s.torn-%d", path, stamp)
		f, err := os.OpenFile(side, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("saving torn tail of journal %s: %w", path, err)
		}
		_, err = f.Write(torn)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = fsx.SyncDir(filepath.Dir(side))
		}
		if err != nil {
			return "", fmt.Errorf("saving torn tail of journal %s: %w", path, err)
		}
		return side, nil
	}
}
