package temporal

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
)

// scheduleRuns waits until schedule id lists n runs, each ended, and
// returns their final states.
func scheduleRuns(t *testing.T, c *Client, id string, n int) []State {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		runs, err := c.ScheduledRuns(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) >= n {
			var out []State
			for _, r := range runs {
				out = append(out, wait(t, c, r))
			}
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedule %s lists %d runs, want %d", id, len(runs), n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestSchedule runs a workflow on a schedule: started by hand, backfilled
// over a past hour, with its overlap policy skipping a run while one runs,
// paused and unpaused. Each run is a run like any other: it completes with
// the script's result, and show reads it.
func TestSchedule(t *testing.T) {
	c := newClient(t)
	startWorker(t, c, "w1", simulated())
	path := writeScript(t, "nightly.workflow.js", `export const meta = { name: 'nightly', description: 'on a schedule' }
const r = await parallel([1, 2].map(i => () => agent('check ' + i + ' ' + args.what)))
return r.length
`)
	b, script, err := BundleFile(c.hosts, path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := "nightly-" + c.Config().TaskQueue
	req := ScheduleRequest{ID: id, Every: time.Hour, Overlap: "skip", Paused: true, Note: "made by a test",
		Run: StartRequest{Bundle: b, Script: script, Args: []byte(`{"what":"links"}`), Options: engine.DefaultOptions(), Cwd: filepath.Dir(path)}}
	if err := c.CreateSchedule(ctx, req); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteSchedule(context.Background(), id) })
	if err := c.CreateSchedule(ctx, req); err == nil {
		t.Error("a second schedule of the same id was created")
	}
	st, err := c.DescribeSchedule(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Paused || st.Note != "made by a test" || st.Spec != "every 1h0m0s" || st.Overlap != "skip" || st.Started != 0 {
		t.Errorf("described: %+v", st)
	}

	// A run by hand, even while paused.
	if err := c.TriggerSchedule(ctx, id); err != nil {
		t.Fatal(err)
	}
	first := scheduleRuns(t, c, id, 1)[0]
	if first.Status != engine.StatusCompleted || string(first.Result) != "2" {
		t.Fatalf("the scheduled run: %s %s %s", first.Status, first.Result, first.Error)
	}
	d, err := c.Detail(ctx, first.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Calls) != 2 || d.Summary.Name != "nightly" || string(d.Args) != `{"what":"links"}` {
		t.Errorf("show of the scheduled run: %d calls, %q, args %s", len(d.Calls), d.Summary.Name, d.Args)
	}

	// The last three hours, one run an hour, each after the last ended.
	now := time.Now().UTC().Truncate(time.Hour)
	if err := c.BackfillSchedule(ctx, id, now.Add(-3*time.Hour), now.Add(-time.Minute), "buffer-all"); err != nil {
		t.Fatal(err)
	}
	all := scheduleRuns(t, c, id, 4)
	ids := map[string]bool{}
	for _, r := range all {
		if r.Status != engine.StatusCompleted || ids[r.RunID] {
			t.Errorf("run %s: %s %s", r.RunID, r.Status, r.Error)
		}
		ids[r.RunID] = true
	}

	if err := c.UnpauseSchedule(ctx, id, "go"); err != nil {
		t.Fatal(err)
	}
	if st, err = c.DescribeSchedule(ctx, id); err != nil || st.Paused || len(st.Next) == 0 || st.Started != 4 {
		t.Errorf("after unpause: %+v %v", st, err)
	}
	if err := c.PauseSchedule(ctx, id, "stop for now"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteSchedule(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeSchedule(ctx, id); !errors.Is(err, ErrNoSchedule) {
		t.Errorf("a deleted schedule described: %v", err)
	}
	if runs, _ := c.ScheduledRuns(ctx, id); !slices.Contains(runs, first.RunID) {
		t.Errorf("the runs of a deleted schedule are gone: %v", runs)
	}
}

// TestScheduleOverlap skips a run that is due while the last one still
// runs.
func TestScheduleOverlap(t *testing.T) {
	c := newClient(t)
	startWorker(t, c, "w1", simulated())
	path := writeScript(t, "slow.workflow.js", `export const meta = { name: 'slow', description: 'takes a while' }
return await agent('wait [simulate:sleep=3s]')
`)
	b, script, err := BundleFile(c.hosts, path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := "slow-" + c.Config().TaskQueue
	if err := c.CreateSchedule(ctx, ScheduleRequest{ID: id, Cron: "0 3 * * *", Paused: true,
		Run: StartRequest{Bundle: b, Script: script, Options: engine.DefaultOptions(), Cwd: filepath.Dir(path)}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteSchedule(context.Background(), id) })
	if err := c.TriggerSchedule(ctx, id); err != nil {
		t.Fatal(err)
	}
	var runs []string
	for len(runs) == 0 {
		if runs, err = c.ScheduledRuns(ctx, id); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := c.TriggerSchedule(ctx, id); err != nil {
		t.Fatal(err)
	}
	wait(t, c, runs[0])
	st, err := c.DescribeSchedule(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Skipped != 1 || st.Started != 1 || len(st.Runs) != 1 || st.Spec != "cron 0 3 * * *" || st.Overlap != "skip" {
		t.Errorf("with the default overlap policy (skip): %+v", st)
	}
}
