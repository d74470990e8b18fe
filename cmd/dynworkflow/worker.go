//go:build temporal

package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/temporal"
	"github.com/dynworkflow/dynworkflow/executors"
)

func (a *app) workerCommand() *cobra.Command {
	var bf backendFlags
	var of optionFlags
	var only string
	var concurrency int
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run workflows and their agents for runs on Temporal",
		Long: `Run a worker for runs started with --backend temporal: it executes the
workflows (the script hosts, deterministically) and their agent calls, with
this machine's executors, on the task queue it polls. Start as many workers
as you like, on as many machines: a run's agents spread over them, and the
calls of a worker that dies go to the others.

Agents work in the run's project directory, so each worker must see the
project at the path each run was started from, and have the executors the runs
use (--executors lists them; workers on one task queue should offer the
same). Ctrl-C stops the worker once its agents have been handed back.`,
		Args: exactArgs(0, "worker takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.resolveBackendFor(cmd, &bf, true); err != nil {
				return err
			}
			sim, err := of.simulate()
			if err != nil {
				return err
			}
			// A worker runs agents: the configuration must be sound, and a
			// project file it would use must be allowed.
			rt, err := a.runtimeWith(sim, func(*engine.Config) {})
			if err != nil {
				return err
			}
			set := rt.Executors()
			if only != "" {
				if set, err = pickExecutors(set, only); err != nil {
					return err
				}
			}
			c, err := a.dialTemporal(cmd.Context(), bf.temporal)
			if err != nil {
				return err
			}
			defer c.Close()
			host, _ := os.Hostname()
			identity := fmt.Sprintf("dynworkflow-worker %d@%s", os.Getpid(), host)
			acts := &temporal.Activities{Executors: set, Hosts: a.hosts(), StateRoot: rt.Store().Root(), Identity: identity, Logger: a.sdkLog()}
			w := temporal.NewWorker(c, acts, temporal.WorkerOptions{
				TaskQueue: c.Config().TaskQueue, Concurrency: concurrency, Identity: identity,
			})
			if err := w.Start(); err != nil {
				return &exitError{code: exitFailed, err: fmt.Errorf("start the worker: %w", err)}
			}
			fmt.Fprintf(a.stderr, "worker %s polling task queue %s at %s (namespace %s) with executors %s\n",
				identity, c.Config().TaskQueue, c.Config().Address, c.Config().Namespace, strings.Join(set.Names(), ", "))
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			a.startupOver()
			<-ctx.Done()
			fmt.Fprintln(a.stderr, "worker stopping")
			w.Stop()
			return nil
		},
	}
	bf.register(cmd.Flags(), false)
	cmd.Flags().StringVar(&only, "executors", "", "comma-separated executors this worker offers (default: all it has)")
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "agents this worker runs at once (default: Temporal's, 1000)")
	cmd.Flags().StringVar(&of.simLatency, "simulate-latency", "0", "simulated latency per call: MIN..MAX (5ms..50ms) or a fixed duration")
	cmd.Flags().Float64Var(&of.simFailureRate, "simulate-failure-rate", 0, "share of simulated attempts that fail transiently (0..1)")
	cmd.Flags().Uint64Var(&of.simSeed, "simulate-seed", 0, "seed of the simulated executor's latency and failures (0: random)")
	return agentCommand(cmd)
}

// pickExecutors keeps the executors of a comma-separated list.
func pickExecutors(all *executors.Set, list string) (*executors.Set, error) {
	out := executors.NewSet()
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		e, err := all.Get(name)
		if err != nil {
			return nil, usageErrorf("--executors: %v", err)
		}
		out.Add(e)
	}
	if len(out.Names()) == 0 {
		return nil, usageErrorf("--executors names no executor; known executors: %s", strings.Join(all.Names(), ", "))
	}
	return out, nil
}
