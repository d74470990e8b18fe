package lang

import (
	"context"
	"errors"
	"testing"
)

func TestGoroutinesWake(t *testing.T) {
	var s Scheduler = Goroutines{}
	w := s.NewWake()
	ctx := context.Background()

	// Notifications before a Wait coalesce into one.
	w.Notify()
	w.Notify()
	if err := w.Wait(ctx); err != nil {
		t.Fatalf("Wait after Notify = %v", err)
	}

	// A branch's Notify wakes a waiter.
	ready := make(chan struct{})
	s.Go(ctx, func(context.Context) {
		<-ready
		w.Notify()
	})
	close(ready)
	if err := w.Wait(ctx); err != nil {
		t.Fatalf("Wait for a branch's Notify = %v", err)
	}

	// A done ctx ends a Wait with its cause.
	cause := errors.New("paused")
	cctx, cancel := context.WithCancelCause(ctx)
	cancel(cause)
	if err := w.Wait(cctx); !errors.Is(err, cause) {
		t.Fatalf("Wait on a cancelled ctx = %v, want %v", err, cause)
	}
}
