package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

func (a *app) listCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the project's runs, newest first",
		Args:    exactArgs(0, "list takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			rt, err := a.runtime(simulate.Config{})
			if err != nil {
				return err
			}
			sums, err := rt.List()
			if err != nil {
				return err
			}
			remote, err := a.temporalRuns(cmd.Context())
			if err != nil {
				return err
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
				fmt.Fprintln(a.stderr, "no runs yet; start one with: dynworkflow run FILE")
				return nil
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN ID\tSTATUS\tNAME\tAGENTS\tTOKENS\tSTARTED")
			for _, s := range sums {
				status := s.Status
				if s.PauseReason != "" {
					status += " (" + s.PauseReason + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", s.RunID, status, s.Name, s.Stats.Agents,
					humanCount(s.Stats.InputTokens+s.Stats.OutputTokens), s.StartedAt.Local().Format(time.DateTime))
			}
			return tw.Flush()
		},
	}
}
