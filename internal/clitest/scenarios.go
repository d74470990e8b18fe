package clitest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
)

// Suite describes one CLI executor for RunScenarios.
type Suite struct {
	// CLI is the binary's name (Codex, Claude or Pi).
	CLI string
	// Model is the model the calls ask for.
	Model string
	// New builds the executor with env added to its children's
	// environment and reg as its child registry.
	New func(env []string, reg *proc.Registry) executors.Executor
	// CutRecovers is true when the CLI recovers from a cut stream by
	// itself (Claude Code retries without streaming).
	CutRecovers bool
	// WantCost is true when the CLI reports a cost.
	WantCost bool
	// TmpWritable is true when the CLI's workspace-write policy also lets
	// the agent write /tmp (Codex's sandbox does), where the tests' own
	// directories are: the refusal of a write outside the agent's
	// directory cannot be seen there.
	TmpWritable bool
	// ShellPermissions is the policy under which the CLI offers its shell
	// tool, for the tool scenario; "" is the default policy.
	ShellPermissions executors.Permissions
}

// greetingSchema is the schema of the schema scenario.
const greetingSchema = `{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"],"additionalProperties":false}`

// callTimeout bounds the timeout scenario's call: long enough for the
// slowest CLI (Pi, a Node program) to start and reach the server.
const callTimeout = 6 * time.Second

// RunScenarios runs the real CLI against a fake model server in every
// scenario of Must-show 1 — text, schema, a tool-using turn, HTTP 500,
// HTTP 401, HTTP 429, a cut stream, a timeout and an abort — and checks
// that each ends as the executor contract says, with the usage the
// executor reports equal to what the server sent, and no child left.
func RunScenarios(t *testing.T, s Suite) {
	Binary(t, s.CLI)
	type check func(t *testing.T, res executors.Result, err error, progress []executors.Progress)
	wantClass := func(c executors.Class) check {
		return func(t *testing.T, _ executors.Result, err error, _ []executors.Progress) {
			var ee *executors.Error
			if !errors.As(err, &ee) || ee.Class != c {
				t.Fatalf("err = %v, want a %s *executors.Error", err, c)
			}
		}
	}
	wantText := func(text string) check {
		return func(t *testing.T, res executors.Result, err error, _ []executors.Progress) {
			if err != nil {
				t.Fatalf("err = %v, want the answer %q", err, text)
			}
			if res.Text != text {
				t.Errorf("text = %q, want %q", res.Text, text)
			}
			if res.Usage.Total() == 0 {
				t.Error("no usage reported for a finished call")
			}
			if s.WantCost && res.Usage.CostUSD <= 0 {
				t.Errorf("cost = %v, want > 0", res.Usage.CostUSD)
			}
		}
	}
	cut := wantClass(executors.Transient)
	if s.CutRecovers {
		cut = wantText(fakemodel.TextAnswer)
	}
	tests := []struct {
		name   string
		prompt string
		schema string
		// stop ends the call's context: "timeout" or "abort".
		stop        string
		permissions executors.Permissions
		check       check
	}{
		{name: "text", prompt: "say hi", check: wantText(fakemodel.TextAnswer)},
		{name: "schema", prompt: "greet " + fakemodel.Marker(fakemodel.Schema), schema: greetingSchema,
			check: func(t *testing.T, res executors.Result, err error, _ []executors.Progress) {
				if err != nil {
					t.Fatal(err)
				}
				answer := res.Text
				if len(res.Structured) > 0 {
					answer = string(res.Structured)
				}
				var got, want any
				if json.Unmarshal([]byte(answer), &got) != nil || json.Unmarshal([]byte(fakemodel.SchemaAnswer), &want) != nil || !equalJSON(got, want) {
					t.Errorf("answer = %s (structured %s), want %s", res.Text, res.Structured, fakemodel.SchemaAnswer)
				}
			}},
		{name: "tool", prompt: "run a tool " + fakemodel.Marker(fakemodel.Tool), permissions: s.ShellPermissions,
			check: func(t *testing.T, res executors.Result, err error, progress []executors.Progress) {
				wantText(fakemodel.ToolAnswer)(t, res, err, progress)
				var call, result bool
				for _, h := range res.History {
					call = call || h.Kind == "tool_call"
					result = result || h.Kind == "tool_result" && strings.Contains(h.Text, "hi") && !h.IsError
				}
				if !call || !result {
					t.Errorf("history %+v lacks the tool call and its output", res.History)
				}
				live := false
				for _, p := range progress {
					live = live || p.History != nil && p.History.Kind == "tool_call"
				}
				if !live {
					t.Error("the tool call was not published live")
				}
			}},
		{name: "http 500", prompt: fakemodel.Marker(fakemodel.Err500), check: wantClass(executors.Transient)},
		{name: "http 401", prompt: fakemodel.Marker(fakemodel.Err401), check: wantClass(executors.Unavailable)},
		{name: "unknown model", prompt: fakemodel.Marker(fakemodel.ErrModel), check: wantClass(executors.Unavailable)},
		{name: "http 429", prompt: fakemodel.Marker(fakemodel.Err429), check: wantClass(executors.RateLimited)},
		{name: "cut stream", prompt: fakemodel.Marker(fakemodel.Cut), check: cut},
		{name: "timeout", prompt: fakemodel.Marker(fakemodel.Slow), stop: "timeout",
			check: func(t *testing.T, _ executors.Result, err error, _ []executors.Progress) {
				if !errors.Is(err, context.DeadlineExceeded) || executors.ClassOf(err) != executors.Transient {
					t.Fatalf("err = %v, want the deadline (transient)", err)
				}
			}},
		{name: "abort", prompt: fakemodel.Marker(fakemodel.Slow), stop: "abort",
			check: func(t *testing.T, _ executors.Result, err error, _ []executors.Progress) {
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, reg := Serve(t)
			exec := s.New(Setup(t, s.CLI, srv.URL()), reg)
			req := executors.Request{RunID: "test", Path: "/0:agent", Prompt: tc.prompt, Model: s.Model, Dir: t.TempDir(),
				Permissions: tc.permissions, Attempt: 1}
			if tc.schema != "" {
				req.Schema = json.RawMessage(tc.schema)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var groups []int
			aborted := make(chan time.Time, 1)
			switch tc.stop {
			case "timeout":
				ctx, cancel = context.WithTimeout(ctx, callTimeout)
				defer cancel()
			case "abort":
				actx, abort := context.WithCancel(ctx)
				ctx = actx
				go func() {
					// Abort once the CLI is streaming from the server.
					if srv.WaitRequests(actx, 1) == nil {
						groups = reg.Groups()
						aborted <- time.Now()
						abort()
					}
				}()
			}
			var progress []executors.Progress
			progressCh := make(chan executors.Progress, 1024)
			started := time.Now()
			res, err := exec.Run(ctx, req, func(p executors.Progress) { progressCh <- p })
			elapsed := time.Since(started)
			close(progressCh)
			for p := range progressCh {
				progress = append(progress, p)
			}
			t.Logf("%s: %v in %v, usage %+v", tc.name, err, elapsed.Round(time.Millisecond), res.Usage)
			tc.check(t, res, err, progress)
			sent := srv.Sent()
			got := res.Usage
			got.CostUSD = 0
			// Usage that went out on a stream the server then cut counts
			// only if the CLI read it before the connection dropped, which
			// is a race the CLI, not we, decides.
			cut := srv.SentOnCutStreams()
			withoutCut := executors.Usage{InputTokens: sent.InputTokens - cut.InputTokens,
				CachedInputTokens: sent.CachedInputTokens - cut.CachedInputTokens, OutputTokens: sent.OutputTokens - cut.OutputTokens}
			if got != sent && got != withoutCut {
				t.Errorf("usage = %+v, the server sent %+v (%+v of it on a stream it cut)", res.Usage, sent, cut)
			}
			// How long the call took to stop once told to: from the abort,
			// or from the start for a timeout. A CLI that takes seconds
			// to start on a busy machine is not slow to stop.
			stopping := elapsed
			select {
			case at := <-aborted:
				stopping = time.Since(at)
			default:
			}
			if tc.stop != "" && stopping > callTimeout+proc.DefaultGrace+5*time.Second {
				t.Errorf("stopping the call took %v", stopping)
			}
			if left := reg.Groups(); len(left) != 0 {
				t.Errorf("registry still lists children %v", left)
			}
			for _, g := range groups {
				waitGroupGone(t, g)
			}
		})
	}
}

// waitGroupGone fails the test if process group g does not end soon.
func waitGroupGone(t *testing.T, g int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for proc.GroupAlive(g) {
		if time.Now().After(deadline) {
			t.Errorf("process group %d outlived the call", g)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
