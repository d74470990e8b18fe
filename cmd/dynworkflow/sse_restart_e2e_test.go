package main_test

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// TestEventStreamAcrossARestart: a client that followed one server process
// and reconnects to the next, whose sequence is lower than the last id it
// saw, is told to rebuild (reset) instead of getting the new process's
// events after its old position as if nothing had happened.
func TestEventStreamAcrossARestart(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("quick.workflow.js", quickWorkflow)
	s := e2etest.Serve(e)
	for range 3 {
		e2etest.ExpectCode(t, e.DW("run", "quick.workflow.js", "--attach"), 0)
	}
	// The id of the last event this process sent: the client's position.
	lastID, name := s.FirstFrame(t, "1")
	if name != "workflow" {
		t.Fatalf("first event after sequence 1 is %q, want a workflow event", name)
	}
	ov, err := s.Client.Overview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if epoch, _, _ := strings.Cut(lastID, "-"); epoch != ov.Runtime.Epoch || ov.Runtime.Sequence < 10 {
		t.Fatalf("event id %q, overview epoch %q at sequence %d: want the same epoch, past 10 events after three runs",
			lastID, ov.Runtime.Epoch, ov.Runtime.Sequence)
	}
	lastID = ov.Runtime.Epoch + "-" + strconv.FormatInt(ov.Runtime.Sequence, 10)
	s.Signal(syscall.SIGKILL)
	s.Wait()

	s2 := e2etest.Serve(e)
	e2etest.ExpectCode(t, e.DW("run", "quick.workflow.js", "--attach"), 0)
	if ov2, err := s2.Client.Overview(context.Background()); err != nil || ov2.Runtime.Sequence >= ov.Runtime.Sequence {
		t.Fatalf("the new process is at sequence %d (%v): the test needs it below the old %d", ov2.Runtime.Sequence, err, ov.Runtime.Sequence)
	}
	id, name := s2.FirstFrame(t, lastID)
	if name != "reset" {
		t.Fatalf("reconnecting to a new process with %q: first event %q (id %s), want reset", lastID, name, id)
	}
	if strings.HasPrefix(id, strings.SplitN(lastID, "-", 2)[0]+"-") {
		t.Fatalf("the new process reuses the old one's epoch: %q after %q", id, lastID)
	}
}
