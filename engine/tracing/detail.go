package tracing

import (
	"slices"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
)

// ExportLatest exports the latest execution of a run that this process
// did not execute and saw no event of (a run on Temporal), from its
// detail once the execution has ended: the detail's record of each call
// becomes the events a local execution would have published, and the
// same rules turn them into spans. Its trace and those of the earlier
// executions it links to are engine.ExecutionTraceContext's, since no
// journal keeps them.
func (t *Tracer) ExportLatest(d *engine.Detail) {
	n := len(d.Executions)
	if n == 0 {
		return
	}
	b := newBuilder(t.provider.Tracer(scopeName))
	for _, ev := range executionEvents(d, n-1) {
		b.handle(ev)
	}
	b.closeAll(time.Now())
}

// executionEvents are the events of execution i of d, in time order.
func executionEvents(d *engine.Detail, i int) []engine.Event {
	x := d.Executions[i]
	runID := d.Summary.RunID
	start := x.StartedAt
	var evs []engine.Event
	add := func(at time.Time, typ string, payload any) {
		if at.IsZero() || at.Before(start) {
			at = start
		}
		evs = append(evs, engine.Event{Sequence: int64(len(evs)), Timestamp: at, Type: typ, RunID: runID, Payload: payload})
	}
	tc := engine.ExecutionTraceContext(runID, x.Epoch)
	links := make([]engine.TraceContext, 0, i)
	for _, e := range d.Executions[:i] {
		links = append(links, engine.ExecutionTraceContext(runID, e.Epoch))
	}
	started := engine.StartedPayload{Name: d.Summary.Name, Script: d.Script.Path, Epoch: x.Epoch, Trace: &tc, Links: links}
	typ := engine.EventRunStarted
	if i > 0 {
		typ, started.Rule = engine.EventRunResumed, x.Rule
	}
	add(start, typ, started)

	end := start
	for _, l := range d.Logs {
		if l.Level == "phase" && !l.Time.Before(start) {
			add(l.Time, engine.EventPhase, engine.PhasePayload{Scope: l.Scope, Title: l.Message})
		}
	}
	for _, c := range d.Calls {
		if c.Kind == "checkpoint" {
			if c.Epoch == x.Epoch && c.Status == "done" {
				add(c.EndedAt, engine.EventCheckpoint, engine.CheckpointPayload{Path: c.Path, Source: c.Source, Phase: c.Phase,
					WaitedMs: max(0, c.EndedAt.Sub(c.StartedAt).Milliseconds())})
				end = later(end, c.EndedAt)
			}
			continue
		}
		p := engine.CallPayload{Path: c.Path, Label: c.Label, Phase: c.Phase, Executor: c.Executor}
		if c.Epoch < x.Epoch {
			if c.Status == "done" {
				add(start, engine.EventCallReplayed, p)
			}
			continue
		}
		if c.Epoch != x.Epoch {
			continue
		}
		s := p
		s.Model, s.Effort, s.Permissions = c.Model, c.Effort, string(c.Permissions)
		add(c.StartedAt, engine.EventCallStarted, s)
		for _, r := range c.Retries {
			add(r.At, engine.EventCallRetry, engine.CallPayload{Path: c.Path, Class: r.Class})
		}
		f := p
		f.Usage, f.Attempt, f.Model, f.Provider, f.Error = usageOf(c.Usage), c.Attempts, c.Model, c.Provider, c.Error
		f.DurationMs = c.DurMs
		switch c.Status {
		case "done":
			add(c.EndedAt, engine.EventCallFinished, f)
		case "failed":
			add(c.EndedAt, engine.EventCallFailed, f)
		}
		end = later(end, c.EndedAt)
	}
	st := engine.StatusPayload{Status: engine.Status(d.Summary.Status), Epoch: x.Epoch}
	if e := x.End; e != nil {
		st = engine.StatusPayload{Status: engine.Status(e.Status), PauseReason: e.PauseReason, Error: e.Error, Epoch: x.Epoch,
			Replayed: e.Replayed, Live: e.Live, Failed: e.Failed}
	}
	if !d.Summary.UpdatedAt.IsZero() && x.End != nil && i == len(d.Executions)-1 && d.Summary.EndedAt != nil {
		end = later(end, *d.Summary.EndedAt)
	}
	add(end, engine.EventRunStatus, st)
	slices.SortStableFunc(evs, func(a, b engine.Event) int {
		if n := a.Timestamp.Compare(b.Timestamp); n != 0 {
			return n
		}
		return order(a.Type) - order(b.Type)
	})
	return evs
}

// order puts, at equal times, what opens before what closes.
func order(typ string) int {
	switch typ {
	case engine.EventRunStarted, engine.EventRunResumed:
		return 0
	case engine.EventPhase:
		return 1
	case engine.EventCallStarted, engine.EventCallReplayed:
		return 2
	case engine.EventRunStatus:
		return 4
	}
	return 3
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func usageOf(u *executors.Usage) *executors.Usage {
	if u == nil {
		return nil
	}
	c := *u
	return &c
}
