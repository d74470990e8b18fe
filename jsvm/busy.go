package jsvm

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// A workflow coordinates agents; it computes little. A script that runs
// for BusyLimit without handing control back to the engine (an await that
// waits, or a call of agent(), log(), phase() and the other primitives) is
// stuck in a loop, most likely while (true) {}, and would hold its run for
// ever. A watchdog interrupts it, and the error names the line it was on.
// Starlark scripts have the same guard as a step limit.

// DefaultBusyLimit is how long a script may compute without yielding.
const DefaultBusyLimit = 30 * time.Second

// errBusy is matched by the error of a script stopped for computing too
// long without yielding.
var errBusy = errors.New("the script ran without yielding to the engine")

// busyError says how long the script ran.
type busyError struct{ limit time.Duration }

func (e *busyError) Error() string {
	return fmt.Sprintf("%s for %s: is it in an endless loop?", errBusy, e.limit)
}

func (e *busyError) Unwrap() error { return errBusy }

// busyClock tells how long the script has computed since it last yielded.
// The loop marks it running when it hands control to the script and idle
// when it waits for the engine; a primitive restarts it.
type busyClock struct {
	since atomic.Int64 // unix nanos the current stretch began; 0 while idle
}

func (c *busyClock) running() { c.since.Store(time.Now().UnixNano()) }
func (c *busyClock) idle()    { c.since.Store(0) }

// watch interrupts the script through stop once it has run limit without
// yielding, until done is closed.
func (c *busyClock) watch(limit time.Duration, stop func(error), done <-chan struct{}) {
	tick := time.NewTicker(min(max(limit/20, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			if since := c.since.Load(); since != 0 && now.UnixNano()-since > int64(limit) {
				stop(&busyError{limit: limit})
				return
			}
		}
	}
}
