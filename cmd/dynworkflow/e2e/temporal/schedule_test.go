package temporal_test

import (
	"encoding/json"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"strings"
	"testing"
	"time"
)

// TestTemporalSchedule drives `dynworkflow schedule` end to end: a saved
// workflow on a schedule, run by hand and backfilled, paused and
// unpaused; its runs appear in `list` and `show` like any other, and stay
// when the schedule is deleted.
func TestTemporalSchedule(t *testing.T) {
	e := newTemporalEnv(t)
	e.startWorker()
	e.Write(".dynworkflow/workflows/digest.workflow.js", `export const meta = { name: 'digest', description: 'a daily digest' }
return await agent('digest of ' + args.topic)
`)
	r := e.DWOK(append([]string{"schedule", "create", "digest", "--every", "24h", "--offset", "3h", "--paused", "--note", "not yet",
		"--id", "digest-daily", "--args", `{"topic":"builds"}`}, e.flags()...)...)
	if !strings.Contains(r.Stdout, "schedule digest-daily created: digest runs every 24h0m0s offset 3h0m0s (paused)") {
		t.Fatalf("create: %s", r)
	}
	if r := e.DW(append([]string{"schedule", "create", "digest", "--every", "24h", "--id", "digest-daily"}, e.flags()...)...); r.Code != 1 || !strings.Contains(r.Stderr, "exists already") {
		t.Errorf("a second create of the same id: %s", r)
	}
	if r := e.DW("schedule", "create", "digest", "--every", "24h", "--cron", "0 3 * * *"); r.Code != 64 {
		t.Errorf("both --every and --cron: %s", r)
	}
	if r := e.DW("schedule", "pause", "nosuch"); r.Code != 1 || !strings.Contains(r.Stderr, "schedule list") {
		t.Errorf("an unknown schedule: %s", r)
	}

	e.DWOK("schedule", "trigger", "digest-daily")
	var runID string
	e2etest.WaitUntil(t, "the triggered run in list", func() bool {
		for _, s := range e.List() {
			if strings.HasPrefix(s.RunID, "digest-") && s.Status == "completed" {
				runID = s.RunID
				return true
			}
		}
		return false
	})
	d := e.Show(runID)
	if len(d.Calls) != 1 || !strings.Contains(string(d.Result), "digest of builds") {
		t.Fatalf("show of the scheduled run: %+v", d)
	}

	from := time.Now().UTC().Add(-72 * time.Hour).Format(time.RFC3339)
	to := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	e.DWOK("schedule", "backfill", "digest-daily", "--from", from, "--to", to, "--overlap", "buffer-all")
	var show struct {
		State struct {
			Paused  bool   `json:"paused"`
			Note    string `json:"note"`
			Spec    string `json:"spec"`
			Started int    `json:"started"`
		} `json:"state"`
		Runs []e2etest.Summary `json:"runs"`
	}
	e2etest.WaitUntil(t, "the three backfilled runs", func() bool {
		r := e.DWOK("schedule", "show", "digest-daily", "--json")
		if err := json.Unmarshal([]byte(r.Stdout), &show); err != nil {
			t.Fatalf("schedule show --json: %v\n%s", err, r)
		}
		done := 0
		for _, s := range show.Runs {
			if s.Status == "completed" {
				done++
			}
		}
		return done == 4
	})
	if !show.State.Paused || show.State.Note != "not yet" || show.State.Spec != "every 24h0m0s offset 3h0m0s" || show.State.Started != 4 {
		t.Errorf("schedule show: %+v", show.State)
	}
	e.DWOK("schedule", "unpause", "digest-daily")
	r = e.DWOK("schedule", "list")
	if !strings.Contains(r.Stdout, "digest-daily") || !strings.Contains(r.Stdout, "active") {
		t.Errorf("schedule list after unpause:\n%s", r)
	}
	e.DWOK("schedule", "delete", "digest-daily")
	if r := e.DWOK("schedule", "list"); strings.Contains(r.Stdout, "digest-daily") {
		t.Errorf("a deleted schedule is listed:\n%s", r)
	}
	n := 0
	for _, s := range e.List() {
		if strings.HasPrefix(s.RunID, "digest-") {
			n++
		}
	}
	if n != 4 {
		t.Errorf("list has %d runs of the deleted schedule, want 4", n)
	}
}
