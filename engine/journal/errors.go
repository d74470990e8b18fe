package journal

import "errors"

var (
	// ErrClosed is returned by appends to a Writer that has been closed.
	ErrClosed = errors.New("journal is closed")

	// ErrBadRecord is returned for a record that is not a one-line,
	// non-empty JSON object, which would break the framing or the seal.
	ErrBadRecord = errors.New("bad journal record")

	// ErrFenced is matched by the error of every record the Options.Fence
	// refused to write. The fence's own error is wrapped as well.
	ErrFenced = errors.New("journal write refused by fence")

	// ErrBusy is returned by Open when another Writer, in this process or
	// another one, has the journal open.
	ErrBusy = errors.New("journal is open in another writer")
)
