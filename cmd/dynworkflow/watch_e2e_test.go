package main_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// run --watch: a save re-runs the workflow, replaying what did not change
// and saying so; a save that does not load is reported and changes
// nothing; Ctrl-C while watching leaves the last outcome as the exit code.
func TestRunWatch(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	const script = `export const meta = { name: 'watched', description: 'three sequential calls' }
const a = await agent('first')
const b = await agent('second')
return [a, b, await agent('third VERSION')]
`
	path := e.Write("w.workflow.js", strings.Replace(script, "VERSION", "v1", 1))
	p := e.Start("run", "w.workflow.js", "--watch")
	if !p.WaitStderr("save to re-run") {
		t.Fatalf("the first execution did not finish:\n%s", p.Stderr.String())
	}
	if err := os.WriteFile(path, []byte("export const meta = { name: 'watched' }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !p.WaitStderr("not reloaded") || !strings.Contains(p.Stderr.String(), "w.workflow.js:1") {
		t.Fatalf("a bad save should be reported with its position:\n%s", p.Stderr.String())
	}
	if err := os.WriteFile(path, []byte(strings.Replace(script, "VERSION", "v2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if !p.WaitStderr("reload 1: 2 calls replayed, 1 ran live") {
		t.Fatalf("no reload report:\n%s", p.Stderr.String())
	}
	e2etest.WaitUntil(t, "the new result on stdout", func() bool { return strings.Contains(p.Stdout.String(), "third v2") })
	p.Signal(syscall.SIGINT)
	if r := p.Wait(); r.Code != 0 {
		t.Fatalf("Ctrl-C after a completed reload: exit %d, want 0\n%s", r.Code, r)
	}
}

// serve --watch: a run the server started from a file re-runs on a save,
// and the reload is reported on the server's terminal and over the API.
func TestServeWatch(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	const script = `export const meta = { name: 'served', description: 'two sequential calls' }
const a = await agent('first')
return [a, await agent('second VERSION')]
`
	path := e.Write("s.workflow.js", strings.Replace(script, "VERSION", "v1", 1))
	s := e2etest.Serve(e, "s.workflow.js", "--watch")
	if !s.WaitStderr(" started: ") {
		t.Fatalf("serve did not start the run:\n%s", s.Stderr.String())
	}
	id := regexp.MustCompile(`(\S+) started: `).FindStringSubmatch(s.Stderr.String())[1]
	s.WaitRun(id, "completed")
	if err := os.WriteFile(path, []byte(strings.Replace(script, "VERSION", "v2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if !s.WaitStderr(id + " reload 1 completed: 1 call replayed, 1 ran live") {
		t.Fatalf("no reload report:\n%s", s.Stderr.String())
	}
	d, err := s.Client.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(d.Result), "second v2") || len(d.Executions) != 2 || d.Executions[1].Rule != "edit" {
		t.Fatalf("the API shows result %s and executions %+v, want the edited result from an edit resume", d.Result, d.Executions)
	}
	s.Signal(syscall.SIGINT)
	s.Wait()
}
