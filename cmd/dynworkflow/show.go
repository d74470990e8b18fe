package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/web"
)

// How much of a prompt and a result show prints per call; show RUN CALL
// prints them whole.
const (
	promptLines   = 12
	promptChars   = 2000
	resultLines   = 4
	resultChars   = 400
	statusWaiting = "waiting"
)

func (a *app) showCommand() *cobra.Command {
	var byPath bool
	cmd := &cobra.Command{
		Use:     "show RUN [CALL]",
		Aliases: []string{"status"},
		Short:   "Show a run: status, usage, and its calls and log lines in time order",
		Long: `Show a run: its status, usage, executions and pending checkpoint, then its
calls (prompt, result, failure reason, tokens, time) and log lines, in the
order they happened. RUN is a run id, a prefix only one run id starts with,
or "last" for the newest run.

With CALL, show one call whole: prompt, result pretty-printed, failure,
history, timings and attempts. CALL is a call path (/pipe.0/3/s1/agent.0),
the number N the timeline shows as #N (type 3 or '#3': a shell reads an
unquoted #3 as a comment), or a prefix of one path.

Text from agents and scripts is shown with control characters escaped
(\x1b, \r); --json prints the run's detail (or the call) unchanged.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageErrorf("show needs a run id, and optionally a call (see: dynworkflow list)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			d, waiting, err := a.inspect(cmd, args[0])
			if err != nil {
				return err
			}
			if len(waiting) > 0 && d.Summary.Status == string(engine.StatusRunning) {
				d.Summary.Status = statusWaiting
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			if len(args) == 2 {
				c, err := findCall(d, args[1])
				if err != nil {
					return err
				}
				if a.json {
					return encodeJSON(out, c)
				}
				printCall(out, d, c)
				return nil
			}
			if a.json {
				return encodeJSON(out, d)
			}
			printRun(out, d, waiting, byPath)
			return nil
		},
	}
	cmd.Flags().BoolVar(&byPath, "by-path", false, "list the calls in call-path order instead of time order")
	return cmd
}

// runCheckpoints lists the checkpoints run id waits on, from the live
// runtime: only there do checkpoints wait for a human.
func (a *app) runCheckpoints(cmd *cobra.Command, id string) []web.Checkpoint {
	cps, _ := a.pendingCheckpoints(cmd)
	var out []web.Checkpoint
	for _, cp := range cps {
		if cp.RunID == id {
			out = append(out, cp)
		}
	}
	return out
}

// entry is one line of a run's timeline: a call or a log line.
type entry struct {
	seq  int64
	at   time.Time
	call *engine.CallDetail
	log  *engine.LogLine
}

// timeline merges the calls and the log in the order they happened, the
// journal's: a call is placed when it started (a checkpoint, which has no
// start, when it was answered). Times only break ties of a journal older
// than the sequence numbers in the detail.
func timeline(d *engine.Detail, byPath bool) []entry {
	var es []entry
	for i := range d.Calls {
		c := &d.Calls[i]
		at := c.StartedAt
		if at.IsZero() {
			at = c.EndedAt
		}
		es = append(es, entry{seq: c.Seq, at: at, call: c})
	}
	if byPath {
		return es
	}
	for i := range d.Logs {
		es = append(es, entry{seq: d.Logs[i].Seq, at: d.Logs[i].Time, log: &d.Logs[i]})
	}
	slices.SortStableFunc(es, func(a, b entry) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return es
}

func printRun(w io.Writer, d *engine.Detail, waiting []web.Checkpoint, byPath bool) {
	s := d.Summary
	status := s.Status
	if n := s.Stats.ScriptErrors; n > 0 {
		status += " with " + plural(n, "script error")
	}
	fmt.Fprintf(w, "%s · %s", s.RunID, status)
	if s.Name != "" {
		fmt.Fprintf(w, " · %s", escapeControls(s.Name, true))
	}
	fmt.Fprintln(w)
	if s.Description != "" {
		fmt.Fprintf(w, "  %s\n", escapeControls(s.Description, true))
	}
	if s.Foreign == store.ForeignNode {
		fmt.Fprintln(w, "  a run of the Node runtime (@fish59fish/dynamic-workflows), shown read-only")
	}
	fmt.Fprintln(w)
	field := func(name, format string, args ...any) {
		fmt.Fprintf(w, "%-11s %s\n", name, fmt.Sprintf(format, args...))
	}
	if s.PauseReason != "" {
		field("Paused", "%s", escapeControls(s.PauseReason, true))
	}
	if s.Error != "" {
		field("Error", "%s", indentRest(escapeControls(s.Error, false), 12))
	}
	for _, dm := range d.Damaged {
		field("Damaged", "%s", escapeControls(dm.String(), true))
	}
	if d.TornBytes > 0 {
		field("Torn", "the journal ends with %d bytes of a record a crash cut short; the next resume sets them aside", d.TornBytes)
	}
	field("Script", "%s (%.12s)", escapeControls(d.Script.Path, true), d.Script.Hash)
	if len(d.Args) > 0 {
		field("Args", "%s", escapeControls(string(d.Args), true))
	}
	executor := d.Options.Executor
	if d.SimulatedAnswers {
		executor += " (simulated answers: no executor was chosen)"
	}
	field("Executor", "%s", executor)
	if !s.StartedAt.IsZero() {
		took := ""
		if s.EndedAt != nil {
			took = " · took " + tookText(d, *s.EndedAt)
		}
		field("Started", "%s%s", s.StartedAt.Local().Format(time.DateTime), took)
	}
	field("Calls", "%s", callCounts(d))
	usage := fmt.Sprintf("%s in / %s out", humanCount(s.Stats.InputTokens), humanCount(s.Stats.OutputTokens))
	if s.Stats.CachedInputTokens > 0 {
		usage += fmt.Sprintf(" (%s cached)", humanCount(s.Stats.CachedInputTokens))
	}
	if spent := spendLine(s.Stats.CostUSD, s.MaxCostUSD, 0); spent != "" {
		usage += " · " + spent
	}
	field("Tokens", "%s", usage)
	if f := d.Fork; f != nil {
		change := "ran again as it was"
		switch {
		case f.Prompt != nil:
			change = "with a new prompt"
		case f.Answer != nil:
			change = "given the answer " + escapeControls(clipText(string(f.Answer), 1, 80), true)
		}
		field("Forked", "from %s at %s (%s)", f.RunID, f.Path, change)
	}
	for _, cp := range waiting {
		field("Waiting", "checkpoint %s (%s) at %s: %s", cp.ID, cp.Kind, cp.Path, escapeControls(cp.Prompt, true))
		fmt.Fprintf(w, "%-11s answer with: dynworkflow respond %s %s\n", "", cp.ID, answerHint(cp))
	}
	if len(d.Failures) > 0 {
		fmt.Fprintln(w)
		printFailures(w, d.Failures)
	}
	if len(d.ScriptErrors) > 0 {
		fmt.Fprintln(w)
		printScriptErrors(w, "", d.ScriptErrors, s.Status == string(engine.StatusCompleted))
	}

	fmt.Fprintln(w, "\nExecutions")
	for i, e := range d.Executions {
		end := "running"
		switch {
		case e.End != nil:
			end = e.End.Status
			if e.End.PauseReason != "" {
				end += " (" + escapeControls(e.End.PauseReason, true) + ")"
			}
			if n := e.End.ScriptErrors; n > 0 {
				end += " · " + plural(n, "script error")
			}
		case i < len(d.Executions)-1 || (s.Status != string(engine.StatusRunning) && s.Status != statusWaiting):
			end = "ended without a record: the process running it exited"
		}
		if !e.EndedAt.IsZero() {
			end += " · " + humanMs(e.EndedAt.Sub(e.StartedAt).Milliseconds())
		}
		fmt.Fprintf(w, "  %d  %-6s %s  %s\n", e.Epoch, e.Rule, e.StartedAt.Local().Format(time.DateTime), end)
	}

	title := "Timeline"
	if byPath {
		title = "Calls (by path)"
	}
	fmt.Fprintf(w, "\n%s\n", title)
	n := 0
	for _, e := range timeline(d, byPath) {
		if e.log != nil {
			l := e.log
			text := escapeControls(l.Message, false)
			switch l.Level {
			case "phase":
				text = "── " + text
			case "info", "":
			default:
				text = l.Level + ": " + text
			}
			fmt.Fprintf(w, "  %s  %s\n", clock(l.Time), indentRest(text, 16))
			continue
		}
		n++
		printCallEntry(w, n, e.call)
	}
	if len(d.Calls) == 0 && len(d.Logs) == 0 {
		fmt.Fprintln(w, "  (nothing yet)")
	}
	printKeptWorktrees(w, d)
	if len(d.Result) > 0 && string(d.Result) != "null" {
		fmt.Fprintln(w, "\nResult")
		fmt.Fprintln(w, indentAll(clipText(prettyJSON(d.Result), 40, 8000), "  "))
	}
	if len(d.Calls) > 0 {
		fmt.Fprintf(w, "\nOne call whole: dynworkflow show %s N (the call's #N) or PATH\n", s.RunID)
	}
}

// printCallEntry prints a call of the timeline: a head line, then its
// prompt, answer or failure, indented.
func printCallEntry(w io.Writer, n int, c *engine.CallDetail) {
	status := c.Status
	head := fmt.Sprintf("  %s  #%-3d %s  %s", clock(entryTime(c)), n, c.Path, status)
	if c.Label != "" {
		head += "  " + escapeControls(c.Label, true)
	}
	var facts []string
	if c.Phase != "" {
		facts = append(facts, "phase "+escapeControls(c.Phase, true))
	}
	if c.Permissions != "" && c.Permissions != executors.WorkspaceWrite {
		facts = append(facts, string(c.Permissions))
	}
	if c.Usage != nil {
		facts = append(facts, humanCount(c.Usage.Total())+" tokens")
	}
	if c.DurMs > 0 {
		facts = append(facts, humanMs(c.DurMs))
	}
	if c.Attempts > 1 {
		facts = append(facts, plural(c.Attempts, "attempt"))
	}
	if c.Source != "" && c.Source != "live" {
		facts = append(facts, c.Source)
	}
	if len(facts) > 0 {
		head += "  (" + strings.Join(facts, " · ") + ")"
	}
	fmt.Fprintln(w, head)
	const pad = "        "
	if c.Prompt != "" {
		label := "prompt: "
		if c.Kind == "checkpoint" {
			label = "asked:  "
		}
		fmt.Fprintln(w, pad+label+indentRest(clipText(escapeControls(c.Prompt, false), promptLines, promptChars), len(pad)+len(label)))
	}
	if c.Activity != nil && status == "running" {
		fmt.Fprintln(w, pad+"now:    "+activityLine(*c.Activity, time.Now()))
	}
	switch {
	case c.Error != "":
		fmt.Fprintln(w, pad+"error:  "+indentRest(clipText(escapeControls(c.Error, false), promptLines, promptChars), len(pad)+8))
	case len(c.Result) > 0:
		label := "result: "
		if c.Kind == "checkpoint" {
			label = "answer: "
		}
		fmt.Fprintln(w, pad+label+indentRest(clipText(prettyJSON(c.Result), resultLines, resultChars), len(pad)+len(label)))
	}
}

func entryTime(c *engine.CallDetail) time.Time {
	if !c.StartedAt.IsZero() {
		return c.StartedAt
	}
	return c.EndedAt
}

// callCounts counts the run's calls from the journal, which knows them
// even when the run ended without an end record.
func callCounts(d *engine.Detail) string {
	var agents, done, failed, running, replayed, checkpoints int
	for _, c := range d.Calls {
		if c.Kind == "checkpoint" {
			checkpoints++
			continue
		}
		agents++
		switch c.Status {
		case "done":
			done++
		case "failed":
			failed++
		default:
			running++
		}
	}
	replayed = d.Summary.Stats.Replayed
	parts := []string{plural(agents, "agent"), fmt.Sprintf("%d done", done)}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", failed))
	}
	if running > 0 {
		word := "running"
		if d.Summary.Status != string(engine.StatusRunning) && d.Summary.Status != statusWaiting {
			word = "interrupted"
		}
		parts = append(parts, fmt.Sprintf("%d %s", running, word))
	}
	if replayed > 0 {
		parts = append(parts, fmt.Sprintf("%d replayed in the last execution", replayed))
	}
	if n := d.Summary.Stats.Retried; n > 0 {
		parts = append(parts, fmt.Sprintf("%d retried in the last execution", n))
	}
	if checkpoints > 0 {
		parts = append(parts, plural(checkpoints, "checkpoint"))
	}
	return strings.Join(parts, " · ")
}

// executionStart is when the latest execution started.
// tookText is how long a run that ended at end ran: every execution's
// time, a paused or crashed one's included, and the latest one's apart
// when there were several.
func tookText(d *engine.Detail, end time.Time) string {
	last := end.Sub(executionStart(d))
	total := last
	for i, e := range d.Executions {
		if i < len(d.Executions)-1 && !e.EndedAt.IsZero() && e.EndedAt.After(e.StartedAt) {
			total += e.EndedAt.Sub(e.StartedAt)
		}
	}
	if len(d.Executions) < 2 {
		return humanMs(total.Milliseconds())
	}
	return fmt.Sprintf("%s in %d executions (the last %s)", humanMs(total.Milliseconds()), len(d.Executions), humanMs(last.Milliseconds()))
}

func executionStart(d *engine.Detail) time.Time {
	if n := len(d.Executions); n > 0 {
		return d.Executions[n-1].StartedAt
	}
	return d.Summary.StartedAt
}

// errNoCall is a call the user named that the run does not have: not
// found, as the API would say.
var errNoCall error = notFound("no such call")

// findCall finds the call the user named: its path, its #N in the
// timeline, or a prefix of one path.
func findCall(d *engine.Detail, typed string) (*engine.CallDetail, error) {
	if n, err := strconv.Atoi(strings.TrimPrefix(typed, "#")); err == nil {
		es := timeline(d, false)
		i := 0
		for _, e := range es {
			if e.call == nil {
				continue
			}
			i++
			if i == n {
				return e.call, nil
			}
		}
		return nil, fmt.Errorf("%w: run %s has %s, so there is no #%d", errNoCall, d.Summary.RunID, plural(i, "call"), n)
	}
	if !strings.HasPrefix(typed, "/") {
		var labeled []*engine.CallDetail
		for i := range d.Calls {
			if d.Calls[i].Label == typed {
				labeled = append(labeled, &d.Calls[i])
			}
		}
		if len(labeled) == 1 {
			return labeled[0], nil
		}
	}
	var matches, scoped []*engine.CallDetail
	var paths []string
	for i := range d.Calls {
		c := &d.Calls[i]
		if c.Path == typed {
			return c, nil
		}
		paths = append(paths, c.Path)
		if rest, ok := strings.CutPrefix(c.Path, typed); ok {
			matches = append(matches, c)
			if strings.HasPrefix(rest, "/") || strings.HasSuffix(typed, "/") {
				scoped = append(scoped, c)
			}
		}
	}
	// "/par.0/1" is the scope of /par.0/1/agent.0, not the start of
	// /par.0/10/agent.0.
	if len(scoped) == 1 {
		return scoped[0], nil
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return nil, fmt.Errorf("%w: run %s has no call %s%s", errNoCall, d.Summary.RunID, typed, didYouMean(typed, paths))
	}
	var names []string
	for _, m := range matches[:min(len(matches), 5)] {
		names = append(names, m.Path)
	}
	return nil, &exitError{code: exitFailed, kind: codeAmbiguousID,
		err: fmt.Errorf("%q is the start of %d call paths (%s…); type more of it, or give its number N", typed, len(matches), strings.Join(names, ", "))}
}

// printCall prints one call whole.
func printCall(w io.Writer, d *engine.Detail, c *engine.CallDetail) {
	fmt.Fprintf(w, "%s %s · %s · %s\n\n", d.Summary.RunID, c.Path, c.Kind, c.Status)
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(w, "%-11s %s\n", name, value)
		}
	}
	field("Label", escapeControls(c.Label, true))
	field("Phase", escapeControls(c.Phase, true))
	exec := c.Executor
	if c.Model != "" {
		exec += " · model " + escapeControls(c.Model, true)
	}
	if c.Provider != "" {
		exec += " · provider " + escapeControls(c.Provider, true)
	}
	field("Executor", exec)
	if c.Route != "" {
		field("Route", escapeControls(c.Route, true))
	}
	field("Permissions", string(c.Permissions))
	field("Answer", c.Source)
	if c.Attempts > 0 {
		field("Attempts", strconv.Itoa(c.Attempts))
	}
	if !c.StartedAt.IsZero() {
		field("Started", c.StartedAt.Local().Format("2006-01-02 15:04:05.000"))
	}
	if !c.EndedAt.IsZero() {
		field("Ended", c.EndedAt.Local().Format("2006-01-02 15:04:05.000"))
	}
	switch {
	case c.DurMs > 0:
		field("Took", humanMs(c.DurMs))
	case !c.StartedAt.IsZero() && !c.EndedAt.IsZero():
		field("Took", humanMs(c.EndedAt.Sub(c.StartedAt).Milliseconds()))
	}
	if u := c.Usage; u != nil {
		usage := fmt.Sprintf("%d in / %d out", u.InputTokens, u.OutputTokens)
		if u.CachedInputTokens > 0 {
			usage += fmt.Sprintf(" (%d cached)", u.CachedInputTokens)
		}
		if u.CostUSD > 0 {
			usage += fmt.Sprintf(" · $%.4f", u.CostUSD)
		}
		field("Tokens", usage)
	}
	field("Execution", strconv.Itoa(c.Epoch))
	field("Worktree", worktreeLine(c.Worktree))
	if c.Activity != nil {
		field("Activity", activityLine(*c.Activity, time.Now()))
	}
	section := func(title, body string) {
		fmt.Fprintf(w, "\n%s\n%s\n", title, indentAll(body, "  "))
	}
	if c.Prompt != "" {
		section("Prompt", escapeControls(c.Prompt, false))
	}
	if c.Error != "" {
		section("Error", escapeControls(c.Error, false))
	}
	if len(c.Result) > 0 {
		section("Result", prettyJSON(c.Result))
	}
	if len(c.Retries) > 0 {
		var b strings.Builder
		for i, rt := range c.Retries {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "%s %s: %s", clock(rt.At), cmp.Or(rt.Class, "retry"), indentRest(escapeControls(rt.Message, false), 14+len(rt.Class)))
		}
		section("Retries", b.String())
	}
	if len(c.History) > 0 {
		var b strings.Builder
		for i, h := range c.History {
			if i > 0 {
				b.WriteByte('\n')
			}
			who := h.Kind
			switch {
			case h.Role != "":
				who = h.Role
			case h.Name != "":
				who = h.Kind + " " + h.Name
			}
			if h.IsError {
				who += " (error)"
			}
			fmt.Fprintf(&b, "%s: %s", escapeControls(who, true), indentRest(escapeControls(h.Text, false), len(who)+2))
		}
		section("History", b.String())
	}
}

// activityLine says what a running call did last and when, and how long
// it has gone without progress when that is a while.
func activityLine(a engine.CallActivity, now time.Time) string {
	line := escapeControls(callpolicy.Describe(a.Activity), true) + " · " + agoText(now.Sub(a.Activity.At)) +
		" (" + a.Activity.At.Local().Format(time.TimeOnly) + ")"
	if quiet := a.Quiet(now); quiet >= 10*time.Second && quiet > now.Sub(a.Activity.At)+time.Second {
		line += " · no progress for " + humanMs(quiet.Truncate(time.Second).Milliseconds())
	}
	return line
}

// agoText is how long ago something was: "3s ago".
func agoText(d time.Duration) string {
	if d < time.Second {
		return "just now"
	}
	return humanMs(d.Truncate(time.Second).Milliseconds()) + " ago"
}

// prettyJSON renders a JSON value for reading: a string as its text,
// anything else indented; control characters escaped either way.
func prettyJSON(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return escapeControls(s, false)
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return escapeControls(string(raw), false)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	// Strings inside are JSON-escaped already: no raw control character
	// is left.
	return string(b)
}

// clipText keeps the first lines and chars of s, saying how much it left
// out.
func clipText(s string, lines, chars int) string {
	cut := false
	if ls := strings.Split(s, "\n"); len(ls) > lines {
		s, cut = strings.Join(ls[:lines], "\n"), true
	}
	if r := []rune(s); len(r) > chars {
		s, cut = string(r[:chars]), true
	}
	if cut {
		s += " …"
	}
	return s
}

// indentRest indents every line of s but the first by n spaces.
func indentRest(s string, n int) string {
	return strings.ReplaceAll(s, "\n", "\n"+strings.Repeat(" ", n))
}

// indentAll indents every line of s.
func indentAll(s, pad string) string { return pad + strings.ReplaceAll(s, "\n", "\n"+pad) }

// clock is a time of day to the millisecond, in local time.
func clock(t time.Time) string {
	if t.IsZero() {
		return strings.Repeat(" ", 12)
	}
	return t.Local().Format("15:04:05.000")
}

// inspect reads a run's detail and the checkpoints it waits on: from
// Temporal for a run there, else from the journal and the live runtime.
func (a *app) inspect(cmd *cobra.Command, typed string) (*engine.Detail, []web.Checkpoint, error) {
	id, e, onTemporal, err := a.resolveRun(cmd, &backendFlags{}, typed)
	if err != nil {
		return nil, nil, err
	}
	if onTemporal {
		return a.showTemporal(cmd.Context(), e)
	}
	rt, err := a.runtime(simulate.Config{})
	if err != nil {
		return nil, nil, err
	}
	d, err := rt.Inspect(id)
	if err != nil {
		return nil, nil, err
	}
	return d, a.runCheckpoints(cmd, id), nil
}
