//go:build temporal

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal"
	"github.com/dynworkflow/dynworkflow/engine/temporal/index"
)

func (a *app) scheduleCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Run a workflow on a schedule, on Temporal",
		Long: `Run a workflow on a timetable, backed by Temporal Schedules: Temporal starts
each run (on the workers of the task queue) when it is due, even when no
dynworkflow process runs here. The runs are runs like any other: list, show,
resume and the dashboard see them.

  dynworkflow schedule create nightly.workflow.js --every 24h --offset 3h
  dynworkflow schedule create review --cron "0 9 * * 1-5" --timezone Europe/Paris
  dynworkflow schedule list
  dynworkflow schedule show ID
  dynworkflow schedule pause ID --note "until the release"
  dynworkflow schedule unpause ID
  dynworkflow schedule trigger ID
  dynworkflow schedule backfill ID --from 2026-12-01T00:00:00Z --to 2026-12-02T00:00:00Z
  dynworkflow schedule delete ID

The overlap policy says what happens when a run is due while the last one
still runs (or waits on a checkpoint): skip (the default), buffer-one,
buffer-all, cancel-other (stops the running one), terminate-other, allow-all.`,
	}
	cmd.AddCommand(a.scheduleCreateCommand(), a.scheduleListCommand(), a.scheduleShowCommand(),
		a.scheduleControlCommand("pause", "Stop a schedule from starting runs until it is unpaused"),
		a.scheduleControlCommand("unpause", "Let a paused schedule start runs again"),
		a.scheduleControlCommand("trigger", "Start a run of a schedule now (by its overlap policy)"),
		a.scheduleControlCommand("delete", "Delete a schedule (the runs it started stay)"),
		a.scheduleBackfillCommand())
	return cmd
}

func (a *app) scheduleCreateCommand() *cobra.Command {
	var of optionFlags
	var bf backendFlags
	var req temporal.ScheduleRequest
	cmd := &cobra.Command{
		Use:   "create FILE|NAME (--every DURATION | --cron EXPR)",
		Short: "Create a schedule that runs a workflow file or a saved workflow",
		Long: `Create a schedule on Temporal that runs the workflow FILE, or the saved
workflow NAME, with the given args and options. The schedule keeps the
script as it is now (and the files it loads): to run an edited script,
delete the schedule and create it again.`,
		Args: exactArgs(1, "schedule create needs a workflow file or a saved workflow's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "-" {
				return usageErrorf("schedule create -: a schedule keeps its script; give a file or a saved workflow's name")
			}
			if (req.Every > 0) == (req.Cron != "") {
				return usageErrorf("schedule create needs one of --every DURATION and --cron EXPR")
			}
			if req.Every < 0 || req.Offset < 0 || req.Offset > 0 && req.Offset >= req.Every {
				return usageErrorf("--every must be positive, and --offset less than --every")
			}
			if err := a.resolveBackend(cmd, &bf); err != nil {
				return err
			}
			run, err := a.temporalStartRequest(cmd, &of, &bf, args[0])
			if err != nil {
				return err
			}
			req.Run = run
			name := run.Script.Meta().Name
			if req.ID == "" {
				req.ID = store.NewRunID(name)
			}
			c, err := a.dialTemporal(cmd.Context(), bf.temporal)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.CreateSchedule(cmd.Context(), req); err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			ix, err := a.temporalIndex()
			if err != nil {
				return err
			}
			if err := ix.PutSchedule(index.Schedule{ID: req.ID, Config: c.Config(), Name: name, Script: run.Bundle.Path,
				Spec: req.Spec(), CreatedAt: time.Now().UTC()}); err != nil {
				return err
			}
			st, err := c.DescribeSchedule(cmd.Context(), req.ID)
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			if a.json {
				return encodeJSON(a.stdout, st)
			}
			fmt.Fprintf(a.stdout, "schedule %s created: %s runs %s", req.ID, name, st.Spec)
			if st.Paused {
				fmt.Fprint(a.stdout, " (paused)")
			} else if len(st.Next) > 0 {
				fmt.Fprintf(a.stdout, "; next run at %s", st.Next[0].Local().Format(time.RFC3339))
			}
			fmt.Fprintln(a.stdout)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.ID, "id", "", "the schedule's id (default: made from the workflow's name)")
	f.DurationVar(&req.Every, "every", 0, "run every DURATION (1h, 24h, 15m)")
	f.DurationVar(&req.Offset, "offset", 0, "with --every, shift the runs by DURATION (--every 24h --offset 3h: daily at 03:00 UTC)")
	f.StringVar(&req.Cron, "cron", "", "run at the times of a cron expression (\"0 9 * * 1-5\")")
	f.StringVar(&req.TimeZone, "timezone", "", "the time zone of --cron (default UTC)")
	f.StringVar(&req.Overlap, "overlap", "skip", "when a run is due while the last still runs: skip, buffer-one, buffer-all, cancel-other, terminate-other or allow-all")
	f.BoolVar(&req.Paused, "paused", false, "create it paused (unpause it to start)")
	f.StringVar(&req.Note, "note", "", "a note the schedule keeps (why it is paused, say)")
	of.register(f)
	bf.register(f, true)
	_ = f.MarkHidden("backend") // a schedule is Temporal's
	return cmd
}

// dialSchedule finds a schedule of the project by id, or says how to list
// them, and dials the Temporal that has it; the caller closes the client.
func (a *app) dialSchedule(ctx context.Context, id string) (index.Schedule, *temporal.Client, error) {
	ix, err := a.temporalIndex()
	if err != nil {
		return index.Schedule{}, nil, err
	}
	s, ok, err := ix.GetSchedule(id)
	if err != nil {
		return s, nil, usageErrorf("%v", err)
	}
	if !ok {
		return s, nil, &exitError{code: exitFailed, err: fmt.Errorf("the project has no schedule %s; list them with: dynworkflow schedule list", id)}
	}
	c, err := a.dialTemporal(ctx, s.Config)
	if err != nil {
		return s, nil, err
	}
	return s, c, nil
}

// scheduleRuns describes a schedule, records the runs it started in the
// project's index (so that every command finds them), and returns them
// as the index has them.
func (a *app) scheduleRuns(ctx context.Context, c *temporal.Client, s index.Schedule) (temporal.ScheduleState, []index.Entry, error) {
	st, err := c.DescribeSchedule(ctx, s.ID)
	if err != nil {
		return st, nil, err
	}
	entries, err := a.adoptRuns(ctx, c, st.Runs)
	return st, entries, err
}

// adoptRuns records runs Temporal started on its own (a schedule's) in
// the project's index, and returns the entries of ids.
func (a *app) adoptRuns(ctx context.Context, c *temporal.Client, ids []string) ([]index.Entry, error) {
	ix, err := a.temporalIndex()
	if err != nil {
		return nil, err
	}
	var out []index.Entry
	for _, id := range ids {
		e, ok, err := ix.Get(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			if e, err = c.Refresh(ctx, index.Entry{RunID: id, Config: c.Config()}); err != nil {
				continue // listed by visibility but not started yet
			}
			if err := ix.Put(e); err != nil {
				return nil, err
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// adoptScheduled records the runs of every schedule of the project in its
// index, one connection per server: what `list` needs first.
func (a *app) adoptScheduled(ctx context.Context, pool *temporalPool) error {
	scheds, err := a.temporalSchedules()
	if err != nil {
		return err
	}
	for _, s := range scheds {
		c, err := pool.get(ctx, s.Config)
		if err != nil {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		runs, err := c.ScheduledRuns(sctx, s.ID)
		if err == nil {
			_, err = a.adoptRuns(sctx, c, runs)
		}
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprintf(a.stderr, "dynworkflow: the runs of schedule %s: %v\n", s.ID, err)
		}
	}
	return nil
}

// scheduleLine is a schedule as `schedule list --json` gives it.
type scheduleLine struct {
	index.Schedule
	State temporal.ScheduleState `json:"state"`
	Error string                 `json:"error,omitempty"`
}

func (a *app) scheduleListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the project's schedules",
		Args:  exactArgs(0, "schedule list takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			scheds, err := a.temporalSchedules()
			if err != nil {
				return err
			}
			pool := a.newTemporalPool(nil)
			defer pool.close()
			lines := make([]scheduleLine, 0, len(scheds))
			for _, s := range scheds {
				l := scheduleLine{Schedule: s}
				c, err := pool.get(cmd.Context(), s.Config)
				if err == nil {
					l.State, _, err = a.scheduleRuns(cmd.Context(), c, s)
				}
				if err != nil {
					l.Error = err.Error()
				}
				lines = append(lines, l)
			}
			if a.json {
				return encodeJSON(a.stdout, lines)
			}
			if len(lines) == 0 {
				fmt.Fprintln(a.stderr, "no schedules yet; create one with: dynworkflow schedule create FILE --every 24h")
				return nil
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SCHEDULE\tWORKFLOW\tWHEN\tSTATE\tNEXT RUN\tRUNS")
			for _, l := range lines {
				state, next := "active", "-"
				switch {
				case l.Error != "":
					state = "unknown: " + l.Error
				case l.State.Paused:
					state = "paused"
				}
				if len(l.State.Next) > 0 && !l.State.Paused {
					next = l.State.Next[0].Local().Format("2006-01-02 15:04")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", l.ID, l.Name, l.Spec, state, next, len(l.State.Runs))
			}
			return tw.Flush()
		},
	}
}

func (a *app) scheduleShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show a schedule: its timetable, state, next runs and the runs it started",
		Args:  exactArgs(1, "schedule show needs a schedule's id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, c, err := a.dialSchedule(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			st, runs, err := a.scheduleRuns(cmd.Context(), c, s)
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			for i, e := range runs {
				if fresh, err := c.Refresh(cmd.Context(), e); err == nil {
					runs[i] = fresh
				}
			}
			if a.json {
				summaries := make([]store.Summary, len(runs))
				for i, e := range runs {
					summaries[i] = e.Summary
				}
				return encodeJSON(a.stdout, struct {
					scheduleLine
					Runs []store.Summary `json:"runs"`
				}{scheduleLine{Schedule: s, State: st}, summaries})
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			state := "active"
			if st.Paused {
				state = "paused"
			}
			if st.Note != "" {
				state += " (" + st.Note + ")"
			}
			fmt.Fprintf(out, "schedule %s: %s (%s)\n  runs %s, overlap policy %s\n  %s; %d started, %d skipped for overlap, %d missed\n",
				s.ID, s.Name, s.Script, st.Spec, st.Overlap, state, st.Started, st.Skipped, st.Missed)
			if len(st.Next) > 0 && !st.Paused {
				var next []string
				for _, t := range st.Next[:min(3, len(st.Next))] {
					next = append(next, t.Local().Format(time.RFC3339))
				}
				fmt.Fprintf(out, "  next runs: %s\n", strings.Join(next, ", "))
			}
			if len(runs) > 0 {
				fmt.Fprintln(out, "runs (show one with: dynworkflow show RUN):")
				for _, e := range runs {
					fmt.Fprintf(out, "  %s  %s  %s\n", e.RunID, e.Summary.Status, e.Summary.StartedAt.Local().Format(time.RFC3339))
				}
			}
			return nil
		},
	}
}

func (a *app) scheduleControlCommand(action, short string) *cobra.Command {
	var note string
	cmd := &cobra.Command{
		Use:   action + " ID",
		Short: short,
		Args:  exactArgs(1, "schedule "+action+" needs a schedule's id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, c, err := a.dialSchedule(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			switch action {
			case "pause":
				err = c.PauseSchedule(ctx, s.ID, note)
			case "unpause":
				err = c.UnpauseSchedule(ctx, s.ID, note)
			case "trigger":
				err = c.TriggerSchedule(ctx, s.ID)
			case "delete":
				// Its runs stay: record them while the schedule can still
				// name them (its launchers outlive it in visibility, but
				// only as long as the namespace's retention).
				if runs, rerr := c.ScheduledRuns(ctx, s.ID); rerr == nil {
					if _, err = a.adoptRuns(ctx, c, runs); err != nil {
						break
					}
				}
				err = c.DeleteSchedule(ctx, s.ID)
				if errors.Is(err, temporal.ErrNoSchedule) {
					err = nil // gone already: forget it here too
				}
				if err == nil {
					ix, ierr := a.temporalIndex()
					if ierr == nil {
						ierr = ix.DeleteSchedule(s.ID)
					}
					err = ierr
				}
			}
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			a.scheduleDone(map[string]string{"pause": "paused", "unpause": "unpaused", "trigger": "triggered", "delete": "deleted"}[action], s.ID)
			return nil
		},
	}
	if action == "pause" || action == "unpause" {
		cmd.Flags().StringVar(&note, "note", "", "why, for the schedule to keep")
	}
	return cmd
}

func (a *app) scheduleBackfillCommand() *cobra.Command {
	var from, to, overlap string
	cmd := &cobra.Command{
		Use:   "backfill ID --from TIME --to TIME",
		Short: "Start the runs a schedule would have started between two times",
		Long: `Start the runs a schedule would have started from --from to --to (RFC 3339
times, such as 2026-12-01T00:00:00Z), one after another by the overlap
policy (--overlap, default the schedule's own; buffer-all runs each in
turn).`,
		Args: exactArgs(1, "schedule backfill needs a schedule's id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			start, err := time.Parse(time.RFC3339, from)
			if err != nil {
				return usageErrorf("--from: %v (give an RFC 3339 time, such as 2026-12-01T00:00:00Z)", err)
			}
			end, err := time.Parse(time.RFC3339, to)
			if err != nil {
				return usageErrorf("--to: %v (give an RFC 3339 time, such as 2026-12-02T00:00:00Z)", err)
			}
			s, c, err := a.dialSchedule(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.BackfillSchedule(cmd.Context(), s.ID, start, end, overlap); err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			a.scheduleDone("backfilled", s.ID)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the first time to run for (RFC 3339)")
	cmd.Flags().StringVar(&to, "to", "", "the last time to run for (RFC 3339)")
	cmd.Flags().StringVar(&overlap, "overlap", "", "the overlap policy of the backfilled runs (default: the schedule's)")
	return cmd
}

// scheduleDone reports a schedule command that succeeded.
func (a *app) scheduleDone(action, id string) {
	if a.json {
		_ = encodeJSON(a.stdout, map[string]any{"ok": true, "action": action, "scheduleId": id})
		return
	}
	fmt.Fprintf(a.stdout, "schedule %s: %s\n", id, action)
}
