package main_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/clitest"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
)

// fourCalls is a script of four agent calls at once.
const fourCalls = `export const meta = { name: 'four', description: 'four calls at once' }
return (await parallel(['a', 'b', 'c', 'd'].map(p => () => agent('say ' + p)))).filter(Boolean).length
`

// Issue 23, Must-show 6, with the real Pi CLI against the fake model
// server refusing with 429 until a reset 15 s ahead. A first run meets the
// limit: only the requests it had under way (its concurrency) reach the
// server, and it parks, "waiting for quota until HH:MM:SS", exit 2. Two
// more runs, in two more processes, park at once without a request: the
// governor is shared through the state root. Three `resume --wait`
// processes then wait for the reset and complete every run, each call
// answered once: no retry storm, nothing paid twice.
func TestQuotaIsSharedByRunsInProcesses(t *testing.T) {
	t.Parallel()
	clitest.Binary(t, clitest.Pi)
	srv, err := fakemodel.Start(fakemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	e := e2etest.NewEnv(t)
	e.Environ = clitest.Setup(t, clitest.Pi, srv.URL())
	script := e.Write("four.workflow.js", fourCalls)
	run := []string{"run", script, "--json", "--executor", "pi", "--model", clitest.PiModel, "--concurrency", "2"}

	// The limit starts at the first request, however long Pi takes to
	// start; it lasts long enough for the other runs to start within it
	// on a loaded machine.
	srv.RateLimitFromNext(15 * time.Second)
	procs := []*e2etest.Proc{e.StartFor(liveTimeout, run...)}
	e2etest.WaitUntil(t, "the first run to record the limit in the state root", func() bool {
		m, _ := filepath.Glob(filepath.Join(e.State, "quota", "*.json"))
		return len(m) > 0
	})
	// Two more runs, in two more processes, meet the spent account.
	procs = append(procs, e.StartFor(liveTimeout, run...), e.StartFor(liveTimeout, run...))
	var ids []string
	for i, p := range procs {
		r := waitLong(p)
		e2etest.ExpectCode(t, r, 2)
		o := e2etest.ParseOutcome(t, r)
		if !strings.HasPrefix(o.PauseReason, "waiting for quota until ") {
			t.Fatalf("run %d: pause reason %q, want it waiting for quota", i+1, o.PauseReason)
		}
		ids = append(ids, o.RunID)
		t.Logf("run %d: %d live, parked: %s", i+1, o.Stats.Live, o.PauseReason)
	}
	refused := len(srv.Requests())
	for _, rq := range srv.Requests() {
		if rq.Scenario != fakemodel.Err429 {
			t.Fatalf("a request answered within the limit's window: %+v", rq)
		}
	}
	if refused == 0 || refused > 2 {
		t.Fatalf("%d requests reached the server in all; want those the first run had under way, at most its concurrency of 2, and none from the others", refused)
	}
	if text := e.DWOK("list").Stdout; strings.Count(text, "waiting for quota until") != 3 {
		t.Errorf("list does not show the three runs waiting for quota:\n%s", text)
	}

	// resume --wait, three at once: each waits for the reset and completes.
	procs = nil
	for _, id := range ids {
		procs = append(procs, e.StartFor(liveTimeout, "resume", id, "--json", "--wait", "--model", clitest.PiModel))
	}
	for _, p := range procs {
		r := waitLong(p)
		e2etest.ExpectCode(t, r, 0)
		o := e2etest.ParseOutcome(t, r)
		if o.Status != "completed" || string(o.Result) != "4" {
			t.Errorf("resume --wait: %s %s (%s)\n%s", o.Status, o.Result, o.Error, r.Stderr)
		}
	}
	answered := 0
	for _, rq := range srv.Requests() {
		if rq.Scenario != fakemodel.Err429 {
			answered++
		}
	}
	total := len(srv.Requests())
	t.Logf("3 runs of 4 calls: %d requests in all, %d refused, %d answered", total, total-answered, answered)
	if answered != 12 || total-answered != refused {
		t.Errorf("%d answered, %d refused; want each of the 12 calls answered once and no request refused after the first run parked",
			answered, total-answered)
	}
}

// waitLong is wait for a process started with startFor: the real CLIs on
// a loaded machine may take longer than cmdTimeout.
func waitLong(p *e2etest.Proc) e2etest.Result {
	p.Env.T.Helper()
	return p.WaitFor(liveTimeout)
}

// A run parked for its quota before serve started goes on by itself at
// the reset once serve runs: serve finds it parked and resumes it then.
func TestServeResumesAParkedRun(t *testing.T) {
	e := e2etest.NewEnv(t)
	script := e.Write("one.workflow.js", oneCall)
	// The provider refuses the first request, saying when it resets.
	cmd := `limited=sh -c 'if [ ! -e refused ]; then : > refused; echo "{\"error\": {\"class\": \"rate-limited\", \"message\": \"429 Too Many Requests\", \"retry_after_ms\": 3000}}"; exit 0; fi; echo answered'`
	r := e.DW("run", script, "--json", "--command-executor", cmd, "--executor", "limited")
	e2etest.ExpectCode(t, r, 2)
	o := e2etest.ParseOutcome(t, r)
	if !strings.HasPrefix(o.PauseReason, "waiting for quota until ") {
		t.Fatalf("pause reason %q, want the run parked for its quota", o.PauseReason)
	}
	s := e2etest.Serve(e)
	s.WaitRun(o.RunID, "completed")
	d, err := s.Client.Run(context.Background(), o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Result) != `"answered"` {
		t.Fatalf("result %s, want the answer after the reset", d.Result)
	}
}
