package main_test

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// firstFrame opens the server's event stream with Last-Event-ID lastID
// and returns the first event's id and name.
func (s *serving) firstFrame(t *testing.T, lastID string) (id, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.desc.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+s.desc.Token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = line[4:]
		case strings.HasPrefix(line, "event: "):
			name = line[7:]
		case line == "" && name != "":
			return id, name
		}
	}
	t.Fatalf("the stream ended before its first event: %v", sc.Err())
	return "", ""
}

// TestEventStreamAcrossARestart: a client that followed one server process
// and reconnects to the next, whose sequence is lower than the last id it
// saw, is told to rebuild (reset) instead of getting the new process's
// events after its old position as if nothing had happened.
func TestEventStreamAcrossARestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("quick.workflow.js", quickWorkflow)
	s := e.serve()
	for range 3 {
		expectCode(t, e.dw("run", "quick.workflow.js", "--attach"), 0)
	}
	// The id of the last event this process sent: the client's position.
	lastID, name := s.firstFrame(t, "1")
	if name != "workflow" {
		t.Fatalf("first event after sequence 1 is %q, want a workflow event", name)
	}
	ov, err := s.client.Overview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if epoch, _, _ := strings.Cut(lastID, "-"); epoch != ov.Runtime.Epoch || ov.Runtime.Sequence < 10 {
		t.Fatalf("event id %q, overview epoch %q at sequence %d: want the same epoch, past 10 events after three runs",
			lastID, ov.Runtime.Epoch, ov.Runtime.Sequence)
	}
	lastID = ov.Runtime.Epoch + "-" + strconv.FormatInt(ov.Runtime.Sequence, 10)
	s.signal(syscall.SIGKILL)
	s.wait()

	s2 := e.serve()
	expectCode(t, e.dw("run", "quick.workflow.js", "--attach"), 0)
	if ov2, err := s2.client.Overview(context.Background()); err != nil || ov2.Runtime.Sequence >= ov.Runtime.Sequence {
		t.Fatalf("the new process is at sequence %d (%v): the test needs it below the old %d", ov2.Runtime.Sequence, err, ov.Runtime.Sequence)
	}
	id, name := s2.firstFrame(t, lastID)
	if name != "reset" {
		t.Fatalf("reconnecting to a new process with %q: first event %q (id %s), want reset", lastID, name, id)
	}
	if strings.HasPrefix(id, strings.SplitN(lastID, "-", 2)[0]+"-") {
		t.Fatalf("the new process reuses the old one's epoch: %q after %q", id, lastID)
	}
}
