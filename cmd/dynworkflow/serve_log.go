package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/web"
)

// logServedRuns prints one line on the server's terminal for each change
// of a run's state (started, resumed, waiting on a human, answered,
// paused, completed, failed, stopped, deleted), and the first time an
// execution runs into each limit, until ctx ends. It returns
// once it is subscribed, so that no change is missed.
func (a *app) logServedRuns(ctx context.Context, rt *engine.Runtime) {
	sub := rt.Events().Subscribe(4096, func(e engine.Event) bool {
		switch e.Type {
		case engine.EventRunStarted, engine.EventRunResumed, engine.EventRunStatus, engine.EventCheckpoint,
			web.EventCheckpointPending, web.EventRunDeleted, engine.EventLimit, engine.EventSubscriberReset:
			return true
		}
		return false
	})
	started := map[string]time.Time{}
	limits := map[string]bool{} // run and limit, reported once per execution
	go func() {
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-sub.C:
				if !ok {
					return
				}
				if p, ok := e.Payload.(engine.LimitPayload); ok {
					if limits[e.RunID+"\x00"+p.Limit] {
						continue
					}
					limits[e.RunID+"\x00"+p.Limit] = true
				}
				if e.Type == engine.EventRunStarted || e.Type == engine.EventRunResumed {
					for k := range limits {
						if strings.HasPrefix(k, e.RunID+"\x00") {
							delete(limits, k)
						}
					}
				}
				if line := a.stateLine(e, started); line != "" {
					fmt.Fprintf(a.stderr, "%s %s\n", e.Timestamp.Local().Format("15:04:05"), line)
				}
			}
		}
	}()
}

// stateLine describes one state change; started keeps when each run's
// execution started, for its duration.
func (a *app) stateLine(e engine.Event, started map[string]time.Time) string {
	id := e.RunID
	switch p := e.Payload.(type) {
	case engine.StartedPayload:
		started[id] = e.Timestamp
		if e.Type == engine.EventRunResumed {
			return fmt.Sprintf("%s resumed (execution %d, %s rule)", id, p.Epoch, p.Rule)
		}
		return fmt.Sprintf("%s started: %s (%s)", id, escapeControls(p.Name, true), escapeControls(p.Script, true))
	case engine.StatusPayload:
		took := ""
		if t, ok := started[id]; ok {
			took = " in " + humanMs(e.Timestamp.Sub(t).Milliseconds())
			delete(started, id)
		}
		status := string(p.Status)
		if n := engine.CountScriptErrors(p.ScriptErrors); n > 0 {
			status += " with " + plural(n, "script error")
		}
		line := fmt.Sprintf("%s %s%s · %s (%d replayed, %d live, %d failed)", id, status, took,
			plural(p.Replayed+p.Live+p.Failed, "agent"), p.Replayed, p.Live, p.Failed)
		switch {
		case p.PauseReason != "":
			line += ": " + escapeControls(p.PauseReason, true)
		case p.Error != "":
			line += ": " + escapeControls(p.Error, true)
		}
		return line
	case web.Checkpoint:
		return fmt.Sprintf("%s waiting: checkpoint %s asks %q (dynworkflow respond %s %s)", id, p.ID,
			escapeControls(p.Prompt, true), p.ID, answerHint(p))
	case engine.LimitPayload:
		return fmt.Sprintf("%s limit reached: %s (reported once; every one is in: dynworkflow show %s)", id, escapeControls(p.Message, true), id)
	case engine.CheckpointPayload:
		if p.Source == "journal" {
			return "" // replayed, not a change
		}
		return fmt.Sprintf("%s running: checkpoint at %s answered %s (%s)", id, p.Path, escapeControls(string(p.Answer), true), p.Source)
	}
	switch e.Type {
	case web.EventRunDeleted:
		return id + " deleted"
	case engine.EventSubscriberReset:
		return "some run state changes were not shown (too many at once); see: dynworkflow list"
	}
	return ""
}
