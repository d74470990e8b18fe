package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

func (a *app) resumeCommand() *cobra.Command {
	var of optionFlags
	var scriptPath string
	var fw forwardFlagSet
	var bf backendFlags
	var wait bool
	cmd := &cobra.Command{
		Use:   "resume ID",
		Short: "Resume a paused, failed or completed run, replaying its finished calls",
		Long: `Resume a run. With the same script and args every finished call replays and
only unfinished ones run. With --script (an edited script) or new --args, the
prefix rule applies per scope: after the first changed or new call in a scope,
later calls there run live, while sibling branches keep their results.
Option flags given here (--token-budget, --max-agents, ...) replace the run's;
those not given keep what the run had, the simulated executor's
--simulate-latency, --simulate-failure-rate and --simulate-seed included.

When the project has a live runtime (dynworkflow serve), the resume goes to
it and returns at once; --attach follows the run to its end.

A run parked for its executor's quota ("waiting for quota until 15:04:05")
resumes by itself at the reset under dynworkflow serve; here, --wait waits
for the reset and resumes it then. Without --wait, a resume before the
reset tries now: its calls start (as many at once as --concurrency), and it
parks again, for longer, if the provider still refuses.

A run on Temporal resumes there, as a new execution of its workflow; one
still running there is followed again with --attach (after the process
that started it was killed, say).`,
		Args: exactArgs(1, "resume needs a run id (see: dynworkflow list)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := of.check(); err != nil {
				return err
			}
			id, e, onTemporal, err := a.resolveRun(cmd, &bf, args[0])
			if err != nil {
				return err
			}
			if onTemporal {
				return a.resumeOnTemporal(cmd, &of, &bf, e, scriptPath, fw.attach)
			}
			if !fw.local {
				if cl, d, err := a.liveOwner(cmd.Context()); err != nil {
					return err
				} else if cl != nil {
					return a.forwardResume(cmd, &of, cl, d, id, scriptPath, fw.attach)
				}
			}
			a.keepSimulateSettings(cmd, &of, id)
			questions := a.terminalQuestions()
			rt, scriptArgs, err := a.localRuntime(cmd, &of, questions)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("executor") {
				if err := checkExecutor(rt, "--executor", of.executor); err != nil {
					return err
				}
			}
			// A user who resumes a parked run before its reset means now.
			req := engine.ResumeRequest{Args: scriptArgs, TryNow: !wait, Options: func(o *engine.Options) {
				of.apply(cmd, o)
				if of.yes {
					o.ConfirmAboveUSD = 0
				}
			}}
			if scriptPath != "" {
				abs, err := filepath.Abs(scriptPath)
				if err != nil {
					return err
				}
				if req.Script, err = rt.Hosts().LoadFile(abs); err != nil {
					return &exitError{code: exitFailed, err: err}
				}
			}
			if _, err := rt.Recover(); err != nil {
				return err
			}
			for {
				if wait {
					if err := a.waitForReset(cmd.Context(), rt, id); err != nil {
						return err
					}
				}
				view := newProgressView(a.stderr, a.json, a.logs)
				view.subscribe(rt.Events())
				a.askHere(view, questions)
				r, err := rt.Resume(cmd.Context(), id, req)
				if err != nil {
					view.stop()
					if errors.Is(err, store.ErrForeignRun) {
						return a.forwardForeign(cmd.Context(), "resume", "resumed", id, scriptText(scriptPath), err)
					}
					return err
				}
				if !wait {
					return a.follow(cmd.Context(), rt, r, view)
				}
				out := a.watch(cmd.Context(), rt, r, view)
				if out.Status == engine.StatusPaused && out.ResumeAt != nil && cmd.Context().Err() == nil {
					// Another run met the quota again: wait for the later
					// reset. The script, args and options given are the
					// run's now.
					req = engine.ResumeRequest{}
					continue
				}
				a.printOutcome(out)
				a.noteKeptWorktrees(r)
				return exitFor(out.Status, out.Stats.ScriptErrors)
			}
		},
	}
	cmd.Flags().StringVar(&scriptPath, "script", "", "resume with this (edited) script instead of the journaled one")
	cmd.Flags().BoolVar(&wait, "wait", false, "if the run waits for its executor's quota, resume it at the reset (and again, should it park again)")
	fw.register(cmd)
	of.register(cmd.Flags())
	bf.register(cmd.Flags(), true)
	return cmd
}

// scriptText is the text of the script at path, or "" for none: an edited
// script sent to the Node runtime, which takes scripts as text.
func scriptText(path string) string {
	if path == "" {
		return ""
	}
	b, _ := os.ReadFile(path) // read already by LoadFile
	return string(b)
}

// waitForReset waits until the quota the run id is parked for resets, if
// it is parked. Ctrl-C leaves it parked.
func (a *app) waitForReset(ctx context.Context, rt *engine.Runtime, id string) error {
	d, err := rt.Inspect(id)
	if err != nil {
		return err
	}
	at := d.Summary.ResumeAt
	if d.Summary.Status != string(engine.StatusPaused) || at == nil || !time.Now().Before(*at) {
		return nil
	}
	fmt.Fprintf(a.stderr, "» %s waits for its executor's quota until %s; it resumes then (Ctrl-C leaves it parked)\n",
		id, at.Local().Format(time.TimeOnly))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := time.NewTimer(time.Until(*at))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return &exitError{code: exitPaused, err: fmt.Errorf("%s stays parked until %s; resume it with: dynworkflow resume --wait %s",
			id, at.Local().Format(time.TimeOnly), id)}
	}
}

// keepSimulateSettings gives the simulated executor of a resumed run the
// settings its journal recorded, for each --simulate-* flag not given
// again: a run started with --simulate-latency 2s must not resume with
// none. A journal that cannot be read leaves the flags as they are; the
// resume itself then says what is wrong.
func (a *app) keepSimulateSettings(cmd *cobra.Command, of *optionFlags, id string) {
	st, err := a.openStore()
	if err != nil {
		return
	}
	defs, err := engine.RunExecutors(st, id)
	if err != nil {
		return
	}
	for _, d := range defs {
		if d.Name != simulate.Name {
			continue
		}
		fs := cmd.Flags()
		if v, ok := d.Settings[simulate.SettingLatency]; ok && !fs.Changed("simulate-latency") {
			of.simLatency = v
		}
		if v, ok := d.Settings[simulate.SettingFailureRate]; ok && !fs.Changed("simulate-failure-rate") {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				of.simFailureRate = f
			}
		}
		if v, ok := d.Settings[simulate.SettingSeed]; ok && !fs.Changed("simulate-seed") {
			if n, err := strconv.ParseUint(v, 10, 64); err == nil {
				of.simSeed = n
			}
		}
	}
}
