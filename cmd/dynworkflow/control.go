package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/web"
)

func (a *app) pauseCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "pause ID",
		Short: "Pause a run executing in a live runtime",
		Args:  exactArgs(1, "pause needs a run id (see: dynworkflow list)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, e, onTemporal, err := a.resolveRun(cmd, &backendFlags{}, args[0])
			if err != nil {
				return err
			}
			if onTemporal {
				return a.controlTemporal(cmd.Context(), e, "paused")
			}
			if done, err := a.forwardControl(cmd.Context(), "paused", id, (*web.Client).Pause); done {
				return err
			}
			rt, err := a.runtime(simulate.Config{})
			if err != nil {
				return err
			}
			if err := rt.Pause(id); err != nil {
				if err := a.forwardForeign(cmd.Context(), "pause", "paused", id, "", err); err != nil {
					return fmt.Errorf("%w (a run started with `dynworkflow run` pauses with Ctrl-C in its terminal)", err)
				}
				return nil
			}
			a.done("paused", id)
			return nil
		},
	}
}

func (a *app) stopCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stop ID [CALL]",
		Short: "Stop a run and make it non-resumable, or stop one of its running calls",
		Long: `Stop a run: its live agents are killed and it can no longer be resumed.

With CALL (a path, the #N show gives it, or a label), stop only that running
agent call: its attempt is killed, the script gets null from it (a call with
required: true throws), and the run goes on. The call is journaled as failed,
class "stopped", so a resume runs it again. This needs the run's live runtime
(dynworkflow serve, run --ui) or Temporal.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageErrorf("stop needs a run id (see: dynworkflow list), and optionally one of its calls")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 {
				return a.controlCall(cmd, args[0], args[1], "stop")
			}
			id, e, onTemporal, err := a.resolveRun(cmd, &backendFlags{}, args[0])
			if err != nil {
				return err
			}
			if onTemporal {
				return a.controlTemporal(cmd.Context(), e, "stopped")
			}
			if done, err := a.forwardControl(cmd.Context(), "stopped", id, (*web.Client).Stop); done {
				return err
			}
			rt, err := a.runtime(simulate.Config{})
			if err != nil {
				return err
			}
			if err := rt.Stop(id); err != nil {
				return a.forwardForeign(cmd.Context(), "stop", "stopped", id, "", err)
			}
			a.done("stopped", id)
			return nil
		},
	}
}

func (a *app) deleteCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:     "delete ID",
		Aliases: []string{"rm"},
		Short:   "Delete a run's journal and snapshot",
		Long: `Delete a run's journal and snapshot, for good.

A run named by its full id is deleted at once. One named by "last" or by
a prefix of its id is deleted only once you confirm which run that is, on
the terminal; --yes deletes it without asking, and without a terminal
--yes is needed.`,
		Args: exactArgs(1, "delete needs a run id (see: dynworkflow list)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, e, onTemporal, err := a.resolveRun(cmd, &backendFlags{}, args[0])
			if err != nil {
				return err
			}
			if id != args[0] && !yes {
				if err := a.confirmDelete(args[0], id); err != nil {
					return err
				}
			}
			if onTemporal {
				return a.deleteTemporal(cmd.Context(), e)
			}
			if done, err := a.forwardControl(cmd.Context(), "deleted", id, (*web.Client).Delete); done {
				return err
			}
			rt, err := a.runtime(simulate.Config{})
			if err != nil {
				return err
			}
			if err := rt.Delete(id); err != nil {
				return a.forwardForeign(cmd.Context(), "delete", "deleted", id, "", err)
			}
			a.done("deleted", id)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete a run named by last or a prefix without asking which it is")
	return cmd
}

// confirmDelete asks the user, on the terminal, whether the run typed
// (last, or a prefix) resolved to is the one to delete; without a
// terminal to ask on, it refuses and names the flag that skips the
// question.
func (a *app) confirmDelete(typed, id string) error {
	what := id
	if st, err := a.openStore(); err == nil {
		if snap, err := st.ReadSnapshot(id); err == nil {
			s := snap.Summary
			what = fmt.Sprintf("%s (%s, %s, started %s)", id, escapeControls(s.Name, true), s.Status, s.StartedAt.Local().Format(time.DateTime))
		}
	}
	in, _ := a.stdin.(*os.File)
	if in == nil || !isTerminal(in) || !isTerminal(a.stderr) {
		return usageErrorf("delete %s: %q is %s; there is no terminal to ask whether to delete it: pass --yes, or its full id", typed, typed, what)
	}
	fmt.Fprintf(a.stderr, "delete %s?\nIts journal and snapshot are removed for good. [y/N] ", what)
	line, _ := bufio.NewReader(a.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return &exitError{code: exitFailed, err: fmt.Errorf("%s was not deleted", id)}
}

func (a *app) done(action, id string) {
	if a.json {
		fmt.Fprintf(a.stdout, "{\"ok\":true,\"action\":%q,\"runId\":%q}\n", action, id)
		return
	}
	fmt.Fprintf(a.stdout, "%s %s\n", action, id)
}

// forwardControl sends pause, stop or delete to the live runtime, if the
// project has one: it holds the run's agents. done is false when there is
// none and the command runs locally.
func (a *app) forwardControl(ctx context.Context, action, id string, call func(*web.Client, context.Context, string) error) (done bool, err error) {
	cl, _, err := a.liveOwner(ctx)
	if err != nil || cl == nil {
		return err != nil, err
	}
	if err := call(cl, ctx, id); err != nil {
		return true, apiFailure(err)
	}
	a.done(action, id)
	return true, nil
}
