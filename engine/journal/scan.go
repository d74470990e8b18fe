package journal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// A Damage is a complete line of the journal that failed its check and was
// skipped: its checksum does not match, it is not JSON at all, or it has no
// checksum although sealed lines came before it.
type Damage struct {
	Line   int   // 1-based
	Offset int64 // byte offset of the start of the line
	Length int   // bytes, without the newline
	Reason string
	// Head is the start of the line, at most maxDamageHead bytes. Its bytes
	// are damaged: read them only to tell a person what the record seems
	// to have been.
	Head []byte
}

// maxDamageHead bounds Damage.Head: a record's type and call path come
// first.
const maxDamageHead = 512

func (d Damage) String() string {
	return fmt.Sprintf("line %d (byte %d, %d bytes): %s", d.Line, d.Offset, d.Length, d.Reason)
}

// A Report is what a scan found besides the good records.
type Report struct {
	// Repair is the torn tail Scan moved aside, if any.
	Repair Repair
	// TornBytes is the size of the torn tail that was skipped (and, by
	// Scan, moved aside): an incomplete last line, or a last line that
	// fails its check and was cut short (see cutShort), which is what a
	// crash in the middle of a write leaves.
	TornBytes int64
	// Damaged lists the damaged lines before the tail, in order. They stay
	// in the journal; every scan skips and reports them.
	Damaged []Damage
}

// Scan calls fn with each good record of the journal at path, in order.
// The line passed to fn is the record as it was appended (no newline, no
// seal) and is only valid until fn returns. An error
// from fn stops the scan and is returned wrapped with the record's position.
//
// Damaged lines are skipped and listed in the Report. If the journal ends
// with a torn tail, fn does not see it, and Scan moves it aside as Open does
// and reports that in Report.Repair — unless a Writer has the journal open,
// in which case the incomplete tail is a write in progress and is left
// alone.
//
// A missing journal is an error matching fs.ErrNotExist.
func Scan(path string, fn func(line []byte) error) (Report, error) {
	rep, err := scan(path, fn)
	if err != nil || rep.TornBytes == 0 {
		return rep, err
	}
	rep.Repair, err = repairIdle(path)
	return rep, err
}

// ScanReadOnly is Scan for readers that must not change the journal, such
// as an inspection of a run another process may own: a torn tail is skipped
// and reported, not repaired.
func ScanReadOnly(path string, fn func(line []byte) error) (Report, error) {
	return scan(path, fn)
}

// scan reads the journal, calling fn with every good record.
func scan(path string, fn func(line []byte) error) (Report, error) {
	var rep Report
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return rep, fmt.Errorf("reading journal: %w", err)
	}
	defer f.Close()

	r := bufio.NewReaderSize(f, 64<<10)
	var (
		offset int64  // start of the current line
		lineNo int    // of the current line
		long   []byte // a line longer than r's buffer, being assembled
		sealed bool   // a sealed line was read: every later line must be
		// broken is a line that failed its check: damage if any line
		// follows it or if it was written whole (see cutShort), the torn
		// tail if it is the last and was cut short.
		broken      *Damage
		brokenShort bool
	)
	damage := func(line []byte, start int64, reason string) *Damage {
		return &Damage{Line: lineNo, Offset: start, Length: len(line), Reason: reason,
			Head: append([]byte(nil), line[:min(len(line), maxDamageHead)]...)}
	}
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
			if len(line) > 0 {
				// An incomplete last line: the torn tail. A broken line
				// before it is damage.
				if broken != nil {
					rep.Damaged = append(rep.Damaged, *broken)
				}
				rep.TornBytes = int64(len(line))
			} else if broken != nil && brokenShort {
				rep.TornBytes = int64(broken.Length) + 1
			} else if broken != nil {
				rep.Damaged = append(rep.Damaged, *broken)
			}
			return rep, nil
		}
		if err != nil {
			return rep, fmt.Errorf("reading journal %s: %w", path, err)
		}
		lineNo++
		start := offset
		offset += int64(len(line))
		long = long[:0]
		if broken != nil {
			rep.Damaged = append(rep.Damaged, *broken)
			broken = nil
		}

		record := line[:len(line)-1]
		switch checkLine(record) {
		case lineBroken:
			reason := "its checksum does not match its content"
			if _, ok := sealOf(record); !ok {
				reason = "it is not valid JSON"
			}
			broken, brokenShort = damage(record, start, reason), cutShort(record)
			continue
		case lineUnsealed:
			if sealed {
				rep.Damaged = append(rep.Damaged, *damage(record, start, "its checksum is missing or damaged"))
				continue
			}
		case lineSealed:
			sealed = true
			// Hand fn the record as it was appended: the closing brace
			// goes back where the seal begins. The bytes are ours to
			// change: bufio is done with them.
			record[len(record)-sealLen] = '}'
			record = record[:len(record)-sealLen+1]
		}
		if err := fn(record); err != nil {
			return rep, fmt.Errorf("journal %s line %d (byte %d): %w", path, lineNo, start, err)
		}
	}
}

// repairIdle repairs the torn tail of a journal no Writer has open.
func repairIdle(path string) (Repair, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
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

// ReadAll returns copies of every good record of the journal at path; see
// Scan. Prefer Scan for long journals.
func ReadAll(path string) ([][]byte, Report, error) {
	var records [][]byte
	rep, err := Scan(path, func(line []byte) error {
		records = append(records, append([]byte(nil), line...))
		return nil
	})
	return records, rep, err
}
