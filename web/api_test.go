package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/web"
)

// slowScript runs until the test releases the gate "slow".
const slowScript = `export const meta = { name: 'slow', description: 'd' }
return await parallel([1,2,3,4,5,6,7,8].map(i => () => agent('item ' + i + ' [gate:slow]')))`

func TestStartErrorsAreClientErrors(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	if err := os.WriteFile(filepath.Join(f.dir, "broken.workflow.js"), []byte("export const meta = { name: 'b', description: 'd' }\nreturn agent(\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, body, contentType string
		status                  int
		code, position          string
	}{
		{"syntax error", jsonBody(web.StartRequest{Script: "export const meta = { name: 'x', description: 'd' }\nreturn agent(("}), "", 400, "bad_script", "inline.workflow.js:2:"},
		{"meta", jsonBody(web.StartRequest{Script: "export const meta = { name: 'x' }\nreturn 1"}), "", 400, "bad_script", "inline.workflow.js:1:"},
		{"determinism", jsonBody(web.StartRequest{Script: "export const meta = { name: 'x', description: 'd' }\nimport fs from 'fs'"}), "", 400, "bad_script", "inline.workflow.js:2"},
		{"file with a syntax error", jsonBody(web.StartRequest{Path: "broken.workflow.js"}), "", 400, "bad_script", "broken.workflow.js:"},
		{"no such file", jsonBody(web.StartRequest{Path: "nope.workflow.js"}), "", 400, "bad_request", ""},
		{"no such saved workflow", jsonBody(web.StartRequest{Name: "nope"}), "", 404, "not_found", ""},
		{"name with a path", jsonBody(web.StartRequest{Name: "../x"}), "", 400, "bad_request", ""},
		{"two sources", `{"script":"x","name":"y"}`, "", 400, "bad_request", ""},
		{"bad filename", `{"script":"x","filename":"../x.workflow.js"}`, "", 400, "bad_request", ""},
		{"unknown field", `{"script":"x","bogus":1}`, "", 400, "bad_request", ""},
		{"not JSON", `{"script":`, "", 400, "bad_request", ""},
		{"bad args", `{"path":"x.workflow.js","args":{]}`, "", 400, "bad_request", ""},
		{"bad options", jsonBody(map[string]any{"script": slowScript, "options": map[string]any{"concurrency": 0}}), "", 400, "bad_request", ""},
		{"unknown executor", jsonBody(map[string]any{"script": slowScript, "options": map[string]any{"executor": "nope"}}), "", 400, "bad_request", ""},
		{"form post", `script=x`, "application/x-www-form-urlencoded", 415, "unsupported_media_type", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.t = t
			r := request{method: "POST", path: "/api/runs", body: c.body}
			if c.contentType != "" {
				r.header = map[string]string{"Content-Type": c.contentType}
			}
			res := f.do(r)
			var body web.ErrorBody
			_ = json.Unmarshal(res.body, &body)
			if res.status != c.status || body.Error.Code != c.code {
				t.Fatalf("%d %s, want %d %s", res.status, res.body, c.status, c.code)
			}
			if c.position != "" && !strings.Contains(body.Error.Position, c.position) {
				t.Errorf("position %q, want it to contain %q", body.Error.Position, c.position)
			}
		})
	}
	f.t = t
	if runs, _ := f.client.Runs(context.Background()); len(runs) != 0 {
		t.Errorf("bad starts left runs: %v", runs)
	}
}

func TestStartIsIdempotentWithRequestID(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	ctx := context.Background()
	req := web.StartRequest{Script: slowScript, RequestID: "req-1"}
	a, err := f.client.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.client.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if a.RunID != b.RunID {
		t.Errorf("a retry started a second run: %s, %s", a.RunID, b.RunID)
	}
	req.Args = json.RawMessage(`{"other":true}`)
	if _, err := f.client.Start(ctx, req); !web.IsStatus(err, http.StatusConflict) {
		t.Errorf("requestId reused for another request: %v, want 409", err)
	}
	if runs, _ := f.client.Runs(ctx); len(runs) != 1 {
		t.Errorf("%d runs, want 1", len(runs))
	}
}

func TestRunControls(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	ctx := context.Background()
	id := f.startScript(slowScript).RunID
	if err := f.client.Delete(ctx, id); !web.IsStatus(err, http.StatusConflict) {
		t.Errorf("delete a running run: %v, want 409", err)
	}
	if err := f.client.Pause(ctx, id); err != nil {
		t.Fatal(err)
	}
	// An immediate resume waits for the pause to settle.
	if _, err := f.client.Resume(ctx, id, web.ResumeRequest{}); err != nil {
		t.Fatalf("immediate resume: %v", err)
	}
	f.gates.Release("slow")
	d := f.waitStatus(id, "completed")
	if d.Summary.Epoch != 1 {
		t.Errorf("epoch %d, want 1", d.Summary.Epoch)
	}
	if err := f.client.Pause(ctx, id); !web.IsStatus(err, http.StatusConflict) {
		t.Errorf("pause a finished run: %v, want 409", err)
	}
	if err := f.client.Stop(ctx, id); err != nil {
		t.Errorf("stop a finished run: %v", err)
	}
	if _, err := f.client.Resume(ctx, id, web.ResumeRequest{}); !web.IsStatus(err, http.StatusConflict) {
		t.Errorf("resume a stopped run: %v, want 409", err)
	}
	if err := f.client.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Run(ctx, id); !web.IsStatus(err, http.StatusNotFound) {
		t.Errorf("a deleted run: %v, want 404", err)
	}
}

const checkpointScript = `export const meta = { name: 'gate', description: 'd' }
const channel = await checkpoint('Which channel?', { kind: 'select', choices: ['beta', 'stable'] })
return await agent('ship to ' + channel)`

func TestCheckpointAnsweredOverHTTP(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	ctx := context.Background()
	stream := f.openStream("", 0)
	defer stream.close()
	id := f.startScript(checkpointScript).RunID
	cp := f.waitCheckpoint(id)
	if cp.ID != web.CheckpointID(id, cp.Path) || cp.Kind != "select" || len(cp.Choices) != 2 {
		t.Fatalf("checkpoint %+v", cp)
	}
	var ov web.Overview
	f.getJSON("/api/overview", &ov)
	if len(ov.Checkpoints) != 1 || ov.Checkpoints[0].ID != cp.ID {
		t.Errorf("overview checkpoints: %+v", ov.Checkpoints)
	}
	for {
		ev := stream.next(t)
		if strings.Contains(ev.data, `"type":"checkpoint.pending"`) {
			if !strings.Contains(ev.data, cp.ID) {
				t.Errorf("pending event without the id: %s", ev.data)
			}
			break
		}
	}
	journal := filepath.Join(f.rt.Store().RunsDir(), id+".jsonl")
	before, _ := os.ReadFile(journal)
	for _, bad := range []string{`"nightly"`, `true`, `{}`} {
		if err := f.client.Respond(ctx, cp.ID, json.RawMessage(bad)); !web.IsStatus(err, http.StatusBadRequest) {
			t.Errorf("answer %s: %v, want 400", bad, err)
		}
	}
	if after, _ := os.ReadFile(journal); string(after) != string(before) {
		t.Errorf("a refused answer was journaled")
	}
	if res := f.do(request{method: "POST", path: "/api/checkpoints/" + cp.ID + "/respond", body: `{}`}); res.status != 400 {
		t.Errorf("no value: %d %s", res.status, res.body)
	}
	if err := f.client.Respond(ctx, cp.ID, json.RawMessage(`"beta"`)); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Respond(ctx, cp.ID, json.RawMessage(`"beta"`)); !web.IsStatus(err, http.StatusNotFound) {
		t.Errorf("a second answer: %v, want 404", err)
	}
	d := f.waitStatus(id, "completed")
	if !strings.Contains(string(d.Result), "ship to beta") && !strings.Contains(string(d.Result), "beta") {
		t.Errorf("result %s does not use the answer", d.Result)
	}
}

// TestCheckpointReaskedAfterPause: pausing withdraws a pending checkpoint;
// resuming asks it again under the same id.
func TestCheckpointReaskedAfterPause(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	ctx := context.Background()
	id := f.startScript(checkpointScript).RunID
	first := f.waitCheckpoint(id)
	if err := f.client.Pause(ctx, id); err != nil {
		t.Fatal(err)
	}
	f.waitStatus(id, "paused")
	if cps, _ := f.client.Checkpoints(ctx); len(cps) != 0 {
		t.Errorf("a paused run's checkpoint is still pending: %+v", cps)
	}
	if _, err := f.client.Resume(ctx, id, web.ResumeRequest{}); err != nil {
		t.Fatal(err)
	}
	again := f.waitCheckpoint(id)
	if again.ID != first.ID {
		t.Errorf("re-asked as %s, first asked as %s", again.ID, first.ID)
	}
	if err := f.client.Respond(ctx, again.ID, json.RawMessage(`"stable"`)); err != nil {
		t.Fatal(err)
	}
	f.waitStatus(id, "completed")
}
