package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// listNoteWidth is how many columns of a run's note (its pause reason,
// its error) list prints when it does not write to a terminal; on one,
// the note gets what is left of its width.
const listNoteWidth = 60

// listNoteMinWidth is the narrowest note column list makes; on a terminal
// that leaves less, notes go on lines of their own.
const listNoteMinWidth = 30

// What list gives up on a terminal too narrow for its rows: the year and
// the seconds of a run's start, then the end of a long name, down to
// listNameMinWidth columns.
const (
	listName         = 2
	listStarted      = 6
	listShortTime    = "01-02 15:04"
	listNameMinWidth = 12
)

func (a *app) listCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the project's runs, newest first",
		Args:    exactArgs(0, "list takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The runs on Temporal first: a build without Temporal hands
			// the listing over before doing any of it, or lists what it
			// can and says what it leaves out.
			remote, err := a.temporalRuns(cmd.Context())
			hidden := errors.Is(err, errNoCompanion)
			if hidden {
				fmt.Fprintln(a.stderr, "dynworkflow:", err)
			} else if err != nil {
				return err
			}
			rt, err := a.runtime(simulate.Config{})
			if err != nil {
				return err
			}
			sums, err := rt.List()
			if err != nil {
				return err
			}
			// A run blocked on a human is waiting: the live runtime
			// knows which.
			if cps, _ := a.pendingCheckpoints(cmd); len(cps) > 0 {
				waiting := map[string]bool{}
				for _, cp := range cps {
					waiting[cp.RunID] = true
				}
				for i := range sums {
					if waiting[sums[i].RunID] && sums[i].Status == string(engine.StatusRunning) {
						sums[i].Status = statusWaiting
					}
				}
			}
			sums = mergeSummaries(sums, remote)
			if a.json {
				if sums == nil {
					sums = sums[:0]
				}
				return encodeJSON(a.stdout, sums)
			}
			if len(sums) == 0 {
				if !hidden {
					fmt.Fprintln(a.stderr, "no runs yet; start one with: dynworkflow run FILE")
				}
				return nil
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			printRunTable(out, sums, terminalWidth(a.stdout))
			return nil
		},
	}
}

// printRunTable prints the runs one a line, in columns, each line ending
// with its note: why it paused or failed, the script errors and failed
// calls of a run that completed. The note comes last and is cut to what
// is left of the terminal's width, so that one long pause reason neither
// widens every row nor wraps them; show prints it whole.
func printRunTable(w io.Writer, sums []store.Summary, width int) {
	header := []string{"RUN ID", "STATUS", "NAME", "AGENTS", "TOKENS", "COST", "STARTED"}
	rows := make([][]string, len(sums))
	for i, s := range sums {
		status := s.Status
		if s.Foreign != "" {
			status += " [" + s.Foreign + " runtime]"
		}
		rows[i] = []string{s.RunID, status, escapeControls(s.Name, true), strconv.Itoa(s.Stats.Agents),
			humanCount(s.Stats.InputTokens + s.Stats.OutputTokens), listCost(s.Stats.CostUSD, s.MaxCostUSD), s.StartedAt.Local().Format(time.DateTime)}
	}
	widths := func() (cols []int, used int) {
		cols = make([]int, len(header))
		for _, r := range append([][]string{header}, rows...) {
			for c, cell := range r {
				cols[c] = max(cols[c], textWidth(cell))
			}
		}
		for _, n := range cols {
			used += n + 2
		}
		return cols, used
	}
	cols, used := widths()
	// A row wider than the terminal wraps, and so does every one after
	// it. One column spare: a line exactly as wide as the terminal wraps
	// on some of them.
	over := func() int { return used - 2 - (width - 1) }
	if width > 0 && over() > 0 {
		for i, s := range sums {
			rows[i][listStarted] = s.StartedAt.Local().Format(listShortTime)
		}
		cols, used = widths()
	}
	if width > 0 && over() > 0 && cols[listName] > listNameMinWidth {
		cut := min(over(), cols[listName]-listNameMinWidth)
		for _, r := range rows {
			r[listName] = cutWidth(r[listName], cols[listName]-cut)
		}
		cols, used = widths()
	}
	line := func(cells []string, note string) {
		var b strings.Builder
		for c, cell := range cells {
			b.WriteString(cell)
			if c < len(cells)-1 || note != "" {
				b.WriteString(strings.Repeat(" ", cols[c]-textWidth(cell)+2))
			}
		}
		b.WriteString(note)
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	room := listNoteWidth
	if width > 0 {
		room = width - used - 1
	}
	if room >= listNoteMinWidth {
		line(header, cutWidth("NOTE", room))
		for i, s := range sums {
			line(rows[i], cutWidth(escapeControls(runNote(s), true), room))
		}
		return
	}
	// Too narrow a terminal for a note column: a run's note goes on a
	// line of its own under it, indented, cut to the terminal's width.
	line(header, "")
	for i, s := range sums {
		line(rows[i], "")
		if note := runNote(s); note != "" {
			fmt.Fprintln(w, "  "+cutWidth(escapeControls(note, true), width-3))
		}
	}
}

// runNote is what list says of a run besides its status: why it paused or
// failed, and what its latest execution did not do.
func runNote(s store.Summary) string {
	var parts []string
	switch {
	case s.PauseReason != "" && s.PauseReason != s.Status:
		parts = append(parts, s.PauseReason)
	case s.Status == string(engine.StatusFailed) || s.Status == string(engine.StatusDamaged):
		if s.Error != "" {
			parts = append(parts, firstLine(s.Error))
		}
	}
	if n := s.Stats.ScriptErrors; n > 0 {
		parts = append(parts, plural(n, "script error")+" (branches became null)")
	}
	if n := s.Stats.Failed; n > 0 {
		parts = append(parts, plural(n, "failed call"))
	}
	return strings.Join(parts, " · ")
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// listCost is a run's spend for list: "$1.20", "$1.20/$5.00" under a cap,
// "-" for nothing.
func listCost(spent, limit float64) string {
	switch {
	case limit > 0:
		return "$" + dollars(spent) + "/$" + dollars(limit)
	case spent > 0:
		return "$" + dollars(spent)
	}
	return "-"
}
