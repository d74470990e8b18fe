//go:build !temporal

package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal/index"
	"github.com/dynworkflow/dynworkflow/web"
)

// This build has no Temporal client: the Temporal SDK would add 20 MB to
// the binary and, through its package initialization (which Go cannot
// defer), 10 MB to the memory of every command, `list` included. What
// involves Temporal is handed to the companion build (companion.go): a run
// or a resume on --backend temporal, a worker, a command on a run the
// project's index puts on Temporal, and a listing, a checkpoint or the
// server of a project that has runs there. Nothing here hides those runs:
// without the companion, such a command fails and says how to install it,
// and `list` shows the local runs with a warning that counts the others.

func (a *app) runOnTemporal(*cobra.Command, *optionFlags, *backendFlags, string) error {
	return a.handOver("--backend temporal")
}

func (a *app) resumeOnTemporal(_ *cobra.Command, _ *optionFlags, _ *backendFlags, e index.Entry, _ string, _ bool) error {
	return a.handOver(onTemporal(e))
}

func (a *app) showTemporal(_ context.Context, e index.Entry) (*engine.Detail, []web.Checkpoint, error) {
	return nil, nil, a.handOver(onTemporal(e))
}

func (a *app) controlTemporal(_ context.Context, e index.Entry, _ string) error {
	return a.handOver(onTemporal(e))
}

func (a *app) controlCallTemporal(_ context.Context, e index.Entry, _, _ string) error {
	return a.handOver(onTemporal(e))
}

func (a *app) deleteTemporal(_ context.Context, e index.Entry) error {
	return a.handOver(onTemporal(e))
}

func (a *app) respondTemporal(_ context.Context, e index.Entry, _ web.Checkpoint, _ json.RawMessage) error {
	return a.handOver(onTemporal(e))
}

func (a *app) adoptTemporal(_ *cobra.Command, _ *backendFlags, id string) (index.Entry, bool, error) {
	return index.Entry{}, false, a.handOver("run " + id + " is not among the project's runs, and looking for it on Temporal (the project's backend)")
}

// temporalRuns hands `list` over when the project has runs or schedules
// on Temporal. Without the companion, list shows the local runs and the
// error, which counts the runs it leaves out.
func (a *app) temporalRuns(context.Context) ([]store.Summary, error) {
	entries, err := a.temporalEntries()
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		scheds, err := a.temporalSchedules()
		if err != nil || len(scheds) == 0 {
			return nil, err
		}
		return nil, a.handOver(fmt.Sprintf("the project has %d schedule(s) on Temporal, whose runs are", len(scheds)) + " not shown")
	}
	return nil, a.handOver(runsOnTemporal(len(entries)) + " not shown")
}

func (a *app) scheduleCommand() *cobra.Command {
	return a.companionCommand("schedule", "Run a workflow on a schedule, on Temporal",
		"Run a workflow on a schedule, backed by Temporal Schedules.")
}

// companionCommand is a command this build hands over whole to the
// companion; about, one sentence, opens its help.
func (a *app) companionCommand(name, short, about string) *cobra.Command {
	return &cobra.Command{
		Use:   name,
		Short: short,
		Long: about + ` This build has no
Temporal client: the command runs in its companion, dynworkflow-temporal
(next to this binary, or on PATH), which prints the full help with
dynworkflow ` + name + ` --help.`,
		// Every argument is the companion's to read.
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return a.handOver("dynworkflow " + name)
		},
	}
}

// temporalCheckpoints hands the command over when a run on Temporal may
// wait on a checkpoint: one last seen running.
func (a *app) temporalCheckpoints(context.Context) ([]web.Checkpoint, map[string]index.Entry, error) {
	entries, err := a.temporalEntries()
	if err != nil {
		return nil, nil, err
	}
	running := 0
	for _, e := range entries {
		if s := e.Summary.Status; s == string(engine.StatusRunning) || s == statusWaiting {
			running++
		}
	}
	if running == 0 {
		return nil, nil, nil
	}
	return nil, nil, a.handOver(runsOnTemporal(running) + " running, and may wait on checkpoints")
}

// runsElsewhere hands `serve` over when its runs go to Temporal, or when
// the project has runs on Temporal: the companion's API and dashboard show
// and control them.
func (a *app) runsElsewhere(_ *engine.Runtime, bf *backendFlags) (web.RunSource, error) {
	if bf.backend == backendTemporal {
		return nil, a.handOver("serve --backend temporal")
	}
	entries, err := a.temporalEntries()
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		if scheds, err := a.temporalSchedules(); err != nil || len(scheds) == 0 {
			return nil, err
		}
	}
	return nil, a.handOver("serving a project with runs on Temporal")
}

// workerCommand hands the worker over in the process the user started,
// which the companion's worker then makes the ancestor of its runtime:
// not an agent command here (ancestor.go).
func (a *app) workerCommand() *cobra.Command {
	return a.companionCommand("worker", "Run workflows and their agents for runs on Temporal",
		"Run a worker for runs started with --backend temporal.")
}

// onTemporal says which run needs Temporal.
func onTemporal(e index.Entry) string {
	return fmt.Sprintf("run %s is on Temporal (%s)", e.RunID, e.Config.Address)
}

// runsOnTemporal counts a project's runs on Temporal.
func runsOnTemporal(n int) string {
	if n == 1 {
		return "1 run on Temporal is"
	}
	return fmt.Sprintf("%d runs on Temporal are", n)
}
