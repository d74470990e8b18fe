package callpolicy_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// script is a Launcher whose attempts fail as a list says, then answer.
type script struct {
	fails   []error // the failures of the first attempts, in order
	waits   []time.Duration
	retries []string // class of each retry
	prompts []string
}

func (s *script) Launch(_ context.Context, a callpolicy.Attempt) callpolicy.AttemptResult {
	s.prompts = append(s.prompts, a.Prompt)
	res := callpolicy.AttemptResult{Result: executors.Result{Usage: executors.Usage{InputTokens: 10, OutputTokens: 1}}}
	if a.N <= len(s.fails) {
		res.Err = s.fails[a.N-1]
		return res
	}
	res.Value = json.RawMessage(`"ok"`)
	return res
}

func (s *script) Wait(_ context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	return nil
}

func (s *script) Retrying(r callpolicy.Retry) { s.retries = append(s.retries, r.Class) }

func repeat(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

func TestFailureClasses(t *testing.T) {
	transient := &executors.Error{Class: executors.Transient, Message: "503"}
	infra := &executors.Error{Class: executors.Infrastructure, Message: "pipe2: too many open files"}
	terminal := &executors.Error{Class: executors.Terminal, Message: "400"}
	limited := &executors.Error{Class: executors.RateLimited, Message: "429"}
	gone := &executors.Error{Class: executors.Unavailable, Message: "not logged in", Fix: "log in"}
	violation := &callpolicy.SchemaViolation{Err: errors.New("missing n")}
	tests := []struct {
		name     string
		fails    []error
		retries  *int
		kind     callpolicy.OutcomeKind
		attempts int
		classes  string
		reason   string
	}{
		{"answers", nil, nil, callpolicy.Answered, 1, "", ""},
		{"transient, retried by default", repeat(transient, callpolicy.DefaultAgentRetries), nil, callpolicy.Answered,
			callpolicy.DefaultAgentRetries + 1, strings.Repeat("transient ", callpolicy.DefaultAgentRetries), ""},
		{"transient, out of retries", repeat(transient, callpolicy.DefaultAgentRetries+1), nil, callpolicy.GaveUp,
			callpolicy.DefaultAgentRetries + 1, strings.Repeat("transient ", callpolicy.DefaultAgentRetries), ""},
		{"transient, the call's own retries", repeat(transient, 1), new(int), callpolicy.GaveUp, 1, "", ""},
		{"ours, never the agent's retries", append(repeat(infra, callpolicy.InfrastructureRetries), transient), new(int), callpolicy.GaveUp,
			callpolicy.InfrastructureRetries + 1, strings.Repeat("infrastructure ", callpolicy.InfrastructureRetries), ""},
		{"ours, until it clears", repeat(infra, callpolicy.InfrastructureRetries), nil, callpolicy.Answered,
			callpolicy.InfrastructureRetries + 1, strings.Repeat("infrastructure ", callpolicy.InfrastructureRetries), ""},
		{"ours, persisting, pauses", repeat(infra, callpolicy.InfrastructureRetries+1), nil, callpolicy.Paused,
			callpolicy.InfrastructureRetries + 1, strings.Repeat("infrastructure ", callpolicy.InfrastructureRetries), "too many open files"},
		{"terminal", []error{terminal}, nil, callpolicy.GaveUp, 1, "", ""},
		{"rate limited pauses", []error{limited}, nil, callpolicy.Paused, 1, "", "rate limited: 429"},
		{"unavailable pauses", []error{gone}, nil, callpolicy.Paused, 1, "", "executor sim is unavailable: not logged in. Fix: log in"},
		{"schema repaired", []error{violation}, nil, callpolicy.Answered, 2, "schema ", ""},
		{"schema never satisfied", repeat(violation, 3), nil, callpolicy.GaveUp, 3, "schema schema ", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			limits := callpolicy.Limits{Executor: "sim", MaxAgents: 10, MaxItems: 10, AgentRetries: callpolicy.DefaultAgentRetries,
				SchemaAttempts: 3, RetryBackoff: time.Second}
			x := callpolicy.NewExecution("run", 0, limits, nil, host{})
			c, err := x.Agent(context.Background(), callpolicy.NewFrame("", callpolicy.Identity{}, lang.Meta{}, nil).Root(), "p",
				lang.AgentOptions{Retries: tc.retries})
			if err != nil {
				t.Fatal(err)
			}
			l := &script{fails: tc.fails}
			o := c.RunLive(context.Background(), l)
			if o.Kind != tc.kind || o.Attempts != tc.attempts {
				t.Fatalf("kind %d after %d attempts (%v), want %d after %d", o.Kind, o.Attempts, o.Err, tc.kind, tc.attempts)
			}
			if got := strings.Join(l.retries, " "); strings.TrimSpace(tc.classes) != got {
				t.Errorf("retries %q, want %q", got, tc.classes)
			}
			if n := x.Counts.Retried.Load(); int(n) != len(l.retries) {
				t.Errorf("counted %d retries, the launcher was told of %d", n, len(l.retries))
			}
			if !strings.Contains(o.PauseReason, tc.reason) || (tc.reason == "") != (o.PauseReason == "") {
				t.Errorf("pause reason %q, want one with %q", o.PauseReason, tc.reason)
			}
			if want := int64(11 * o.Attempts); x.Spent() != want {
				t.Errorf("the budget saw %d tokens, want %d: every attempt counts", x.Spent(), want)
			}
			for i, p := range l.prompts[1:] {
				if repaired := strings.Contains(p, "did not satisfy the required JSON Schema"); repaired != (tc.fails[i] == violation) {
					t.Errorf("attempt %d's prompt %q after %v", i+2, p, tc.fails[i])
				}
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	base := time.Second
	for n := 1; n <= 8; n++ {
		d := min(callpolicy.MaxRetryWait, base<<(n-1))
		seen := map[time.Duration]bool{}
		for _, path := range []string{"/agent.0", "/agent.1", "/par.0/3/agent.0", "/par.0/4/agent.0"} {
			w := callpolicy.Backoff(base, n, 0, "run-1", path)
			if w < d/2 || w > d {
				t.Errorf("retry %d of %s waits %v, want within [%v, %v]", n, path, w, d/2, d)
			}
			if w != callpolicy.Backoff(base, n, 0, "run-1", path) {
				t.Errorf("retry %d of %s waits differently each time it is asked", n, path)
			}
			seen[w] = true
		}
		if len(seen) < 3 {
			t.Errorf("retry %d of four calls waits %v: no jitter", n, seen)
		}
	}
	if w := callpolicy.Backoff(base, 1, 20*time.Second, "r", "/agent.0"); w != 20*time.Second {
		t.Errorf("a Retry-After of 20s gave a wait of %v", w)
	}
	if w := callpolicy.Backoff(base, 1, time.Hour, "r", "/agent.0"); w != callpolicy.MaxHintWait {
		t.Errorf("a reset an hour away gave a wait of %v, want the cap %v", w, callpolicy.MaxHintWait)
	}
	if w := callpolicy.Backoff(base, 200, 0, "r", "/agent.0"); w > callpolicy.MaxRetryWait || w < callpolicy.MaxRetryWait/2 {
		t.Errorf("retry 200 waits %v", w)
	}
	if w := callpolicy.Backoff(0, 3, 0, "r", "/agent.0"); w != 0 {
		t.Errorf("no backoff waits %v", w)
	}
}
