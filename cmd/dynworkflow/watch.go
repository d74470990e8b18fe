package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/watch"
)

// watchRun follows r in view (subscribed before r started) and re-runs
// it on every save of its files until Ctrl-C, which leaves the current
// execution paused and resumable. One view lasts the whole session, so
// that nothing a reloaded execution says before its first agent is lost.
func (a *app) watchRun(ctx context.Context, rt *engine.Runtime, r *engine.Run, view *progressView) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)

	w, err := watch.New(rt, r, watch.Options{})
	if err != nil {
		view.stop()
		_ = r.Pause()
		<-r.Done()
		return err
	}
	events := make(chan watch.Event)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx, events) }()

	view.start(r)
	defer view.stop()
	last := engine.Outcome{Status: engine.StatusRunning}
	for {
		select {
		case <-signals:
			view.stop()
			select {
			case <-r.Done():
			default:
				fmt.Fprintln(a.stderr, "» pausing: the journal stays resumable")
				_ = r.Pause()
				<-r.Done()
				last = r.Outcome()
				a.printOutcome(last)
			}
			cancel()
			<-errc
			return exitFor(last.Status, last.Stats.ScriptErrors)
		case err := <-errc:
			view.stop()
			if err != nil {
				return err
			}
			return exitFor(last.Status, last.Stats.ScriptErrors)
		case ev := <-events:
			switch ev.Kind {
			case watch.LoadFailed:
				view.note(fmt.Sprintf("not reloaded: %v", ev.Err))
				view.note("the current run goes on; fix the script and save again")
			case watch.Changed:
				view.note(fmt.Sprintf("%s changed: reload %d", names(ev.Files), ev.Reload))
			case watch.Failed:
				view.note(fmt.Sprintf("reload %d failed: %v", ev.Reload, ev.Err))
			case watch.Reloaded:
				r = ev.Run
				view.follow(r)
			case watch.Ended:
				view.detach()
				last = ev.Outcome
				a.printOutcome(last)
				if ev.Reload > 0 {
					view.note(fmt.Sprintf("reload %d: %s replayed, %d ran live", ev.Reload,
						plural(last.Stats.Replayed, "call"), last.Stats.Live))
				}
				view.note(fmt.Sprintf("watching %s; save to re-run, Ctrl-C to stop", plural(len(ev.Run.Files()), "file")))
			}
		}
	}
}

func names(paths []string) string {
	out := ""
	for i, p := range paths {
		if i > 0 {
			out += ", "
		}
		out += filepath.Base(p)
	}
	return out
}
