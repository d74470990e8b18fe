package temporal

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
)

// holder answers at once, but holds a call whose prompt has "[hold]"
// until the call's context ends; started receives each held prompt.
type holder struct {
	once    sync.Map
	started chan string
}

func (h *holder) Name() string { return "simulate" }

func (h *holder) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	if strings.Contains(req.Prompt, "[hold]") {
		if _, seen := h.once.LoadOrStore(req.Prompt, true); !seen {
			h.started <- req.Prompt
		}
		<-ctx.Done()
		return executors.Result{}, ctx.Err()
	}
	return executors.Result{Text: "answer to " + req.Prompt, Usage: executors.Usage{InputTokens: 10, OutputTokens: 5}}, nil
}

// TestNoCallRunningOnceTheRunEnded pauses and stops runs while a call is
// under way, on both backends: once the run has ended, its state shows
// that call interrupted, never running (it said running for ever, on
// both, after a pause or a stop).
func TestNoCallRunningOnceTheRunEnded(t *testing.T) {
	c := newClient(t)
	remote := &holder{started: make(chan string, 4)}
	startWorker(t, c, "w1", executors.NewSet(remote))
	path := writeScript(t, "held.workflow.js", `export const meta = { name: 'held', description: 'a call held' }
return await parallel([() => agent('quick'), () => agent('slow [hold]')])
`)
	opts := engine.DefaultOptions()
	opts.Concurrency = 2

	interrupted := func(t *testing.T, backend string, d *engine.Detail) {
		t.Helper()
		var statuses []string
		for _, cl := range d.Calls {
			statuses = append(statuses, cl.Path+" "+cl.Prompt+" "+cl.Status)
			if cl.Status == "running" {
				t.Errorf("%s: the run is %s, yet its call %s shows running", backend, d.Summary.Status, cl.Path)
			}
			if strings.Contains(cl.Prompt, "[hold]") && cl.Status != engine.CallInterrupted {
				t.Errorf("%s: the held call is %s, want %s", backend, cl.Status, engine.CallInterrupted)
			}
		}
		if len(statuses) != 2 {
			t.Errorf("%s: calls %q, want the two", backend, statuses)
		}
	}

	for _, end := range []string{"pause", "stop"} {
		t.Run(end, func(t *testing.T) {
			// Locally.
			st, err := store.Open(filepath.Join(t.TempDir(), "state"), filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			local := &holder{started: make(chan string, 4)}
			rt, err := engine.New(engine.Config{Store: st, Hosts: hosts(), Executors: executors.NewSet(local), Cwd: filepath.Dir(path)})
			if err != nil {
				t.Fatal(err)
			}
			script, err := rt.Hosts().LoadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := rt.Start(context.Background(), engine.StartRequest{Script: script, Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			<-local.started
			if end == "pause" {
				err = r.Pause()
			} else {
				err = r.Stop()
			}
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := r.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			d, err := rt.Inspect(r.ID())
			if err != nil {
				t.Fatal(err)
			}
			interrupted(t, "locally", d)

			// On Temporal.
			in := startFile(t, c, path, "", opts, false)
			<-remote.started
			remote.once.Delete("slow [hold]") // the next run holds it again
			if end == "pause" {
				err = c.Pause(context.Background(), in.RunID, "a test asked")
			} else {
				err = c.Stop(context.Background(), in.RunID)
			}
			if err != nil {
				t.Fatal(err)
			}
			wait(t, c, in.RunID)
			td, err := c.Detail(context.Background(), in.RunID)
			if err != nil {
				t.Fatal(err)
			}
			interrupted(t, "on Temporal", td)
		})
	}
}
