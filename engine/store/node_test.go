package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Every snapshot names the summary in the Node runtime's terms, with the
// arrays its list and show iterate never null.
func TestSnapshotCarriesTheNodeRuntimesFields(t *testing.T) {
	s := openT(t, t.TempDir())
	start := time.Date(2026, 7, 27, 10, 0, 0, 123456789, time.UTC)
	end := start.Add(1500 * time.Millisecond)
	snap := &Snapshot{Summary: Summary{
		RunID: "r1", Name: "audit", Description: "d", Status: "stopped", Executor: "codex", Error: "boom",
		ErrorCode: "TOKEN_BUDGET_EXHAUSTED", StartedAt: start, UpdatedAt: end, EndedAt: &end,
		Stats: Stats{InputTokens: 10, CachedInputTokens: 3, OutputTokens: 5, CostUSD: 0.5},
	}}
	if err := s.WriteSnapshot("r1", snap); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.RunPaths("r1").Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"runId": "r1", "workflowName": "audit", "description": "d", "status": "aborted",
		"phases": []any{}, "agents": []any{}, "logs": []any{},
		"startedAt": "2026-07-27T10:00:00.123Z", "updatedAt": "2026-07-27T10:00:01.623Z",
		"completedAt": "2026-07-27T10:00:01.623Z", "durationMs": 1500.0, "defaultExecutor": "codex",
		"error":      map[string]any{"message": "boom", "code": "TOKEN_BUDGET_EXHAUSTED"},
		"tokenUsage": map[string]any{"input": 10.0, "output": 5.0, "total": 15.0, "cost": 0.5, "cacheRead": 3.0, "cacheWrite": 0.0},
	}
	for k, v := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if _, ok := got["script"]; ok {
		t.Error(`the snapshot has a "script": the Node runtime would resume our run from the start`)
	}
	// Our own reader still finds the summary first.
	sums, err := s.ListSummaries()
	if err != nil || len(sums) != 1 || sums[0].Status != "stopped" || sums[0].Foreign != "" {
		t.Fatalf("ListSummaries = %+v, %v", sums, err)
	}
}

// A run the Node runtime wrote is listed and read as foreign, and never
// counts as ours.
func TestNodeRunsAreReadAsForeign(t *testing.T) {
	s := openT(t, t.TempDir())
	write := func(id, status, lock string) {
		t.Helper()
		run := fmt.Sprintf(`{
  "runId": %q, "workflowName": "node_side", "script": "export const meta = {}", "status": %q,
  "phases": ["Ask"], "currentPhase": "Ask",
  "agents": [
    {"id": 1, "callId": "%s:0", "label": "hi", "prompt": "Say hi", "status": "done", "executor": "codex",
     "tokenUsage": {"input": 11, "output": 11, "total": 22, "cost": 0, "cacheRead": 7, "cacheWrite": 0}},
    {"id": 2, "callId": "%s:1", "label": "boom", "prompt": "Fail", "status": "error", "error": "exit 1"}
  ],
  "journal": [{"index": 0, "runId": %q, "hash": "h", "result": "hello"}],
  "logs": [], "startedAt": "2026-11-30T09:15:21.261Z", "updatedAt": "2026-11-30T09:15:21.380Z",
  "tokenUsage": {"input": 38, "output": 22, "total": 60, "cost": 0, "cacheRead": 14, "cacheWrite": 0}
}`, id, status, id, id, id)
		if err := os.WriteFile(filepath.Join(s.RunsDir(), id+".json"), []byte(run), 0o600); err != nil {
			t.Fatal(err)
		}
		if lock != "" {
			if err := os.WriteFile(filepath.Join(s.RunsDir(), id+".lock"), []byte(lock), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("done-1", "completed", "")
	write("aborted-1", "aborted", "")
	write("live-1", "running", fmt.Sprintf(`{"runId":"live-1","pid":%d,"token":"t"}`, os.Getpid()))
	write("dead-1", "running", `{"runId":"dead-1","pid":2147483646,"token":"t"}`)

	sums, err := s.ListSummaries()
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, sum := range sums {
		if sum.Foreign != ForeignNode {
			t.Errorf("%s: Foreign = %q", sum.RunID, sum.Foreign)
		}
		status[sum.RunID] = sum.Status
		if sum.Stats.Agents != 2 || sum.Stats.Failed != 1 || sum.Stats.InputTokens != 38 || sum.Name != "node_side" {
			t.Errorf("%s: %+v", sum.RunID, sum)
		}
	}
	for id, want := range map[string]string{"done-1": "completed", "aborted-1": "stopped", "live-1": "running", "dead-1": "paused"} {
		if status[id] != want {
			t.Errorf("%s lists as %q, want %q", id, status[id], want)
		}
	}
	if !s.IsNodeRun("done-1") {
		t.Error("IsNodeRun(done-1) = false")
	}
	run, err := s.ReadNodeRun("done-1")
	if err != nil || len(run.Agents) != 2 || string(run.Journal[0].Result) != `"hello"` {
		t.Fatalf("ReadNodeRun = %+v, %v", run, err)
	}

	// Ours is never foreign.
	if err := s.WriteSnapshot("mine", &Snapshot{Summary: Summary{Status: "completed"}}); err != nil {
		t.Fatal(err)
	}
	if s.IsNodeRun("mine") {
		t.Error("IsNodeRun(mine) = true for our snapshot")
	}
	if _, err := s.ReadNodeRun("mine"); err == nil {
		t.Error("ReadNodeRun read our snapshot as the Node runtime's")
	}
	if err := (&ForeignError{RunID: "done-1", Op: "resume"}); !errors.Is(err, ErrForeignRun) {
		t.Error("a ForeignError does not match ErrForeignRun")
	}
}

// The lock file of a run we own says what the Node runtime checks before
// it takes a lock over: the run file's path and a live pid.
func TestLockFileNamesTheOwnerForTheNodeRuntime(t *testing.T) {
	s := openT(t, t.TempDir())
	l, err := s.AcquireLease("r1", "me")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	data, err := os.ReadFile(s.RunPaths("r1").Lock)
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		RunID   string `json:"runId"`
		RunPath string `json:"runPath"`
		PID     int    `json:"pid"`
		Token   string `json:"token"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		t.Fatal(err)
	}
	if lock.RunID != "r1" || lock.RunPath != s.RunPaths("r1").Snapshot || lock.PID != os.Getpid() || lock.Token == "" {
		t.Errorf("lock file %s", data)
	}
}

// Snapshots written before they carried the Node runtime's fields get
// them the first time the project is opened, so its list does not fail on
// them.
func TestOpenAddsTheNodeViewToOldSnapshots(t *testing.T) {
	root := t.TempDir()
	s := openT(t, root)
	old := `{"summary":{"runId":"old-1","name":"legacy","status":"completed","startedAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-02T03:04:06Z","stats":{"agents":2,"inputTokens":7}},"result":{"ok":true}}`
	path := s.RunPaths("old-1").Snapshot
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	s = openT(t, root)
	var got struct {
		Summary      Summary         `json:"summary"`
		Result       json.RawMessage `json:"result"`
		WorkflowName string          `json:"workflowName"`
		Status       string          `json:"status"`
		Phases       []string        `json:"phases"`
		Agents       []any           `json:"agents"`
	}
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.WorkflowName != "legacy" || got.Status != "completed" || got.Phases == nil || got.Agents == nil ||
		got.Summary.Stats.Agents != 2 || string(got.Result) != `{"ok":true}` {
		t.Errorf("upgraded snapshot: %s", data)
	}
	if _, err := os.Stat(filepath.Join(s.ProjectDir(), nodeViewMarker)); err != nil {
		t.Errorf("no marker after the upgrade: %v", err)
	}
}
