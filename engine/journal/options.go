package journal

import (
	"os"
	"time"
)

// DefaultFlushInterval bounds how long a record queued with Append waits
// before a background flush writes it, when nothing else forces a write.
const DefaultFlushInterval = 200 * time.Millisecond

// Options configure a Writer. The zero value is ready to use.
type Options struct {
	// Fence, if set, is called before every batch is written. If it returns
	// an error nothing of the batch is written, every waiter of the batch
	// gets an error matching both ErrFenced and the fence's error, and the
	// Writer is broken from then on. The engine passes the run lease's
	// Check here, so that an owner that lost its lease can never append.
	Fence func() error

	// FlushInterval overrides DefaultFlushInterval.
	FlushInterval time.Duration

	// ObserveSync, if set, is told how long each fdatasync took, for the
	// server's metrics. It runs on the commit loop: it must not block.
	ObserveSync func(time.Duration)

	hooks hooks
}

// hooks let tests observe and stall the commit loop.
type hooks struct {
	queued     func()               // after a record joined the pending batch
	beforeSync func()               // in the commit loop, before each fsync
	sync       func(*os.File) error // replaces datasync
	// write replaces the write of a batch: a full disk, say, that takes
	// part of it.
	write func(f *os.File, b []byte) (int, error)
	// reserve replaces the allocation of the room past the end.
	reserve func(f *os.File, off, n int64) error
}
