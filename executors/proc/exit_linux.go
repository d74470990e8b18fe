package proc

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exitNotice returns a descriptor that becomes readable when our child
// pid exits, a pidfd watched by the runtime's poller, or nil where the
// kernel has none (before 5.3): the child is then waited for the old way.
//
// os.Process.Wait blocks a thread in waitid(2) for as long as the child
// runs, so a run kept an OS thread parked per running agent: 16 at
// concurrency 16, each with 48 KB of stacks the Go runtime never gives
// back. Waiting on the poller instead, Wait is called only once the child
// has exited, and returns at once.
//
// The pidfd is our own, not the one os.Process keeps, so making it
// non-blocking (which the poller needs) changes nothing for that one.
// Pidfds are close-on-exec: later children do not inherit it.
func exitNotice(pid int) *os.File {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.EINVAL) { // PIDFD_NONBLOCK is 5.10's
		if fd, err = unix.PidfdOpen(pid, 0); err == nil {
			err = unix.SetNonblock(fd, true)
		}
	}
	if err != nil {
		if fd > 0 {
			_ = unix.Close(fd)
		}
		return nil
	}
	return os.NewFile(uintptr(fd), "pidfd")
}

// awaitExit returns once the process of pidfd f has exited, or at once if
// the poller cannot watch f: the caller's Wait then blocks as it must.
func awaitExit(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		// A pidfd is readable once its process has exited. Poll rather
		// than trust the wake-up: Wait on a live child would block.
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
		return n > 0 || (err != nil && !errors.Is(err, unix.EINTR))
	})
}
