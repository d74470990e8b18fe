package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// listReasonWidth is how many columns of a pause reason list prints.
const listReasonWidth = 60

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
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(sums)
			}
			if len(sums) == 0 {
				if !hidden {
					fmt.Fprintln(a.stderr, "no runs yet; start one with: dynworkflow run FILE")
				}
				return nil
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN ID\tSTATUS\tNAME\tAGENTS\tTOKENS\tCOST\tSTARTED")
			for _, s := range sums {
				status := s.Status
				if s.PauseReason != "" && s.PauseReason != s.Status {
					// Cut, so that one long reason does not widen every
					// row of the table: show prints it whole.
					status += " (" + cutWidth(escapeControls(s.PauseReason, true), listReasonWidth) + ")"
				}
				if s.Foreign != "" {
					status += " [" + s.Foreign + " runtime]"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", s.RunID, status, escapeControls(s.Name, true), s.Stats.Agents,
					humanCount(s.Stats.InputTokens+s.Stats.OutputTokens), listCost(s.Stats.CostUSD, s.MaxCostUSD), s.StartedAt.Local().Format(time.DateTime))
			}
			return tw.Flush()
		},
	}
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
