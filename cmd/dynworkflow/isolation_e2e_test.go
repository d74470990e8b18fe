package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/web"
)

// bigWorkflow runs 300 agents on the gated executor.
const bigWorkflow = `export const meta = { name: 'big', description: '300 agents' }
const r = await parallel(Array.from({ length: 300 }, (_, i) => () => agent('task ' + i)))
return r.filter(x => x === 'done').length
`

// TestServeSurvivesHostileRuns: a real serve runs a 300-agent run while
// it is sent, over the API and through the CLI, everything that took the
// process down, or any run in it: a 1.2 MB script of 600,000 nested [
// (goja's parser overflowed the Go stack: fatal, no recover catches it), a
// script whose result is nested 200,000 levels deep (encoding/json
// panicked in the journal, and JSON.stringify took minutes), the same
// forwarded by `dynworkflow run`, args nested 20,000 levels deep, a child
// given such args, goja's panic on an arrow reading arguments, a deep
// checkpoint answer. Each is refused or fails its own run with a clear
// error; the server stays up and the 300-agent run completes.
func TestServeSurvivesHostileRuns(t *testing.T) {
	e := e2etest.NewEnv(t)
	gate := filepath.Join(e.Dir, "gate")
	// The agents of the big run wait until the test has sent everything:
	// they are in flight all along, whatever the machine's speed.
	agent := e.Write("agent.sh", "#!/bin/sh\nwhile [ ! -e "+gate+" ]; do sleep 0.02; done\necho done\n")
	s := e2etest.Serve(e, "--command-executor", "gate=sh "+agent)
	ctx := context.Background()
	big, err := s.Client.Start(ctx, web.StartRequest{Script: bigWorkflow,
		Options: &web.RunOptions{Executor: new("gate"), Concurrency: new(8)}})
	if err != nil {
		t.Fatal(err)
	}
	e2etest.WaitUntil(t, "the big run's agents to start", func() bool {
		recs, _ := e2etest.ReadJournal(t, e.JournalPath(big.RunID))
		return len(e2etest.StartedAfter(recs, 0)) >= 8
	})

	apiError := func(what string, err error, status int, phrase string) {
		t.Helper()
		var ae *web.APIError
		if !errors.As(err, &ae) || ae.Status != status || !strings.Contains(ae.Message, phrase) {
			t.Errorf("%s: %v; want %d saying %q", what, err, status, phrase)
		}
	}
	nested := "export const meta = { name: 'nested', description: '600,000 [' }\nreturn " +
		strings.Repeat("[", 600000) + strings.Repeat("]", 600000) + "\n"
	_, err = s.Client.Start(ctx, web.StartRequest{Script: nested})
	apiError("the 1.2 MB nested script", err, http.StatusBadRequest, "nests more than 1000 levels deep here")

	// Bodies no well-behaved client sends (encoding/json would not
	// encode them): sent as bytes.
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	body, _ := json.Marshal(web.StartRequest{Script: quickWorkflow})
	status, text := s.Post("/api/runs", strings.Replace(string(body), "{", `{"args":`+deep+",", 1))
	if status != http.StatusBadRequest {
		t.Errorf("args nested 20,000 levels: %d %s", status, text)
	}
	for _, n := range []int{1001, 5000} {
		deep := strings.Repeat("[", n) + strings.Repeat("]", n)
		status, text := s.Post("/api/runs", strings.Replace(string(body), "{", `{"args":`+deep+",", 1))
		if status != http.StatusBadRequest || !strings.Contains(text, "nested more than 1000 levels deep") {
			t.Errorf("args nested %d levels: %d %s", n, status, text)
		}
	}

	e.Write(".claude/workflows/child.workflow.js", "export const meta = { name: 'child', description: 'c' }\nreturn 1\n")
	failing := map[string]string{
		"a deep result": `export const meta = { name: 'deep', description: 'deep' }
let o = 'leaf'; for (let i = 0; i < 200000; i++) o = [o]
await agent('x')
return o
`,
		"deep child args": `export const meta = { name: 'child-args', description: 'deep' }
let o = 'leaf'; for (let i = 0; i < 20000; i++) o = [o]
return await workflow('child', { deep: o })
`,
		"arguments at the top level": `export const meta = { name: 'args', description: 'goja panicked' }
const f = () => arguments
return f()
`,
	}
	want := map[string]string{
		"a deep result":              "the workflow's result: nested more than 1000 levels deep",
		"deep child args":            "workflow(): the args: nested more than 1000 levels deep",
		"arguments at the top level": "ReferenceError: arguments is not defined",
	}
	for what, script := range failing {
		r, err := s.Client.Start(ctx, web.StartRequest{Script: script, Options: &web.RunOptions{Executor: new("simulate")}})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		s.WaitRun(r.RunID, "failed")
		d, err := s.Client.Run(ctx, r.RunID)
		if err != nil || !strings.Contains(d.Summary.Error, want[what]) {
			t.Errorf("%s: failed with %q, %v; want %q", what, d.Summary.Error, err, want[what])
		}
	}

	// The CLI forwards a run to the live server; it fails there alone.
	r := e.DW("run", e.Write("deep.workflow.js", failing["a deep result"]), "--executor", "simulate", "--attach")
	e2etest.ExpectCode(t, r, 1)
	if !strings.Contains(r.Stdout+r.Stderr, want["a deep result"]) {
		t.Errorf("the forwarded run:\n%s", r)
	}

	// A checkpoint answer nested deep is refused; the run takes a good one.
	asks, err := s.Client.Start(ctx, web.StartRequest{Script: gateWorkflow, Options: &web.RunOptions{Executor: new("simulate")}})
	if err != nil {
		t.Fatal(err)
	}
	cp := s.WaitCheckpoint(asks.RunID)
	if status, text := s.Post("/api/checkpoints/"+cp.ID+"/respond", `{"value":`+deep+`}`); status != http.StatusBadRequest {
		t.Errorf("a deep checkpoint answer: %d %s", status, text)
	}
	if err := s.Client.Respond(ctx, cp.ID, json.RawMessage(`"beta"`)); err != nil {
		t.Fatal(err)
	}
	s.WaitRun(asks.RunID, "completed")

	if !s.Alive() {
		t.Fatalf("serve exited:\n%s", s.Res)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.WaitRun(big.RunID, "completed")
	d, err := s.Client.Run(ctx, big.RunID)
	if err != nil || string(d.Result) != "300" || d.Summary.Stats.Live != 300 {
		t.Fatalf("the big run: %s, %d live, %v", d.Result, d.Summary.Stats.Live, err)
	}
	if _, err := s.Client.Health(ctx); err != nil || !s.Alive() {
		t.Fatalf("serve is not up: %v\n%s", err, s.Res)
	}
}
