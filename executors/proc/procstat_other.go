//go:build unix && !linux

package proc

import "errors"

var errNoProc = errors.New("process start times need /proc")

// bootTicks is unknown: start times are.
func bootTicks() uint64 { return 0 }

// ended cannot be told without /proc: say no, which keeps an owner alive.
func ended(int) bool { return false }

// startTime is unknown without /proc.
func startTime(int) (uint64, error) { return 0, errNoProc }

// groupHasMembers cannot be told without /proc; say no, so that nothing
// is signalled on a guess.
func groupHasMembers(int) bool { return false }
