package main

import (
	"context"
	"fmt"
	"os"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/watch"
)

// watchServed watches every run the server starts from a file (its FILE
// argument, or a request naming a path or a saved workflow) and re-runs it
// on every save, until ctx ends. A script sent as text has no file to
// watch. It returns once it is subscribed, so no start is missed.
func (a *app) watchServed(ctx context.Context, rt *engine.Runtime) {
	sub := rt.Events().Subscribe(1024, func(e engine.Event) bool { return e.Type == engine.EventRunStarted })
	go func() {
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-sub.C:
				if !ok {
					return
				}
				r, live := rt.Live(ev.RunID)
				if !live || len(r.Files()) == 0 {
					continue
				}
				if _, err := os.Stat(r.Files()[0]); err != nil {
					continue // sent as text
				}
				w, err := watch.New(rt, r, watch.Options{})
				if err != nil {
					fmt.Fprintf(a.stderr, "» cannot watch %s: %v\n", r.ID(), err)
					continue
				}
				go a.reportServedWatch(ctx, r.ID(), w)
			}
		}
	}()
}

// reportServedWatch runs one watcher and prints what it does on the
// server's terminal; clients see the same through run.resumed and
// run.status events.
func (a *app) reportServedWatch(ctx context.Context, id string, w *watch.Watcher) {
	events := make(chan watch.Event)
	go func() {
		if err := w.Run(ctx, events); err != nil && ctx.Err() == nil {
			fmt.Fprintf(a.stderr, "» stopped watching %s: %v\n", id, err)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-events:
			switch ev.Kind {
			case watch.LoadFailed:
				fmt.Fprintf(a.stderr, "» %s not reloaded: %v\n", id, ev.Err)
			case watch.Changed:
				fmt.Fprintf(a.stderr, "» %s: %s changed: reload %d\n", id, names(ev.Files), ev.Reload)
			case watch.Failed:
				fmt.Fprintf(a.stderr, "» %s: reload %d failed: %v\n", id, ev.Reload, ev.Err)
			case watch.Ended:
				if ev.Reload > 0 {
					fmt.Fprintf(a.stderr, "» %s reload %d %s: %s replayed, %d ran live\n",
						id, ev.Reload, ev.Outcome.Status, plural(ev.Outcome.Stats.Replayed, "call"), ev.Outcome.Stats.Live)
				}
			}
		}
	}
}
