package main_test

import (
	"encoding/json"
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
	e.write(".dynworkflow/workflows/digest.workflow.js", `export const meta = { name: 'digest', description: 'a daily digest' }
return await agent('digest of ' + args.topic)
`)
	r := e.dwOK(append([]string{"schedule", "create", "digest", "--every", "24h", "--offset", "3h", "--paused", "--note", "not yet",
		"--id", "digest-daily", "--args", `{"topic":"builds"}`}, e.flags()...)...)
	if !strings.Contains(r.stdout, "schedule digest-daily created: digest runs every 24h0m0s offset 3h0m0s (paused)") {
		t.Fatalf("create: %s", r)
	}
	if r := e.dw(append([]string{"schedule", "create", "digest", "--every", "24h", "--id", "digest-daily"}, e.flags()...)...); r.code != 1 || !strings.Contains(r.stderr, "exists already") {
		t.Errorf("a second create of the same id: %s", r)
	}
	if r := e.dw("schedule", "create", "digest", "--every", "24h", "--cron", "0 3 * * *"); r.code != 64 {
		t.Errorf("both --every and --cron: %s", r)
	}
	if r := e.dw("schedule", "pause", "nosuch"); r.code != 1 || !strings.Contains(r.stderr, "schedule list") {
		t.Errorf("an unknown schedule: %s", r)
	}

	e.dwOK("schedule", "trigger", "digest-daily")
	var runID string
	waitUntil(t, "the triggered run in list", func() bool {
		for _, s := range e.list() {
			if strings.HasPrefix(s.RunID, "digest-") && s.Status == "completed" {
				runID = s.RunID
				return true
			}
		}
		return false
	})
	d := e.show(runID)
	if len(d.Calls) != 1 || !strings.Contains(string(d.Result), "digest of builds") {
		t.Fatalf("show of the scheduled run: %+v", d)
	}

	from := time.Now().UTC().Add(-72 * time.Hour).Format(time.RFC3339)
	to := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	e.dwOK("schedule", "backfill", "digest-daily", "--from", from, "--to", to, "--overlap", "buffer-all")
	var show struct {
		State struct {
			Paused  bool   `json:"paused"`
			Note    string `json:"note"`
			Spec    string `json:"spec"`
			Started int    `json:"started"`
		} `json:"state"`
		Runs []summary `json:"runs"`
	}
	waitUntil(t, "the three backfilled runs", func() bool {
		r := e.dwOK("schedule", "show", "digest-daily", "--json")
		if err := json.Unmarshal([]byte(r.stdout), &show); err != nil {
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
	e.dwOK("schedule", "unpause", "digest-daily")
	r = e.dwOK("schedule", "list")
	if !strings.Contains(r.stdout, "digest-daily") || !strings.Contains(r.stdout, "active") {
		t.Errorf("schedule list after unpause:\n%s", r)
	}
	e.dwOK("schedule", "delete", "digest-daily")
	if r := e.dwOK("schedule", "list"); strings.Contains(r.stdout, "digest-daily") {
		t.Errorf("a deleted schedule is listed:\n%s", r)
	}
	n := 0
	for _, s := range e.list() {
		if strings.HasPrefix(s.RunID, "digest-") {
			n++
		}
	}
	if n != 4 {
		t.Errorf("list has %d runs of the deleted schedule, want 4", n)
	}
}
