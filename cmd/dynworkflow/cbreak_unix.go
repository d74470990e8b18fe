//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import "golang.org/x/sys/unix"

// cbreak makes the terminal at fd hand over each key as it is typed,
// without echoing it, for a question asked in the terminal; restore puts
// it back. Unlike raw mode it keeps the output's newline handling, which
// the live region relies on, and signals: Ctrl-C still pauses the run.
func cbreak(fd int) (restore func(), err error) {
	old, err := unix.IoctlGetTermios(fd, getTermios)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= unix.ICANON | unix.ECHO
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, setTermios, &t); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, setTermios, old) }, nil
}

// canCbreak says whether questions can be asked in a terminal here.
const canCbreak = true
