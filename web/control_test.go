package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/web"
)

// TestStopCallAndForkOverTheAPI stops one running call over the API (the
// script gets null, the run goes on), refuses what it cannot do, and forks
// the run at that call with a given answer.
func TestStopCallAndForkOverTheAPI(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	id := f.startScript(`export const meta = { name: 'stop', description: 'a slow call' }
const a = await agent('quick')
const b = await agent('[simulate:sleep=120s] slow')
return { a, b }`).RunID
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := f.client.Run(context.Background(), id)
		if err == nil && len(d.Calls) == 2 && d.Calls[1].Status == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow call never ran")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res := f.do(request{method: http.MethodPost, path: "/api/runs/" + id + "/calls/stop", body: `{}`}); res.status != http.StatusBadRequest {
		t.Errorf("a stop without a path: %d %s", res.status, res.body)
	}
	if res := f.do(request{method: http.MethodPost, path: "/api/runs/" + id + "/calls/restart", body: `{"path": "/agent.0"}`}); res.status != http.StatusConflict {
		t.Errorf("restarting a call that ended: %d %s", res.status, res.body)
	}
	if err := f.client.StopCall(context.Background(), id, "/agent.1"); err != nil {
		t.Fatal(err)
	}
	d := f.waitStatus(id, "completed")
	if string(d.Result) != `{"a":"`+strings.Trim(string(d.Calls[0].Result), `"`)+`","b":null}` || d.Failures[0].Class != "stopped" {
		t.Errorf("after the stop: %s, failures %+v", d.Result, d.Failures)
	}

	fork, err := f.client.Fork(context.Background(), id, web.ForkRequest{Path: "/agent.1", Answer: json.RawMessage(`"given"`)})
	if err != nil {
		t.Fatal(err)
	}
	fd := f.waitStatus(fork.RunID, "completed")
	if fd.Fork == nil || fd.Fork.RunID != id || !strings.Contains(string(fd.Result), `"b":"given"`) || fd.Summary.Stats.Live != 0 {
		t.Errorf("the fork: %+v, result %s, %d live", fd.Fork, fd.Result, fd.Summary.Stats.Live)
	}
	if res := f.do(request{method: http.MethodPost, path: "/api/runs/" + id + "/fork", body: `{"path": "/agent.7"}`}); res.status != http.StatusNotFound {
		t.Errorf("a fork at a call the run never made: %d %s", res.status, res.body)
	}
	if res := f.do(request{method: http.MethodPost, path: "/api/runs", body: `{"script": "return 1", "options": {"routes": ["no target"]}}`}); res.status != http.StatusBadRequest ||
		!strings.Contains(string(res.body), "routes[0]") {
		t.Errorf("a bad route: %d %s", res.status, res.body)
	}
}

// TestConfirmAboveOverTheAPI: a run started with confirmAbove below its
// forecast asks before its first agent, as a checkpoint at /confirm-cost
// that the API (and so the dashboard) answers.
func TestConfirmAboveOverTheAPI(t *testing.T) {
	prices := cost.Builtin()
	prices.Models["simulate"] = cost.Price{Input: 10, CachedInput: 10, Output: 10}
	f := newFixture(t, fixtureConfig{prices: prices})
	resp, err := f.client.Start(context.Background(), web.StartRequest{Script: `export const meta = { name: 'c', description: 'c' }
return await agent('go')`, Options: &web.RunOptions{ConfirmAbove: new(0.01), MaxCost: new(100.0)}})
	if err != nil {
		t.Fatal(err)
	}
	cp := f.waitCheckpoint(resp.RunID)
	if cp.Path != "/confirm-cost" || cp.Kind != "confirm" || !strings.Contains(cp.Prompt, "forecast to cost $") {
		t.Fatalf("the question: %+v", cp)
	}
	if err := f.client.Respond(context.Background(), cp.ID, json.RawMessage("true")); err != nil {
		t.Fatal(err)
	}
	d := f.waitStatus(resp.RunID, "completed")
	if d.Summary.MaxCostUSD != 100 || d.Summary.Stats.Live != 1 {
		t.Errorf("summary %+v", d.Summary)
	}
}
