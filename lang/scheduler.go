package lang

import "context"

// A Scheduler is how a running script waits and runs branches side by side.
// The engine supplies it through Env, so one host runs unchanged on
// goroutines in this process (Goroutines) and on the deterministic
// coroutines of a durable-execution engine such as Temporal, whose workflow
// code may not start goroutines, block on channels or read ctx.Done().
//
// A host therefore never starts a goroutine, blocks on a channel or a lock
// held across a wait, or selects on ctx.Done() while a script runs: it
// starts branches with Go and sleeps in Wake.Wait. Everything the scheduler
// needs travels in the ctx it hands out, so a branch must block with the
// ctx its Go gave it, never with its parent's.
type Scheduler interface {
	// Go runs fn as a new branch, concurrently with the caller but, on a
	// deterministic scheduler, taking turns with it only where one of them
	// waits. fn receives the ctx to use for every wait it makes; it is
	// done when the caller's ctx is.
	Go(ctx context.Context, fn func(ctx context.Context))
	// NewWake returns a wake-up for one waiter.
	NewWake() Wake
}

// A Wake lets one branch sleep until the engine has something for it.
type Wake interface {
	// Notify wakes the waiter, or the next Wait when nobody waits yet;
	// notifications before a Wait coalesce into one. It never blocks, and
	// it may be called from the engine's Done callbacks.
	Notify()
	// Wait blocks until Notify is called or ctx is done. It returns nil for
	// a notification, which it consumes, and context.Cause(ctx) once ctx is
	// done.
	Wait(ctx context.Context) error
}

// Goroutines is the Scheduler of a script running in this process: a
// branch is a goroutine, a Wake a one-slot channel.
type Goroutines struct{}

// Go implements Scheduler.
func (Goroutines) Go(ctx context.Context, fn func(ctx context.Context)) { go fn(ctx) }

// NewWake implements Scheduler.
func (Goroutines) NewWake() Wake { return chanWake(make(chan struct{}, 1)) }

type chanWake chan struct{}

func (w chanWake) Notify() {
	select {
	case w <- struct{}{}:
	default: // a notification is pending already
	}
}

func (w chanWake) Wait(ctx context.Context) error {
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
