package langtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Lockstep runs a script so that the order of its calls depends on the
// script alone: the env answers one call at a time, and only once the
// script can do nothing more (every branch of it waits), in the order pick
// chooses. Two hosts that order their work alike then make the same calls
// in the same order, which a test can compare exactly, however the Go
// scheduler runs their goroutines.
//
// The run's branches and waits go through a Scheduler that counts the
// goroutines not waiting; the script can do nothing more when that count
// is zero and Run has not returned. pick gets the calls still waiting for
// an answer, oldest first, and returns the index of the one to answer
// next; nil answers the oldest. A call Refuse refuses is answered at
// once, inside the call, as the engine answers a call over a limit.
//
// Lockstep returns what run returned. It fails when the script waits for
// an answer no call will give.
func (e *Env) Lockstep(ctx context.Context, run func(ctx context.Context) (json.RawMessage, error), pick func(waiting []Call) int) (json.RawMessage, error) {
	s := &stepper{}
	s.idle = sync.NewCond(&s.mu)
	e.stepper = s
	ctx, cancel := context.WithCancel(ctx)
	// Whatever the script left running when it ended goes with ctx.
	defer cancel()

	var res json.RawMessage
	var err error
	ended := false
	s.add(1)
	go func() {
		defer func() {
			s.mu.Lock()
			ended = true
			s.addLocked(-1)
			s.mu.Unlock()
		}()
		r, rerr := run(ctx)
		s.mu.Lock()
		res, err = r, rerr
		s.mu.Unlock()
	}()
	for {
		s.mu.Lock()
		for s.running > 0 {
			s.idle.Wait()
		}
		done := ended
		s.mu.Unlock()
		if done {
			return res, err
		}
		e.mu.Lock()
		waiting := e.waiting
		e.mu.Unlock()
		if len(waiting) == 0 {
			return nil, errors.New("langtest: the script waits, and no call is left to answer")
		}
		i := 0
		if pick != nil {
			calls := make([]Call, len(waiting))
			for k, w := range waiting {
				calls[k] = w.call
			}
			i = pick(calls)
		}
		w := waiting[i]
		e.mu.Lock()
		e.waiting = append(e.waiting[:i:i], e.waiting[i+1:]...)
		e.mu.Unlock()
		res, aerr := e.answer(ctx, w.call)
		w.done(res, aerr)
	}
}

// A waitingCall is a call of a lockstep run, waiting for its answer.
type waitingCall struct {
	call Call
	done lang.Done
}

// answer is the answer the env gives c.
func (e *Env) answer(ctx context.Context, c Call) (json.RawMessage, error) {
	if e.Answer != nil {
		return e.Answer(ctx, c)
	}
	return json.Marshal("echo: " + c.Prompt)
}

// stepper is the Scheduler of a lockstep run.
type stepper struct {
	mu      sync.Mutex
	idle    *sync.Cond // signalled when running drops to zero
	running int        // goroutines of the run not waiting
}

func (s *stepper) add(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(n)
}

func (s *stepper) addLocked(n int) {
	s.running += n
	if s.running < 0 {
		panic(fmt.Sprintf("langtest: %d goroutines running", s.running))
	}
	if s.running == 0 {
		s.idle.Broadcast()
	}
}

func (s *stepper) Go(ctx context.Context, fn func(ctx context.Context)) {
	s.add(1)
	go func() {
		defer s.add(-1)
		fn(ctx)
	}()
}

func (s *stepper) NewWake() lang.Wake { return &stepWake{s: s, ch: make(chan struct{}, 1)} }

// stepWake is a lang.Wake whose waiter counts as running from the moment
// it is notified, so that the run is never taken for idle between a
// notification and the waiter waking up.
type stepWake struct {
	s *stepper
	// Under s.mu.
	pending bool // notified, and not yet consumed by a Wait
	waiting bool // a Wait is blocked
	ch      chan struct{}
}

func (w *stepWake) Notify() {
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.pending {
		return
	}
	w.pending = true
	if w.waiting {
		w.waiting = false
		s.addLocked(1)
		w.ch <- struct{}{}
	}
}

func (w *stepWake) Wait(ctx context.Context) error {
	s := w.s
	s.mu.Lock()
	if w.pending {
		w.pending = false
		s.mu.Unlock()
		return nil
	}
	w.waiting = true
	s.addLocked(-1)
	s.mu.Unlock()
	select {
	case <-w.ch:
		s.mu.Lock()
		w.pending = false
		s.mu.Unlock()
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		if !w.waiting {
			// Notified meanwhile: counted as running already.
			<-w.ch
			w.pending = false
			return nil
		}
		w.waiting = false
		s.addLocked(1)
		return context.Cause(ctx)
	}
}
