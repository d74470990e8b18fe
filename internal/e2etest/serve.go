package e2etest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/web"
)

// RuntimePath is the project's runtime.json.
func RuntimePath(e *Env) string {
	return filepath.Join(filepath.Dir(e.RunsDir()), "runtime.json")
}

// Serving is a `dynworkflow serve` process and a client of it.
type Serving struct {
	*Proc
	Desc   web.Descriptor
	Client *web.Client
}

// Serve starts `dynworkflow serve` and waits until it announced itself.
func Serve(e *Env, args ...string) *Serving {
	e.T.Helper()
	p := e.Start(append([]string{"serve"}, args...)...)
	WaitUntil(e.T, "serve to print its dashboard URL", func() bool {
		if !p.Alive() {
			e.T.Fatalf("serve exited:\n%s", p.Res)
		}
		return strings.Contains(p.Stdout.String(), "dashboard: ")
	})
	d, err := web.ReadDescriptor(RuntimePath(e))
	if err != nil {
		e.T.Fatal(err)
	}
	if d.PID != p.Cmd.Process.Pid {
		e.T.Fatalf("runtime.json names pid %d, serve is pid %d", d.PID, p.Cmd.Process.Pid)
	}
	return &Serving{Proc: p, Desc: d, Client: web.NewClient(d.URL, d.Token)}
}

// WaitRun waits until the run's status is want, over the API.
func (s *Serving) WaitRun(id, want string) {
	s.Env.T.Helper()
	WaitUntil(s.Env.T, id+" to be "+want, func() bool {
		d, err := s.Client.Run(context.Background(), id)
		return err == nil && d.Summary.Status == want
	})
}

// WaitCheckpoint waits for a pending checkpoint of run id.
func (s *Serving) WaitCheckpoint(id string) web.Checkpoint {
	s.Env.T.Helper()
	var found web.Checkpoint
	WaitUntil(s.Env.T, "a checkpoint of "+id, func() bool {
		cps, _ := s.Client.Checkpoints(context.Background())
		for _, cp := range cps {
			if cp.RunID == id {
				found = cp
				return true
			}
		}
		return false
	})
	return found
}

// Post sends body to the server as it is, with the server's token.
func (s *Serving) Post(path, body string) (int, string) {
	s.Env.T.Helper()
	req, err := http.NewRequest(http.MethodPost, s.Desc.URL+path, strings.NewReader(body))
	if err != nil {
		s.Env.T.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Desc.Token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.Env.T.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// FirstFrame opens the server's event stream with Last-Event-ID lastID
// and returns the first event's id and name.
func (s *Serving) FirstFrame(t *testing.T, lastID string) (id, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.Desc.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+s.Desc.Token)
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
