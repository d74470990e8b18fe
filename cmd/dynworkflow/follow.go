package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/dynworkflow/dynworkflow/engine"
)

// follow shows a run's progress until it ends, turns Ctrl-C into pause
// (then stop), prints the outcome and returns the exit code as an error.
func (a *app) follow(ctx context.Context, rt *engine.Runtime, r *engine.Run) error {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	view := newProgressView(a.stderr, rt, r, !a.json && isTerminal(a.stderr))
	view.start()
	interrupts, stop := 0, false
	onSignal := func() {
		interrupts++
		if interrupts == 1 {
			view.note("pausing: the journal stays resumable; press Ctrl-C again to stop the run")
			_ = r.Pause()
			return
		}
		view.note("stopping")
		stop = true
		_ = r.Stop()
	}
wait:
	for {
		select {
		case <-r.Done():
			break wait
		case <-signals:
			onSignal()
		case <-ctx.Done():
			_ = r.Pause()
			<-r.Done()
			break wait
		}
	}
	// A second Ctrl-C may come as the pause settles: it still means stop.
	select {
	case <-signals:
		if interrupts > 0 {
			onSignal()
		}
	default:
	}
	view.stop()
	out := r.Outcome()
	if stop && out.Status == engine.StatusPaused {
		if err := rt.Stop(r.ID()); err != nil {
			fmt.Fprintln(a.stderr, "dynworkflow: stop:", err)
		} else {
			out.Status, out.PauseReason = engine.StatusStopped, ""
		}
	}
	a.printOutcome(out)
	a.noteKeptWorktrees(r)
	return exitFor(out.Status)
}

func exitFor(s engine.Status) error {
	switch s {
	case engine.StatusCompleted:
		return nil
	case engine.StatusPaused:
		return &exitError{code: exitPaused}
	default:
		return &exitError{code: exitFailed}
	}
}

func (a *app) printOutcome(o engine.Outcome) {
	if a.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(o)
		return
	}
	st := o.Stats
	fmt.Fprintf(a.stderr, "%s %s in %s · %d agents (%d replayed, %d live, %d failed) · tokens %s in / %s out\n",
		o.RunID, o.Status, humanMs(o.DurationMs), st.Agents, st.Replayed, st.Live, st.Failed,
		humanCount(st.InputTokens), humanCount(st.OutputTokens))
	switch o.Status {
	case engine.StatusCompleted:
		printResult(a.stdout, o.Result)
	case engine.StatusPaused:
		reason := o.PauseReason
		if reason == "" {
			reason = "paused"
		}
		fmt.Fprintf(a.stderr, "paused (%s); resume with: dynworkflow resume %s\n", reason, o.RunID)
	case engine.StatusFailed:
		fmt.Fprintf(a.stderr, "failed: %s\nfinished calls are journaled; after a fix, resume with: dynworkflow resume %s --script FILE\n", o.Error, o.RunID)
	case engine.StatusStopped:
		fmt.Fprintln(a.stderr, "stopped")
	}
}

// printResult prints a string result as text and anything else as JSON.
func printResult(w interface{ Write([]byte) (int, error) }, result json.RawMessage) {
	var s string
	if json.Unmarshal(result, &s) == nil {
		fmt.Fprintln(w, s)
		return
	}
	var v any
	if json.Unmarshal(result, &v) != nil {
		fmt.Fprintln(w, string(result))
		return
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintln(w, string(b))
}

func humanMs(ms int64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	case ms < 60_000:
		return fmt.Sprintf("%.1fs", float64(ms)/1000)
	default:
		return fmt.Sprintf("%dm%02ds", ms/60_000, (ms/1000)%60)
	}
}

func humanCount(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	default:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	}
}
