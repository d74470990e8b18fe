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

// watchRun follows r and re-runs it on every save of its files until
// Ctrl-C, which leaves the current execution paused and resumable.
func (a *app) watchRun(ctx context.Context, rt *engine.Runtime, r *engine.Run) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)

	w, err := watch.New(rt, r, watch.Options{})
	if err != nil {
		_ = r.Pause()
		<-r.Done()
		return err
	}
	events := make(chan watch.Event)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx, events) }()

	live := !a.json && isTerminal(a.stderr)
	view := newProgressView(a.stderr, rt, r, live)
	view.start()
	viewing := true
	stopView := func() {
		if viewing {
			view.stop()
			viewing = false
		}
	}
	defer stopView()
	last := engine.Outcome{Status: engine.StatusRunning}
	for {
		select {
		case <-signals:
			stopView()
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
			return exitFor(last.Status)
		case err := <-errc:
			stopView()
			if err != nil {
				return err
			}
			return exitFor(last.Status)
		case ev := <-events:
			switch ev.Kind {
			case watch.LoadFailed:
				fmt.Fprintf(a.stderr, "» not reloaded: %v\n» the current run goes on; fix the script and save again\n", ev.Err)
			case watch.Changed:
				fmt.Fprintf(a.stderr, "» %s changed: reload %d\n", names(ev.Files), ev.Reload)
			case watch.Failed:
				fmt.Fprintf(a.stderr, "» reload %d failed: %v\n", ev.Reload, ev.Err)
			case watch.Reloaded:
				stopView()
				r = ev.Run
				view = newProgressView(a.stderr, rt, r, live)
				view.start()
				viewing = true
			case watch.Ended:
				stopView()
				last = ev.Outcome
				a.printOutcome(last)
				if ev.Reload > 0 {
					fmt.Fprintf(a.stderr, "» reload %d: %d calls replayed, %d ran live\n", ev.Reload, last.Stats.Replayed, last.Stats.Live)
				}
				fmt.Fprintf(a.stderr, "» watching %d files; save to re-run, Ctrl-C to stop\n", len(ev.Run.Files()))
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
