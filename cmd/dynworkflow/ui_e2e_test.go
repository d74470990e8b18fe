package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/web"
)

// TestRunUI: run --ui prints the run's dashboard link (the token in the
// fragment), its checkpoint waits for an answer through the API instead of
// taking a headless default, the dashboard stays up after the run
// completes, and Ctrl-C then exits with the run's code and gives the
// project up.
func TestRunUI(t *testing.T) {
	e := e2etest.NewEnv(t)
	path := e.Write("gate.workflow.js", gateWorkflow)
	p := e.Start("run", "--ui", path)
	p.WaitStderr("dashboard: ")
	_, rest, _ := strings.Cut(p.Stderr.String(), "dashboard: ")
	link, _, _ := strings.Cut(rest, "\n")
	u, err := url.Parse(link)
	if err != nil || u.RawQuery != "" || u.Hostname() != "127.0.0.1" {
		t.Fatalf("dashboard link %q: want http://127.0.0.1:PORT/#token=...&run=... (%v)", link, err)
	}
	frag, err := url.ParseQuery(u.Fragment)
	if err != nil || frag.Get("token") == "" || frag.Get("run") == "" {
		t.Fatalf("dashboard link %q: the fragment needs the token and the run (%v)", link, err)
	}
	id := frag.Get("run")
	cl := web.NewClient("http://"+u.Host, frag.Get("token"))

	// The page itself is served there.
	res, err := http.Get("http://" + u.Host + "/")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %v %v", res, err)
	}
	res.Body.Close()

	var cp web.Checkpoint
	e2etest.WaitUntil(t, "the checkpoint to wait for an answer", func() bool {
		cps, _ := cl.Checkpoints(context.Background())
		for _, c := range cps {
			if c.RunID == id {
				cp = c
				return true
			}
		}
		return false
	})
	if err := cl.Respond(context.Background(), cp.ID, json.RawMessage(`"stable"`)); err != nil {
		t.Fatal(err)
	}
	p.WaitStderr("the dashboard stays up until Ctrl-C")
	d, err := cl.Run(context.Background(), id)
	if err != nil || d.Summary.Status != "completed" {
		t.Fatalf("after the answer: %v %v", d, err)
	}
	if desc, err := web.ReadDescriptor(e2etest.RuntimePath(e)); err != nil || desc.PID != p.Cmd.Process.Pid {
		t.Fatalf("run --ui is not the project's live runtime: %+v %v", desc, err)
	}
	p.Signal(os.Interrupt)
	r := p.Wait()
	e2etest.ExpectCode(t, r, 0)
	if !strings.Contains(r.Stdout, "ship to stable") {
		t.Errorf("the result is not on stdout:\n%s", r)
	}
	if _, err := os.Stat(e2etest.RuntimePath(e)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("runtime.json left behind: %v", err)
	}
}
