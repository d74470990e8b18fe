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
	"github.com/dynworkflow/dynworkflow/internal/execconfig"
)

// follow shows a run's progress in view (subscribed before the run
// started) until it ends, turns Ctrl-C into pause (then stop), prints the
// outcome and returns the exit code as an error.
func (a *app) follow(ctx context.Context, rt *engine.Runtime, r *engine.Run, view *progressView) error {
	out := a.watch(ctx, rt, r, view)
	a.printOutcome(out)
	a.noteKeptWorktrees(r)
	return exitFor(out.Status, out.Stats.ScriptErrors)
}

// watch is follow without the outcome's report: it returns the outcome.
func (a *app) watch(ctx context.Context, rt *engine.Runtime, r *engine.Run, view *progressView) engine.Outcome {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)

	view.start(r)
	a.startupOver()
	if r.Progress().SimulatedAnswers && !a.json {
		view.note(simulatedNote)
	}
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
			out.Status, out.PauseReason, out.ResumeAt = engine.StatusStopped, "", nil
		}
	}
	return out
}

// exitFor is the exit code of a run that ended in status s after its
// script threw scriptErrors times in fan-out branches that became null.
func exitFor(s engine.Status, scriptErrors int) error {
	switch s {
	case engine.StatusCompleted:
		if scriptErrors > 0 {
			return &exitError{code: exitScriptErrors}
		}
		return nil
	case engine.StatusPaused:
		return &exitError{code: exitPaused}
	default:
		return &exitError{code: exitFailed}
	}
}

func (a *app) printOutcome(o engine.Outcome) {
	if a.json {
		_ = encodeJSON(a.stdout, o)
		return
	}
	for _, w := range o.Warnings {
		fmt.Fprintf(a.stderr, "warning: %s\n", w)
	}
	st := o.Stats
	status := string(o.Status)
	if st.ScriptErrors > 0 && o.Status == engine.StatusCompleted {
		// Not a success: the first thing the line says.
		status = "completed with " + plural(st.ScriptErrors, "script error")
	}
	parts := []string{
		fmt.Sprintf("%s %s in %s", o.RunID, status, humanMs(o.DurationMs)),
		fmt.Sprintf("%s (%d replayed, %d live, %d failed)", plural(st.Agents, "agent"), st.Replayed, st.Live, st.Failed),
	}
	if st.Retried > 0 {
		parts = append(parts, fmt.Sprintf("%d retried", st.Retried))
	}
	parts = append(parts, fmt.Sprintf("tokens %s in / %s out", humanCount(st.InputTokens), humanCount(st.OutputTokens)))
	if spent := spendLine(st.CostUSD, o.MaxCostUSD, 0); spent != "" {
		parts = append(parts, spent)
	}
	if o.SimulatedAnswers {
		parts = append(parts, "simulated answers")
	}
	if st.ScriptErrors > 0 && o.Status != engine.StatusCompleted {
		parts = append(parts, plural(st.ScriptErrors, "script error"))
	}
	fmt.Fprintln(a.stderr, joinToWidth(parts, terminalWidth(a.stderr)))
	printFailures(a.stderr, o.Failures)
	if o.ErrorCode != engine.CodeScriptError { // the failure below says it
		printScriptErrors(a.stderr, o.RunID, o.ScriptErrors, o.Status == engine.StatusCompleted)
	}
	switch o.Status {
	case engine.StatusCompleted:
		printResult(a.stdout, o.Result, isTerminal(a.stdout))
	case engine.StatusPaused:
		reason := ""
		if o.PauseReason != "" {
			reason = " (" + escapeControls(o.PauseReason, true) + ")"
		}
		if o.ResumeAt != nil {
			fmt.Fprintf(a.stderr, "paused%s; resume at the reset with: dynworkflow resume --wait %s\n", reason, o.RunID)
			break
		}
		fmt.Fprintf(a.stderr, "paused%s; resume with: dynworkflow resume %s\n", reason, o.RunID)
	case engine.StatusFailed:
		code := ""
		if o.ErrorCode != "" && !strings.Contains(o.Error, o.ErrorCode) {
			code = " (" + o.ErrorCode + ")"
		}
		fmt.Fprintf(a.stderr, "failed%s: %s\nfinished calls are journaled; after a fix, resume with: dynworkflow resume %s --script FILE\n", code, escapeControls(o.Error, false), o.RunID)
	case engine.StatusStopped:
		fmt.Fprintln(a.stderr, "stopped")
	}
}

// printFailures prints the failed calls grouped by cause: how many, the
// first of them, and what they said.
func printFailures(w io.Writer, groups []engine.FailureGroup) {
	if len(groups) == 0 {
		return
	}
	total := 0
	for _, g := range groups {
		total += g.Count
	}
	fmt.Fprintf(w, "%s failed, by cause (see: dynworkflow show RUN):\n", plural(total, "call"))
	for _, g := range groups {
		fmt.Fprintf(w, "  %4d× %-9s first %s: %s\n", g.Count, g.Class, g.FirstPath, escapeControls(clipText(g.Message, 1, 160), true))
	}
}

// printScriptErrors prints the errors the script threw in branches that
// became null, by cause, with where each was thrown, and the command that
// shows them all when runID is set. A run that completed with them is not
// a success, and the lines say so.
func printScriptErrors(w io.Writer, runID string, groups []engine.ScriptErrorGroup, completed bool) {
	if len(groups) == 0 {
		return
	}
	what := "branches of parallel()/pipeline() threw and became null"
	if completed {
		what += ", so the result lacks their work; --strict fails a run at the first"
	}
	if runID != "" {
		what += " (see: dynworkflow show " + runID + ")"
	}
	fmt.Fprintf(w, "%s: %s:\n", plural(engine.CountScriptErrors(groups), "script error"), what)
	for _, g := range groups {
		where := g.Position
		if where == "" {
			where = "at an unknown place"
		}
		fmt.Fprintf(w, "  %4d× %s: %s (first %s)\n", g.Count, escapeControls(where, true), escapeControls(clipText(g.Message, 1, 160), true), g.FirstPath)
	}
}

// simulatedNote tells a user that the answers they are about to see are
// made up, when they did not ask for that.
const simulatedNote = "simulated answers: no executor was chosen, so the built-in simulator answers. Pick one with --executor codex|claude-code|pi, or defaultExecutor in " + execconfig.ProjectFile

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
