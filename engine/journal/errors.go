package journal

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned by appends to a Writer that has been closed.
	ErrClosed = errors.New("journal is closed")

	// ErrBadRecord is returned for a record that is empty, is not valid
	// JSON, or contains a newline, any of which would break the framing.
	ErrBadRecord = errors.New("bad journal record")

	// ErrFenced is matched by the error of every record the Options.Fence
	// refused to write. The fence's own error is wrapped as well.
	ErrFenced = errors.New("journal write refused by fence")

	// ErrBusy is returned by Open when another Writer, in this process or
	// another one, has the journal open.
	ErrBusy = errors.New("journal is open in another writer")

	// ErrDamaged is matched by a *DamagedError.
	ErrDamaged = errors.New("journal is damaged")
)

// A DamagedError reports a line that is not valid JSON and is not the last
// line of the journal, so it cannot be explained by a torn write and must not
// be dropped silently.
type DamagedError struct {
	Path   string
	Line   int   // 1-based
	Offset int64 // byte offset of the start of the line
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("journal %s is damaged at line %d (byte %d): the line is not valid JSON; "+
		"move the file aside to start the run over, or remove that line to keep the rest",
		e.Path, e.Line, e.Offset)
}

func (e *DamagedError) Unwrap() error { return ErrDamaged }
