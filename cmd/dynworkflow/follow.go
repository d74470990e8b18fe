package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/dynworkflow/dynworkflow/engine"
)

// follow shows a run's progress in view (subscribed before the run
// started) until it ends, turns Ctrl-C into pause (then stop), prints the
// outcome and returns the exit code as an error.
func (a *app) follow(ctx context.Context, rt *engine.Runtime, r *engine.Run, view *progressView) error {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	view.start(r)
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
	parts := []string{
		fmt.Sprintf("%s %s in %s", o.RunID, o.Status, humanMs(o.DurationMs)),
		fmt.Sprintf("%s (%d replayed, %d live, %d failed)", plural(st.Agents, "agent"), st.Replayed, st.Live, st.Failed),
		fmt.Sprintf("tokens %s in / %s out", humanCount(st.InputTokens), humanCount(st.OutputTokens)),
	}
	if st.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.2f", st.CostUSD))
	}
	fmt.Fprintln(a.stderr, joinToWidth(parts, terminalWidth(a.stderr)))
	switch o.Status {
	case engine.StatusCompleted:
		printResult(a.stdout, o.Result, isTerminal(a.stdout))
	case engine.StatusPaused:
		reason := ""
		if o.PauseReason != "" {
			reason = " (" + escapeControls(o.PauseReason, true) + ")"
		}
		fmt.Fprintf(a.stderr, "paused%s; resume with: dynworkflow resume %s\n", reason, o.RunID)
	case engine.StatusFailed:
		fmt.Fprintf(a.stderr, "failed: %s\nfinished calls are journaled; after a fix, resume with: dynworkflow resume %s --script FILE\n", escapeControls(o.Error, false), o.RunID)
	case engine.StatusStopped:
		fmt.Fprintln(a.stderr, "stopped")
	}
}

// printResult prints a string result as text and anything else as JSON.
// On a terminal, control characters in a string are escaped; piped, the
// string goes out as it is.
func printResult(w io.Writer, result json.RawMessage, terminal bool) {
	var s string
	if json.Unmarshal(result, &s) == nil {
		if terminal {
			s = escapeControls(s, false)
		}
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

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth is the width of the terminal w is, or 0.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}

// joinToWidth joins parts with " · ", starting a new, indented line
// before a part that would not fit in width columns (0: no limit).
func joinToWidth(parts []string, width int) string {
	var b strings.Builder
	col := 0
	for i, p := range parts {
		w := textWidth(p)
		switch {
		case i == 0:
		case width > 0 && col+3+w >= width:
			b.WriteString("\n  ")
			col = 2
		default:
			b.WriteString(" · ")
			col += 3
		}
		b.WriteString(p)
		col += w
	}
	return b.String()
}
