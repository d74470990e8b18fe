package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

func (a *app) pauseCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "pause ID",
		Short: "Pause a run executing in a live runtime",
		Args:  exactArgs(1, "pause needs a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := a.runtime(simulate.Config{})
			if err != nil {
				return err
			}
			if err := rt.Pause(args[0]); err != nil {
				return fmt.Errorf("%w (a run started with `dynworkflow run` pauses with Ctrl-C in its terminal)", err)
			}
			return nil
		},
	}
}

func (a *app) stopCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stop ID",
		Short: "Stop a run and make it non-resumable",
		Args:  exactArgs(1, "stop needs a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := a.runtime(simulate.Config{})
			if err != nil {
				return err
			}
			if err := rt.Stop(args[0]); err != nil {
				return err
			}
			a.done("stopped", args[0])
			return nil
		},
	}
}

func (a *app) deleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "delete ID",
		Aliases: []string{"rm"},
		Short:   "Delete a run's journal and snapshot",
		Args:    exactArgs(1, "delete needs a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := a.runtime(simulate.Config{})
			if err != nil {
				return err
			}
			if err := rt.Delete(args[0]); err != nil {
				return err
			}
			a.done("deleted", args[0])
			return nil
		},
	}
}

func (a *app) done(action, id string) {
	if a.json {
		fmt.Fprintf(a.stdout, "{\"ok\":true,\"action\":%q,\"runId\":%q}\n", action, id)
		return
	}
	fmt.Fprintf(a.stdout, "%s %s\n", action, id)
}
