package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/store"
)

// Schedules: a workflow that runs on a timetable, backed by Temporal
// Schedules (their overlap policies, pause, backfill and catch-up).
//
// A schedule's action does not start a run itself: Temporal names the
// workflows a schedule starts after the schedule and the time (with
// colons), which no run id may hold. It starts a launcher, a workflow that
// gives the run an id of ours, starts it as its child and waits for it to
// end, so that the overlap policy applies to the runs: "skip" skips a run
// while the last one still runs (or waits on a checkpoint), "cancel-other"
// stops it. A run paused or ended frees the schedule; it stays a run like
// any other (list, show, resume, the dashboard), found through the
// launchers' memos.

// ScheduledWorkflowName is the launcher's name in Temporal.
const ScheduledWorkflowName = "dynworkflow.Scheduled"

// runMemo is the memo key in which a launcher names its run; specMemo the
// one in which a schedule keeps its timetable as the user gave it.
const (
	runMemo  = "dynworkflowRun"
	specMemo = "dynworkflowSpec"
)

// scheduled is the launcher: it starts the run the schedule's template
// describes, as its child, and waits for it to end.
func (w *workflows) scheduled(ctx workflow.Context, in RunInput) (string, error) {
	info := workflow.GetInfo(ctx)
	now := workflow.Now(ctx).UTC()
	sum := sha256.Sum256([]byte(info.WorkflowExecution.ID))
	in.RunID = store.Slug(in.Name, "run") + "-" + strconv.FormatInt(now.UnixMilli(), 36) + "-" + hex.EncodeToString(sum[:3])
	in.CreatedAt, in.Epoch, in.Chain, in.Rule = now, 0, 0, callpolicy.RuleFresh
	if err := workflow.UpsertMemo(ctx, map[string]any{runMemo: in.RunID}); err != nil {
		return "", err
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: in.RunID,
		TaskQueue:  info.TaskQueueName,
		// A schedule whose overlap policy cancels or terminates the
		// launcher stops the run with it.
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		StaticSummary:     fmt.Sprintf("dynworkflow run %s (scheduled by %s)", in.Name, info.WorkflowExecution.ID),
	})
	// However the run ends (completed, paused, failed, stopped) is the
	// run's to tell: the launcher's job is done.
	_ = workflow.ExecuteChildWorkflow(cctx, WorkflowName, in).Get(ctx, nil)
	return in.RunID, nil
}

// ScheduleRequest creates a schedule.
type ScheduleRequest struct {
	// ID names the schedule; it must be a valid run id.
	ID string
	// Run is what each run starts with.
	Run StartRequest
	// Every or Cron say when (one of them); Offset shifts Every.
	Every, Offset time.Duration
	Cron          string
	// TimeZone is the zone of Cron ("" for UTC).
	TimeZone string
	// Overlap is the overlap policy's name (Overlaps); "" means skip.
	Overlap string
	// Paused creates it paused, with Note.
	Paused bool
	Note   string
}

// Spec is the request's timetable in words: "every 1h", "every 1h offset
// 5m", "cron 0 3 * * *", "cron 0 3 * * * in Europe/Paris".
func (r ScheduleRequest) Spec() string {
	var s string
	if r.Every > 0 {
		s = "every " + r.Every.String()
		if r.Offset > 0 {
			s += " offset " + r.Offset.String()
		}
	} else {
		s = "cron " + r.Cron
	}
	if r.TimeZone != "" {
		s += " in " + r.TimeZone
	}
	return s
}

// Overlaps names the overlap policies: what a schedule does when a run is
// due while the last one still runs.
var Overlaps = map[string]enumspb.ScheduleOverlapPolicy{
	"skip":            enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	"buffer-one":      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	"buffer-all":      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL,
	"cancel-other":    enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER,
	"terminate-other": enumspb.SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER,
	"allow-all":       enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
}

// overlapPolicy reads an overlap policy's name.
func overlapPolicy(name string) (enumspb.ScheduleOverlapPolicy, error) {
	if name == "" {
		name = "skip"
	}
	p, ok := Overlaps[name]
	if !ok {
		names := make([]string, 0, len(Overlaps))
		for n := range Overlaps {
			names = append(names, n)
		}
		slices.Sort(names)
		return 0, fmt.Errorf("overlap policy %q: use one of %s", name, strings.Join(names, ", "))
	}
	return p, nil
}

// overlapName is the name of an overlap policy.
func overlapName(p enumspb.ScheduleOverlapPolicy) string {
	for n, q := range Overlaps {
		if p == q {
			return n
		}
	}
	return "skip" // Temporal's default
}

// CreateSchedule creates a schedule that starts the run of req.Run on its
// timetable.
func (c *Client) CreateSchedule(ctx context.Context, req ScheduleRequest) error {
	if err := store.ValidRunID(req.ID); err != nil {
		return fmt.Errorf("schedule id: %w", err)
	}
	if (req.Every > 0) == (req.Cron != "") {
		return errors.New("a schedule needs one of --every and --cron")
	}
	overlap, err := overlapPolicy(req.Overlap)
	if err != nil {
		return err
	}
	if err := req.Run.Options.Validate(); err != nil {
		return err
	}
	args, err := engine.NormalizeArgs(req.Run.Args)
	if err != nil {
		return err
	}
	if req.Run.Heartbeat <= 0 {
		req.Run.Heartbeat = DefaultHeartbeat
	}
	meta := req.Run.Script.Meta()
	tmpl := RunInput{
		Rule: callpolicy.RuleFresh, Script: req.Run.Bundle, Args: args, Options: req.Run.Options, Cwd: req.Run.Cwd,
		Human: req.Run.Human, Heartbeat: req.Run.Heartbeat, Defaults: req.Run.Defaults, RollEvents: req.Run.RollEvents,
		Name: meta.Name, Description: meta.Description, ScriptHash: req.Run.Script.Hash(),
	}
	spec := client.ScheduleSpec{TimeZoneName: req.TimeZone}
	if req.Every > 0 {
		spec.Intervals = []client.ScheduleIntervalSpec{{Every: req.Every, Offset: req.Offset}}
	} else {
		spec.CronExpressions = []string{req.Cron}
	}
	_, err = c.sdk.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:   req.ID,
		Spec: spec,
		Action: &client.ScheduleWorkflowAction{
			ID: req.ID, Workflow: ScheduledWorkflowName, Args: []any{tmpl}, TaskQueue: c.cfg.TaskQueue,
			StaticSummary: "dynworkflow schedule " + req.ID + ": " + meta.Name,
		},
		Overlap: overlap,
		Paused:  req.Paused,
		Note:    req.Note,
		Memo:    map[string]any{specMemo: req.Spec()},
	})
	var exists *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &exists) || errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("a schedule %s exists already on Temporal; delete it first, or pick another --id", req.ID)
	}
	if err != nil {
		return fmt.Errorf("create schedule %s on Temporal: %w", req.ID, err)
	}
	return nil
}

// ScheduleState is what Temporal says of a schedule.
type ScheduleState struct {
	ID      string `json:"id"`
	Overlap string `json:"overlap"`
	Paused  bool   `json:"paused"`
	Note    string `json:"note,omitempty"`
	// Spec is its timetable (ScheduleRequest.Spec).
	Spec string `json:"spec"`
	// Next are the times of its next runs.
	Next []time.Time `json:"next,omitempty"`
	// Started counts the runs it started, Skipped those it skipped for
	// the overlap policy, Missed those it missed for being down.
	Started int `json:"started"`
	Skipped int `json:"skipped"`
	Missed  int `json:"missed"`
	// Runs are the ids of the runs it started, oldest first, as far as
	// Temporal's visibility knows them.
	Runs      []string  `json:"runs"`
	CreatedAt time.Time `json:"createdAt"`
}

// DescribeSchedule reads a schedule and the runs it started.
func (c *Client) DescribeSchedule(ctx context.Context, id string) (ScheduleState, error) {
	d, err := c.sdk.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
	if err != nil {
		return ScheduleState{}, scheduleError(id, err)
	}
	st := ScheduleState{ID: id, Next: d.Info.NextActionTimes, Started: d.Info.NumActions, Skipped: d.Info.NumActionsSkippedOverlap,
		Missed: d.Info.NumActionsMissedCatchupWindow, CreatedAt: d.Info.CreatedAt}
	if p := d.Schedule.Policy; p != nil {
		st.Overlap = overlapName(p.Overlap)
	}
	if s := d.Schedule.State; s != nil {
		st.Paused, st.Note = s.Paused, s.Note
	}
	if p := d.Memo.GetFields()[specMemo]; p != nil {
		_ = c.dc.FromPayload(p, &st.Spec)
	}
	if st.Runs, err = c.ScheduledRuns(ctx, id); err != nil {
		return st, err
	}
	return st, nil
}

// ScheduledRuns lists the ids of the runs schedule id started, oldest
// first, from the memos of its launchers. Temporal's visibility is
// eventually consistent: a run started a moment ago may not be listed yet.
// A launcher names its run in the same step as it asks for the run to
// start, and the run's workflow is made a moment later: a running
// launcher's run is listed only once it exists, so that every run listed
// can be shown, followed and waited for.
func (c *Client) ScheduledRuns(ctx context.Context, id string) ([]string, error) {
	type run struct {
		id    string
		start time.Time
	}
	var runs []run
	var token []byte
	for {
		resp, err := c.sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: c.cfg.Namespace, NextPageToken: token,
			Query: fmt.Sprintf("TemporalScheduledById = '%s' AND WorkflowType = '%s'", id, ScheduledWorkflowName),
		})
		if err != nil {
			return nil, fmt.Errorf("list the runs of schedule %s: %w", id, err)
		}
		for _, e := range resp.GetExecutions() {
			p := e.GetMemo().GetFields()[runMemo]
			var runID string
			if p == nil || c.dc.FromPayload(p, &runID) != nil || store.ValidRunID(runID) != nil {
				continue // not started yet, or not ours
			}
			if e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				var nf *serviceerror.NotFound
				if _, err := c.describe(ctx, runID); errors.As(err, &nf) {
					continue
				} else if err != nil {
					return nil, fmt.Errorf("list the runs of schedule %s: %w", id, err)
				}
			}
			runs = append(runs, run{runID, e.GetStartTime().AsTime()})
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	slices.SortFunc(runs, func(a, b run) int { return a.start.Compare(b.start) })
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.id
	}
	return out, nil
}

// PauseSchedule stops a schedule from starting runs until it is unpaused;
// note says why.
func (c *Client) PauseSchedule(ctx context.Context, id, note string) error {
	return scheduleError(id, c.sdk.ScheduleClient().GetHandle(ctx, id).Pause(ctx, client.SchedulePauseOptions{Note: note}))
}

// UnpauseSchedule lets a paused schedule start runs again.
func (c *Client) UnpauseSchedule(ctx context.Context, id, note string) error {
	return scheduleError(id, c.sdk.ScheduleClient().GetHandle(ctx, id).Unpause(ctx, client.ScheduleUnpauseOptions{Note: note}))
}

// TriggerSchedule starts a run of the schedule now, by its overlap policy.
func (c *Client) TriggerSchedule(ctx context.Context, id string) error {
	return scheduleError(id, c.sdk.ScheduleClient().GetHandle(ctx, id).Trigger(ctx, client.ScheduleTriggerOptions{}))
}

// BackfillSchedule starts the runs the schedule would have started from
// start to end, by overlap (a policy's name; "" for the schedule's own).
func (c *Client) BackfillSchedule(ctx context.Context, id string, start, end time.Time, overlap string) error {
	if !end.After(start) {
		return fmt.Errorf("backfill from %s to %s: the end must come after the start", start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	var policy enumspb.ScheduleOverlapPolicy
	if overlap != "" {
		var err error
		if policy, err = overlapPolicy(overlap); err != nil {
			return err
		}
	}
	return scheduleError(id, c.sdk.ScheduleClient().GetHandle(ctx, id).Backfill(ctx, client.ScheduleBackfillOptions{
		Backfill: []client.ScheduleBackfill{{Start: start, End: end, Overlap: policy}},
	}))
}

// DeleteSchedule deletes a schedule; the runs it started stay.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	return scheduleError(id, c.sdk.ScheduleClient().GetHandle(ctx, id).Delete(ctx))
}

// ErrNoSchedule is matched by the error of a schedule Temporal does not
// have.
var ErrNoSchedule = errors.New("no such schedule")

func scheduleError(id string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("%w: %s is not a schedule on the Temporal server", ErrNoSchedule, id)
	}
	if err != nil {
		return fmt.Errorf("schedule %s on Temporal: %w", id, err)
	}
	return nil
}
