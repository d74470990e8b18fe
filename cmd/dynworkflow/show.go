package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

func (a *app) showCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "show ID",
		Aliases: []string{"status"},
		Short:   "Show a run: status, calls with prompts and results, usage, logs",
		Args:    exactArgs(1, "show needs a run id (see: dynworkflow list)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := a.inspect(cmd, args[0])
			if err != nil {
				return err
			}
			if a.json {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(d)
			}
			s := d.Summary
			fmt.Fprintf(a.stdout, "%s  %s  %s\n", s.RunID, s.Status, s.Name)
			if s.PauseReason != "" {
				fmt.Fprintf(a.stdout, "paused: %s\n", s.PauseReason)
			}
			if s.Error != "" {
				fmt.Fprintf(a.stdout, "error: %s\n", s.Error)
			}
			fmt.Fprintf(a.stdout, "script %s (%.12s) · executor %s · %d agents (%d replayed, %d live, %d failed) · tokens %s in / %s out\n",
				d.Script.Path, d.Script.Hash, d.Options.Executor, s.Stats.Agents, s.Stats.Replayed, s.Stats.Live, s.Stats.Failed,
				humanCount(s.Stats.InputTokens), humanCount(s.Stats.OutputTokens))
			for _, e := range d.Executions {
				end := "running"
				if e.End != nil {
					end = e.End.Status
				}
				fmt.Fprintf(a.stdout, "execution %d: %s, %s\n", e.Epoch, e.Rule, end)
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "\nCALL\tSTATUS\tLABEL\tTOKENS\tRESULT")
			for _, c := range d.Calls {
				tokens := ""
				if c.Usage != nil {
					tokens = humanCount(c.Usage.InputTokens + c.Usage.OutputTokens)
				}
				result := string(c.Result)
				if c.Error != "" {
					result = "error: " + c.Error
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Path, c.Status, c.Label, tokens, clip(result, 80))
			}
			_ = tw.Flush()
			if len(d.Result) > 0 {
				fmt.Fprintln(a.stdout, "\nresult:")
				printResult(a.stdout, d.Result)
			}
			return nil
		},
	}
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

// inspect reads a run's detail: from Temporal for a run there, else from
// the journal.
func (a *app) inspect(cmd *cobra.Command, id string) (*engine.Detail, error) {
	if e, ok, err := a.findTemporal(cmd, &backendFlags{}, id); err != nil {
		return nil, err
	} else if ok {
		return a.showTemporal(cmd.Context(), e)
	}
	rt, err := a.runtime(simulate.Config{})
	if err != nil {
		return nil, err
	}
	return rt.Inspect(id)
}
