package proc

import (
	"os"

	"golang.org/x/sys/unix"
)

// maxPipeStdin is the largest input written into a pipe before the child
// starts; a larger one is copied while it runs. Linux lets a user grow a
// pipe to 1 MiB by default (/proc/sys/fs/pipe-max-size).
const maxPipeStdin = 1 << 20

// stdinPipe returns the read end of a pipe that holds data and whose
// write end is closed, so that the child reads data and then EOF with no
// goroutine of ours copying it (nor left blocked, should a process that
// escaped the child's group keep the pipe open and never read it). It
// returns nil when data does not fit in a pipe.
func stdinPipe(data []byte) (*os.File, error) {
	if len(data) > maxPipeStdin {
		return nil, nil
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	r, w := fds[0], fds[1]
	defer unix.Close(w)
	// Any pipe holds a page, even once the user's pipes have used up
	// /proc/sys/fs/pipe-user-pages-soft; only a larger input may need the
	// pipe to grow.
	if len(data) > os.Getpagesize() {
		if size, err := unix.FcntlInt(uintptr(w), unix.F_GETPIPE_SZ, 0); err != nil || size < len(data) {
			if _, err := unix.FcntlInt(uintptr(w), unix.F_SETPIPE_SZ, len(data)); err != nil {
				unix.Close(r)
				return nil, nil
			}
		}
	}
	for p := data; len(p) > 0; {
		n, err := unix.Write(w, p)
		if err != nil {
			unix.Close(r)
			return nil, err
		}
		p = p[n:]
	}
	return os.NewFile(uintptr(r), "|0"), nil
}
