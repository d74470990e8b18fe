package engine

import (
	"context"
	"time"
)

// Parked runs. A run that met its executor's quota pauses with ResumeAt,
// the reset (see callpolicy.Quota). Where a runtime stays up to do it
// (serve), it resumes such a run by itself at the reset; a run that finds
// the quota spent again then parks once more, until the later reset.

// WakeParked resumes, at its reset, each run of the project that is
// parked for a quota, for as long as ctx lasts: those parked now, and
// those that park later in this process. It returns at once.
func (rt *Runtime) WakeParked(ctx context.Context) {
	sub := rt.bus.Subscribe(64, func(ev Event) bool { return ev.Type == EventRunStatus })
	go func() {
		defer sub.Close()
		w := &waker{rt: rt, ctx: ctx, due: make(chan string, 16), timers: map[string]*time.Timer{}}
		defer w.stopAll()
		w.scan()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-sub.C:
				if !ok {
					return
				}
				if p, ok := ev.Payload.(StatusPayload); ok && p.Status == StatusPaused && p.ResumeAt != nil {
					w.at(ev.RunID, *p.ResumeAt)
				}
				if sub.TakeLag() {
					w.scan()
				}
			case id := <-w.due:
				delete(w.timers, id)
				w.wake(id)
			}
		}
	}()
}

// waker holds a timer per parked run.
type waker struct {
	rt     *Runtime
	ctx    context.Context
	due    chan string
	timers map[string]*time.Timer
}

// scan schedules every run the store shows parked.
func (w *waker) scan() {
	sums, err := w.rt.List()
	if err != nil {
		w.rt.log.Warn("list parked runs", "err", err)
		return
	}
	for _, s := range sums {
		if s.Status == string(StatusPaused) && s.ResumeAt != nil && s.Foreign == "" {
			w.at(s.RunID, *s.ResumeAt)
		}
	}
}

// at wakes the run id at t, in place of any earlier wake-up.
func (w *waker) at(id string, t time.Time) {
	if old, ok := w.timers[id]; ok {
		old.Stop()
	}
	w.timers[id] = time.AfterFunc(time.Until(t), func() {
		select {
		case w.due <- id:
		case <-w.ctx.Done():
		}
	})
}

// wake resumes the run id if it is still parked: the user may have
// resumed, stopped or deleted it meanwhile.
func (w *waker) wake(id string) {
	if _, live := w.rt.Live(id); live {
		return
	}
	d, err := w.rt.Inspect(id)
	if err != nil || d.Summary.Status != string(StatusPaused) || d.Summary.ResumeAt == nil {
		return
	}
	if wait := time.Until(*d.Summary.ResumeAt); wait > 0 {
		w.at(id, *d.Summary.ResumeAt) // parked again, until later
		return
	}
	if _, err := w.rt.Resume(w.ctx, id, ResumeRequest{}); err != nil {
		w.rt.log.Warn("resume a run at its quota's reset", "run", id, "err", err)
		return
	}
	w.rt.log.Info("resumed a run at its quota's reset", "run", id)
}

func (w *waker) stopAll() {
	for _, t := range w.timers {
		t.Stop()
	}
}
