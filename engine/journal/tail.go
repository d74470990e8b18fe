package journal

import (
	"errors"
	"fmt"
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
// prefix of the last batch, so the last line is torn when it has no newline,
// or fails its check and was cut short (see cutShort). Other lines that
// fail their check, the last one included when it was written whole, are
// not torn: they stay where they are, and every scan reports them as
// damaged.

// repairTail moves the torn tail of the locked journal f, if it has one, to
// a side file and truncates f to the end of the line before it. It reads
// only the last line, so Open costs the same however long the journal is.
func repairTail(f *os.File, path string) (Repair, error) {
	fi, err := f.Stat()
	if err != nil {
		return Repair{}, fmt.Errorf("journal %s: %w", path, err)
	}
	size := fi.Size()
	goodEnd, err := findGoodEnd(f, size)
	if err != nil {
		return Repair{}, fmt.Errorf("reading journal %s: %w", path, err)
	}
	if goodEnd == size {
		return Repair{}, nil
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

// findGoodEnd returns the offset just past the last line that is not torn.
func findGoodEnd(f *os.File, size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, err
	}
	if last[0] != '\n' {
		nl, err := lastNewline(f, size)
		return nl + 1, err
	}
	nl, err := lastNewline(f, size-1)
	if err != nil {
		return 0, err
	}
	line := make([]byte, size-1-(nl+1))
	if _, err := f.ReadAt(line, nl+1); err != nil {
		return 0, err
	}
	if checkLine(line) == lineBroken && cutShort(line) {
		return nl + 1, nil
	}
	return size, nil
}

// lastNewline returns the offset of the last '\n' before end, or -1.
func lastNewline(f *os.File, end int64) (int64, error) {
	r := lineReader{f: f}
	return r.lastNewline(end)
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
