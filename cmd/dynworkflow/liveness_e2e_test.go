package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/clitest"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
)

// liveTimeout bounds a run that waits out a dead endpoint: the limit is
// 30 seconds without progress, and the report must come within 60.
const liveTimeout = 3 * time.Minute

// callActivity is a call's last activity as show --json gives it.
type callActivity struct {
	Path     string `json:"path"`
	Status   string `json:"status"`
	Activity *struct {
		Activity struct {
			Kind string    `json:"kind"`
			Text string    `json:"text"`
			At   time.Time `json:"at"`
		} `json:"activity"`
	} `json:"activity"`
}

// oneLine is a script of one agent call.
const oneCall = `export const meta = { name: 'one-call', description: 'one agent call' }
return await agent('say hi', { label: 'greeter' })
`

// Issue 23, Must-show 5, with each real CLI: the model server dies while
// the agent waits on it. The run shows the agent's activity while it
// runs (show RUN CALL, from another process), and within 60 seconds of
// the server's death it pauses (exit 2) with the executor unavailable
// and the fix; once the server is back, resume completes it.
//
// Each CLI takes its own way there: Codex prints "Reconnecting...
// waiting for network" for as long as it runs; Claude Code, with its
// retries on as users have them, retries without an HTTP status; Pi,
// with its retries off as in the other tests, gives up at once with
// "Connection error." and is retried by the call policy.
func TestDeadEndpointPausesEachCLI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cli, executor string
		flags         []string
		env           []string
	}{
		{clitest.Codex, "codex", nil, nil},
		{clitest.Claude, "claude-code", nil, []string{"CLAUDE_CODE_MAX_RETRIES=10"}},
		{clitest.Pi, "pi", []string{"--model", clitest.PiModel}, nil},
	} {
		t.Run(tc.cli, func(t *testing.T) {
			clitest.Binary(t, tc.cli)
			t.Parallel()
			srv, err := fakemodel.Start(fakemodel.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Close)
			e := e2etest.NewEnv(t)
			e.Environ = append(clitest.Setup(t, tc.cli, srv.URL()), tc.env...)
			script := e.Write("one.workflow.js", oneCall)
			// The model takes its time: the agent is waiting on it when
			// the server dies.
			srv.SetDelay(time.Hour)
			before := e.JournalIDs()
			args := append([]string{"run", script, "--json", "--executor", tc.executor}, tc.flags...)
			p := e.StartFor(liveTimeout, args...)
			id := p.WaitNewJournal(before)
			ctx, cancel := context.WithTimeout(context.Background(), e2etest.WaitTimeout)
			defer cancel()
			if err := srv.WaitRequests(ctx, 1); err != nil {
				t.Fatalf("%v\n%s", err, p.Stderr.String())
			}

			// Liveness, from another process: the running call's last
			// activity, what and when.
			var seen callActivity
			e2etest.WaitUntil(t, "show RUN CALL to give the call's activity", func() bool {
				r := e.DW("show", id, "/agent.0", "--json")
				if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &seen) != nil {
					return false
				}
				return seen.Activity != nil
			})
			t.Logf("%s: last activity while waiting on the model: %s %q at %s", tc.cli, seen.Activity.Activity.Kind,
				seen.Activity.Activity.Text, seen.Activity.Activity.At.Format(time.TimeOnly))
			if text := e.DWOK("show", id, "/agent.0").Stdout; !strings.Contains(text, "Activity") {
				t.Errorf("show RUN CALL does not print the activity:\n%s", text)
			}

			stopped := time.Now()
			srv.Stop()
			r := p.Wait()
			took := time.Since(stopped)
			e2etest.ExpectCode(t, r, 2)
			o := e2etest.ParseOutcome(t, r)
			for _, want := range []string{"executor " + tc.executor + " is unavailable", "cannot reach its model endpoint", "Fix: make the model endpoint reachable"} {
				if !strings.Contains(o.PauseReason, want) {
					t.Fatalf("pause reason %q lacks %q", o.PauseReason, want)
				}
			}
			t.Logf("%s: the run paused as unavailable %s after the model server stopped: %s", tc.cli, took.Round(100*time.Millisecond), o.PauseReason)
			// The live view named the call and said what was wrong as it
			// happened.
			if !strings.Contains(r.Stderr, "⏳ greeter (/agent.0): unreachable: ") {
				t.Errorf("the live view never said the agent could not reach its endpoint:\n%s", r.Stderr)
			}
			if took > time.Minute {
				t.Errorf("%s: the dead endpoint was reported after %s, over a minute", tc.cli, took)
			}

			srv.SetDelay(0)
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			again := e2etest.ParseOutcome(t, e.DWOK(append([]string{"resume", id, "--json"}, tc.flags...)...))
			if again.Status != "completed" || !strings.Contains(string(again.Result), fakemodel.TextAnswer) {
				t.Fatalf("resume: %s %s (%s)", again.Status, again.Result, again.Error)
			}
		})
	}
}

// The same without any CLI, on a command executor: an agent that shows no
// progress for the idle timeout is stopped and retried, and one that
// keeps failing to connect pauses the run as unavailable.
func TestLivenessOnACommandExecutor(t *testing.T) {
	t.Parallel()
	t.Run("idle", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		script := e.Write("one.workflow.js", oneCall)
		// The first attempt prints a line and hangs; the second answers.
		cmd := `idle=sh -c 'if [ ! -e tried ]; then : > tried; echo thinking; sleep 600; fi; echo answered'`
		r := e.DW("run", script, "--json", "--command-executor", cmd, "--executor", "idle", "--idle-timeout", "1s")
		e2etest.ExpectCode(t, r, 0)
		if o := e2etest.ParseOutcome(t, r); o.Status != "completed" || string(o.Result) != `"answered"` {
			t.Fatalf("outcome %s %s, want the retry's answer", o.Status, o.Result)
		}
		text := e.DWOK("show", "last", "/agent.0").Stdout
		if !strings.Contains(text, "transient") || !strings.Contains(text, "no progress for 1s") {
			t.Fatalf("show does not tell of the idle attempt's retry:\n%s", text)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		e := e2etest.NewEnv(t)
		script := e.Write("one.workflow.js", oneCall)
		cmd := `down=sh -c 'echo "curl: (7) Failed to connect to 127.0.0.1 port 9: Connection refused" >&2; exit 75'`
		start := time.Now()
		p := e.StartFor(liveTimeout, "run", script, "--json", "--command-executor", cmd, "--executor", "down")
		r := p.Wait()
		took := time.Since(start)
		e2etest.ExpectCode(t, r, 2)
		o := e2etest.ParseOutcome(t, r)
		if !strings.Contains(o.PauseReason, "executor down is unavailable") || !strings.Contains(o.PauseReason, "Connection refused") {
			t.Fatalf("pause reason %q, want the executor unavailable, quoting the refusal", o.PauseReason)
		}
		t.Logf("command executor: paused as unavailable after %s", took.Round(100*time.Millisecond))
		if took > time.Minute {
			t.Errorf("the dead endpoint was reported after %s, over a minute", took)
		}
	})
}
