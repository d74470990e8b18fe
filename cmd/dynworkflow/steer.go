package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/web"
)

// Steering one agent of a run without restarting the run: stop or restart
// a running call, fork a run at a call, and compare two runs.

func (a *app) restartCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "restart RUN CALL",
		Short: "Kill a running agent call's attempt and run the call again",
		Long: `Restart one running agent call of a run: its current attempt is killed and
the call runs again at once, as a new attempt; what the killed attempt cost
stays counted. CALL is a path, the #N show gives it, or a label. This needs
the run's live runtime (dynworkflow serve, run --ui) or Temporal.`,
		Args: exactArgs(2, "restart needs a run and one of its running calls (see: dynworkflow show RUN)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.controlCall(cmd, args[0], args[1], "restart")
		},
	}
}

// controlCall stops or restarts one running call of a run, in the runtime
// that executes it.
func (a *app) controlCall(cmd *cobra.Command, runRef, callRef, action string) error {
	d, _, err := a.inspect(cmd, runRef)
	if err != nil {
		return err
	}
	id := d.Summary.RunID
	c, err := findCall(d, callRef)
	if err != nil {
		return &exitError{code: exitFailed, kind: codeNotFound, err: err}
	}
	if c.Kind != "agent" {
		return &exitError{code: exitFailed, err: fmt.Errorf("%s of %s is a %s, not an agent call: answer it with dynworkflow respond", c.Path, id, c.Kind)}
	}
	if _, e, onTemporal, err := a.resolveRun(cmd, &backendFlags{}, id); err != nil {
		return err
	} else if onTemporal {
		return a.controlCallTemporal(cmd.Context(), e, c.Path, action)
	}
	cl, _, err := a.liveOwner(cmd.Context())
	if err != nil {
		return err
	}
	if cl == nil {
		return &exitError{code: exitFailed, kind: codeNoRuntime, err: fmt.Errorf(
			"no live runtime runs %s: a call can be stopped or restarted in a run of dynworkflow serve or run --ui (a plain run is steered from its own terminal: Ctrl-C pauses it)", id)}
	}
	do := cl.StopCall
	if action == "restart" {
		do = cl.RestartCall
	}
	if err := do(cmd.Context(), id, c.Path); err != nil {
		return apiFailure(err)
	}
	a.callDone(action, id, c.Path)
	return nil
}

func (a *app) callDone(action, id, path string) {
	past := map[string]string{"stop": "stopped", "restart": "restarted"}[action]
	if a.json {
		_ = encodeJSON(a.stdout, map[string]any{"ok": true, "action": past, "runId": id, "path": path})
		return
	}
	fmt.Fprintf(a.stdout, "%s %s of %s\n", past, path, id)
}

func (a *app) forkCommand() *cobra.Command {
	var of optionFlags
	var prompt, answer string
	var fw forwardFlagSet
	cmd := &cobra.Command{
		Use:   "fork RUN CALL",
		Short: "Make a new run that replays a run up to one call, and goes on from there",
		Long: `Fork RUN at CALL (a path, the #N show gives it, or a label): a new run that
replays every call the run had finished before CALL began (the same answers,
nothing paid), then runs CALL again (with --prompt, a new prompt; as it was
without), or takes --answer (JSON, else text) for it instead (an agent's
result, or a checkpoint's answer), and continues live. The fork keeps the
change: resuming it replays what it answered. Option flags apply to the new
run. Compare the two with: dynworkflow diff RUN NEWRUN.

The new run runs here, or in the live runtime when the project has one
(--attach follows it there).`,
		Args: exactArgs(2, "fork needs a run and one of its calls (see: dynworkflow show RUN)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := of.check(); err != nil {
				return err
			}
			if cmd.Flags().Changed("prompt") && cmd.Flags().Changed("answer") {
				return usageErrorf("give --prompt or --answer, not both")
			}
			d, _, err := a.inspect(cmd, args[0])
			if err != nil {
				return err
			}
			from := d.Summary.RunID
			if _, _, onTemporal, err := a.resolveRun(cmd, &backendFlags{}, from); err != nil {
				return err
			} else if onTemporal {
				return &exitError{code: exitFailed, err: fmt.Errorf("%s runs on Temporal: fork makes a local run from a local journal, and a Temporal run's answers are in its workflow histories; fork is not available there yet", from)}
			}
			c, err := findCall(d, args[1])
			if err != nil {
				return &exitError{code: exitFailed, kind: codeNotFound, err: err}
			}
			req := web.ForkRequest{Path: c.Path, Options: of.apiOptions(cmd)}
			if cmd.Flags().Changed("prompt") {
				req.Prompt = &prompt
			}
			if cmd.Flags().Changed("answer") {
				req.Answer = json.RawMessage(answer)
				if !json.Valid(req.Answer) {
					req.Answer, _ = json.Marshal(answer)
				}
			}
			if !fw.local {
				if cl, desc, err := a.liveOwner(cmd.Context()); err != nil {
					return err
				} else if cl != nil {
					resp, err := cl.Fork(cmd.Context(), from, req)
					if err != nil {
						return apiFailure(err)
					}
					return a.forwardStarted(cmd.Context(), cl, desc, resp, "forked", fw.attach)
				}
			}
			questions := a.terminalQuestions()
			rt, _, err := a.localRuntime(cmd, &of, questions)
			if err != nil {
				return err
			}
			if _, err := rt.Recover(); err != nil {
				return err
			}
			view := newProgressView(a.stderr, a.json, a.logs)
			view.subscribe(rt.Events())
			a.askHere(view, questions)
			r, err := rt.Fork(cmd.Context(), engine.ForkRequest{From: from, Path: c.Path, Prompt: req.Prompt, Answer: req.Answer,
				Options: func(o *engine.Options) {
					of.apply(cmd, o)
					if of.yes {
						o.ConfirmAboveUSD = 0
					}
				}})
			if err != nil {
				view.stop()
				return err
			}
			view.note(fmt.Sprintf("forked %s at %s: %s", from, c.Path, r.ID()))
			return a.follow(cmd.Context(), rt, r, view)
		},
	}
	cmd.Flags().StringVar(&prompt, "prompt", "", "run the call with this prompt instead")
	cmd.Flags().StringVar(&answer, "answer", "", "give the call this answer instead of running it: JSON, or else text")
	fw.register(cmd)
	of.register(cmd.Flags())
	return cmd
}

func (a *app) diffCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "diff RUN1 RUN2",
		Short: "Show which calls and results differ between two runs",
		Long: `Compare two runs call by call (by path): the calls only one of them made, and
those whose prompt, model, status or result differ; then the runs' results.
Meant for a run and its fork, or two runs of one workflow.`,
		Args: exactArgs(2, "diff needs two runs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ds [2]*engine.Detail
			for i, ref := range args {
				d, _, err := a.inspect(cmd, ref)
				if err != nil {
					return err
				}
				ds[i] = d
			}
			diff := engine.DiffRuns(ds[0], ds[1])
			if a.json {
				return encodeJSON(a.stdout, diff)
			}
			printDiff(a.stdout, diff, isTerminal(a.stdout))
			return nil
		},
	}
}

// printDiff prints a diff of two runs, one line per call that differs.
func printDiff(w io.Writer, d engine.RunDiff, terminal bool) {
	fmt.Fprintf(w, "--- %s\n+++ %s\n", d.A, d.B)
	for _, c := range d.Calls {
		switch {
		case c.OnlyIn == "a":
			fmt.Fprintf(w, "- %s %s\n", c.Path, describeSide(c.Kind, c.Label, c.Left))
		case c.OnlyIn == "b":
			fmt.Fprintf(w, "+ %s %s\n", c.Path, describeSide(c.Kind, c.Label, c.Right))
		default:
			fmt.Fprintf(w, "~ %s %s: %s differ\n", c.Path, labelOf(c.Label), strings.Join(c.Differs, ", "))
			if slicesContains(c.Differs, "prompt") {
				fmt.Fprintf(w, "    - prompt: %s\n    + prompt: %s\n", clipDiff(c.Left.Prompt, terminal), clipDiff(c.Right.Prompt, terminal))
			}
			if slicesContains(c.Differs, "result") {
				fmt.Fprintf(w, "    - result: %s\n    + result: %s\n", clipDiff(string(c.Left.Result), terminal), clipDiff(string(c.Right.Result), terminal))
			}
		}
	}
	fmt.Fprintf(w, "%d calls the same, %d differ, %d only in %s, %d only in %s\n", d.Same, d.Changed, d.OnlyA, d.A, d.OnlyB, d.B)
	if d.ResultDiffers {
		fmt.Fprintf(w, "the results differ:\n  - %s\n  + %s\n", clipDiff(string(d.ResultA), terminal), clipDiff(string(d.ResultB), terminal))
	} else {
		fmt.Fprintln(w, "the results are the same")
	}
}

func describeSide(kind, label string, s engine.CallSide) string {
	return fmt.Sprintf("%s%s %s", kind, labelOf(label), s.Status)
}

func labelOf(label string) string {
	if label == "" {
		return ""
	}
	return " (" + escapeControls(label, true) + ")"
}

func clipDiff(s string, terminal bool) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if terminal {
		s = escapeControls(s, true)
	}
	return clipText(s, 1, 200)
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
