package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
)

// harness is a runtime over a temporary project and state directory.
type harness struct {
	t   *testing.T
	dir string // the project directory; scripts are written here
	rt  *engine.Runtime
}

func newHarness(t *testing.T, sim simulate.Config) *harness {
	t.Helper()
	return newHarnessWith(t, sim, func(*engine.Config) {})
}

// newHarnessWith lets a test adjust the runtime's config (a responder, say).
func newHarnessWith(t *testing.T, sim simulate.Config, configure func(*engine.Config)) *harness {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.Config{
		Store: st, Hosts: lang.NewRegistry(jsvm.New()),
		Executors: executors.NewSet(simulate.New(sim)), Cwd: dir,
	}
	configure(&cfg)
	rt, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, dir: dir, rt: rt}
}

// write saves a script under the project and loads it.
func (h *harness) write(name, text string) lang.Script {
	h.t.Helper()
	path := filepath.Join(h.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		h.t.Fatal(err)
	}
	s, err := h.rt.Hosts().LoadFile(path)
	if err != nil {
		h.t.Fatalf("load %s: %v", name, err)
	}
	return s
}

func testOptions() engine.Options {
	o := engine.DefaultOptions()
	o.Concurrency = 8
	o.RetryBackoff = time.Millisecond
	return o
}

// start runs a script with args (JSON text or "") and options.
func (h *harness) start(s lang.Script, args string, opts engine.Options) *engine.Run {
	h.t.Helper()
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	r, err := h.rt.Start(context.Background(), engine.StartRequest{Script: s, Args: raw, Options: opts})
	if err != nil {
		h.t.Fatalf("start: %v", err)
	}
	return r
}

func (h *harness) wait(r *engine.Run) engine.Outcome {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o, err := r.Wait(ctx)
	if err != nil {
		h.t.Fatalf("wait: %v", err)
	}
	return o
}

func (h *harness) run(s lang.Script, args string, opts engine.Options) engine.Outcome {
	h.t.Helper()
	return h.wait(h.start(s, args, opts))
}

func (h *harness) resume(id string, req engine.ResumeRequest) engine.Outcome {
	h.t.Helper()
	r, err := h.rt.Resume(context.Background(), id, req)
	if err != nil {
		h.t.Fatalf("resume: %v", err)
	}
	return h.wait(r)
}

// journal returns a run's journal records, decoded loosely.
func (h *harness) journal(id string) []map[string]any {
	h.t.Helper()
	f, err := os.Open(h.rt.Store().RunPaths(id).Journal)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			h.t.Fatalf("journal line: %v", err)
		}
		out = append(out, m)
	}
	return out
}

// liveCalls lists the paths that ran live (call.started) in an epoch.
func (h *harness) liveCalls(id string, epoch int) []string {
	var paths []string
	for _, rec := range h.journal(id) {
		if rec["type"] == "call.started" && epochOf(rec) == epoch {
			paths = append(paths, rec["path"].(string))
		}
	}
	return paths
}

func epochOf(rec map[string]any) int {
	if e, ok := rec["epoch"].(float64); ok {
		return int(e)
	}
	return 0
}

func mustStatus(t *testing.T, o engine.Outcome, want engine.Status) {
	t.Helper()
	if o.Status != want {
		t.Fatalf("status %s, want %s (error: %s)", o.Status, want, o.Error)
	}
}
