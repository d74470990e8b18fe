package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// Scan calls fn with each complete record of the journal at path, in order.
// The line passed to fn has no trailing newline and is only valid until fn
// returns. An error from fn stops the scan and is returned wrapped with the
// record's position.
//
// If the journal ends with a torn tail, fn does not see it, and Scan moves it
// aside as Open does and reports that in Repair — unless a Writer has the
// journal open, in which case the incomplete tail is a write in progress and
// is left alone. A damaged line before the end is a *DamagedError.
//
// A missing journal is an error matching fs.ErrNotExist.
func Scan(path string, fn func(line []byte) error) (Repair, error) {
	torn, err := scan(path, fn)
	if err != nil || !torn {
		return Repair{}, err
	}
	return repairIdle(path)
}

// ScanReadOnly is Scan for readers that must not change the journal, such
// as an inspection of a run another process may own: a torn tail is skipped,
// not repaired.
func ScanReadOnly(path string, fn func(line []byte) error) error {
	_, err := scan(path, fn)
	return err
}

// scan reads the journal, calling fn with every good record, and reports
// whether it ends with a torn tail.
func scan(path string, fn func(line []byte) error) (torn bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("reading journal: %w", err)
	}
	defer f.Close()

	r := bufio.NewReaderSize(f, 64<<10)
	var (
		offset  int64  // start of the current line
		lineNo  int    // of the current line
		long    []byte // a line longer than r's buffer, being assembled
		bad     *DamagedError
		partial bool
	)
	for {
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			line = long
		}
		if errors.Is(err, io.EOF) {
			partial = len(line) > 0
			break
		}
		if err != nil {
			return false, fmt.Errorf("reading journal %s: %w", path, err)
		}
		lineNo++
		start := offset
		offset += int64(len(line))
		long = long[:0]

		if bad != nil {
			return false, bad // a bad line with a line after it
		}
		record := line[:len(line)-1]
		if !json.Valid(record) {
			bad = &DamagedError{Path: path, Line: lineNo, Offset: start}
			continue
		}
		if err := fn(record); err != nil {
			return false, fmt.Errorf("journal %s line %d (byte %d): %w", path, lineNo, start, err)
		}
	}
	if bad != nil && partial {
		return false, bad
	}
	return bad != nil || partial, nil
}

// repairIdle repairs the torn tail of a journal no Writer has open.
func repairIdle(path string) (Repair, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return Repair{}, fmt.Errorf("repairing journal: %w", err)
	}
	defer f.Close()
	busy, err := fsx.Flock(f, unix.LOCK_EX)
	if err != nil {
		return Repair{}, fmt.Errorf("repairing journal %s: %w", path, err)
	}
	if busy {
		return Repair{}, nil
	}
	defer fsx.Unflock(f)
	return repairTail(f, path)
}

// ReadAll returns copies of every complete record of the journal at path;
// see Scan. Prefer Scan for long journals.
func ReadAll(path string) ([][]byte, Repair, error) {
	var records [][]byte
	repair, err := Scan(path, func(line []byte) error {
		records = append(records, append([]byte(nil), line...))
		return nil
	})
	return records, repair, err
}
