package main_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	agentproc "github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/internal/clitest"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
)

// fanOut is a workflow of args.n agent calls in one parallel().
const fanOut = `export const meta = { name: 'fan-out', description: 'args.n agents in parallel' }
const answers = await parallel(Array.from({ length: args.n }, (_, i) => () => agent('task ' + i, { label: 'task ' + i })))
return { answered: answers.filter(a => a !== null).length, first: answers[0] }
`

// codexEnv starts a fake model server and points every codex that
// dynworkflow starts at it, through the test process's environment.
func codexEnv(t *testing.T) *fakemodel.Server {
	t.Helper()
	return codexEnvWith(t, fakemodel.Options{})
}

// codexEnvWith is codexEnv with a fake model server tuned by opts.
func codexEnvWith(t *testing.T, opts fakemodel.Options) *fakemodel.Server {
	t.Helper()
	clitest.Binary(t, clitest.Codex)
	srv, err := fakemodel.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	for _, kv := range clitest.Setup(t, clitest.Codex, srv.URL()) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return srv
}

// childGroups lists the process groups of the agent processes that the
// state's child registry records.
func childGroups(e *e2etest.Env) []int {
	reg, err := agentproc.OpenRegistry(filepath.Join(e.State, "children"), nil)
	if err != nil {
		e.T.Fatal(err)
	}
	return reg.Groups()
}

// TestCodexFiftyAgentsKillResume is Must-show 2: a 50-agent workflow on
// the real Codex CLI; dynworkflow is SIGKILLed in the middle with codex
// children running; the next start leaves none of them running; resume
// replays every call that had finished and completes the run.
func TestCodexFiftyAgentsKillResume(t *testing.T) {
	srv := codexEnv(t)
	e := e2etest.NewEnv(t)
	script := e.Write("fan.workflow.js", fanOut)
	const n = 50
	// Slow answers keep codex children running when the kill comes.
	srv.SetDelay(400 * time.Millisecond)

	before := e.JournalIDs()
	p := e.Start("run", script, "--json", "--executor", "codex", "--concurrency", "8", "--args", fmt.Sprintf(`{"n":%d}`, n))
	id := p.WaitNewJournal(before)
	journal := e.JournalPath(id)
	p.WaitFinished(journal, 10)
	var groups []int
	e2etest.WaitUntil(t, "codex children in the registry", func() bool {
		groups = childGroups(e)
		return len(groups) > 0
	})
	p.Signal(syscall.SIGKILL)
	if r := p.Wait(); r.Signal != syscall.SIGKILL {
		t.Fatalf("the run ended before the kill:\n%s", r)
	}
	recs, _ := e2etest.ReadJournal(t, journal)
	finished := e2etest.FinishedAgents(recs)
	if len(finished) >= n {
		t.Fatalf("all %d calls finished before the kill", n)
	}
	t.Logf("killed with %d calls finished and %d codex process groups recorded", len(finished), len(groups))

	// The next start (any command) reaps what the killed process left.
	e.DWOK("list", "--json")
	for _, g := range groups {
		e2etest.WaitUntil(t, fmt.Sprintf("codex process group %d to be gone", g), func() bool { return !agentproc.GroupAlive(g) })
	}
	if left := childGroups(e); len(left) != 0 {
		t.Errorf("the registry still lists %v after the next start", left)
	}

	srv.SetDelay(0)
	r := e.DW("resume", id, "--json")
	e2etest.ExpectCode(t, r, 0)
	o := e2etest.ParseOutcome(t, r)
	if o.Status != "completed" {
		t.Fatalf("resume did not complete:\n%s", r)
	}
	e2etest.NoReRun(t, journal, finished)
	if o.Stats.Replayed < len(finished) {
		t.Errorf("replayed %d calls, want at least the %d that had finished", o.Stats.Replayed, len(finished))
	}
	var res struct {
		Answered int    `json:"answered"`
		First    string `json:"first"`
	}
	if err := json.Unmarshal(o.Result, &res); err != nil || res.Answered != n || res.First != fakemodel.TextAnswer {
		t.Errorf("result = %s, want %d answers of %q", o.Result, n, fakemodel.TextAnswer)
	}
	if o.Stats.InputTokens == 0 {
		t.Error("no usage was counted")
	}
}

// TestRateLimitPausesRun is Must-show 3: the model answers HTTP 429; the
// run pauses with the reason shown; once the limit is gone, resume
// completes it.
func TestRateLimitPausesRun(t *testing.T) {
	srv := codexEnv(t)
	e := e2etest.NewEnv(t)
	script := e.Write("fan.workflow.js", fanOut)
	srv.Force(fakemodel.Err429)
	r := e.DW("run", script, "--json", "--executor", "codex", "--args", `{"n":3}`)
	e2etest.ExpectCode(t, r, 2)
	o := e2etest.ParseOutcome(t, r)
	if o.Status != "paused" || !strings.Contains(o.PauseReason, "rate limited") || !strings.Contains(o.PauseReason, "429") {
		t.Fatalf("want a run paused for the rate limit, with the reason:\n%s", r)
	}
	if s := e.Listed(o.RunID); s.Status != "paused" || !strings.Contains(s.PauseReason, "429") {
		t.Errorf("list shows %+v, want paused with the 429 reason", s)
	}

	srv.Force("")
	r = e.DW("resume", o.RunID, "--json")
	e2etest.ExpectCode(t, r, 0)
	o = e2etest.ParseOutcome(t, r)
	var res struct {
		Answered int `json:"answered"`
	}
	if o.Status != "completed" || json.Unmarshal(o.Result, &res) != nil || res.Answered != 3 {
		t.Fatalf("resume did not complete all three calls:\n%s", r)
	}
}
