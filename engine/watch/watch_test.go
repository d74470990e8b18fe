package watch_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/watch"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/internal/gate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// session is a watched run over real files in a temporary project.
type session struct {
	t      *testing.T
	dir    string
	rt     *engine.Runtime
	run    *engine.Run
	events chan watch.Event
	// gates hold the calls whose prompt carries [gate:NAME].
	gates *gate.Gates
}

func start(t *testing.T, sim simulate.Config, files map[string]string, main string) *session {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		write(t, filepath.Join(dir, name), text)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	gates := &gate.Gates{}
	rt, err := engine.New(engine.Config{Store: st, Hosts: hosts(), Executors: executors.NewSet(gates.Wrap(simulate.New(sim))), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	script, err := rt.Hosts().LoadFile(filepath.Join(dir, main))
	if err != nil {
		t.Fatal(err)
	}
	opts := engine.DefaultOptions()
	opts.Concurrency = 4
	run, err := rt.Start(context.Background(), engine.StartRequest{Script: script, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, dir: dir, rt: rt, run: run, events: make(chan watch.Event, 64), gates: gates}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	w, err := watch.New(rt, run, watch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	go func() { errc <- w.Run(ctx, s.events) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil && err != context.Canceled {
			t.Errorf("Follow: %v", err)
		}
		_ = s.run.Pause()
		<-s.run.Done()
	})
	return s
}

func hosts() *lang.Registry { return lang.NewRegistry(jsvm.New(), star.New()) }

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// next waits for the next event of one of the kinds, failing on any
// LoadFailed or Failed it did not ask for.
func (s *session) next(kinds ...watch.Kind) watch.Event {
	s.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-s.events:
			if ev.Run != nil {
				s.run = ev.Run
			}
			for _, k := range kinds {
				if ev.Kind == k {
					return ev
				}
			}
			if ev.Kind == watch.LoadFailed || ev.Kind == watch.Failed {
				s.t.Fatalf("unexpected %v: %v", ev.Kind, ev.Err)
			}
		case <-deadline:
			s.t.Fatalf("no event of kinds %v in 30s", kinds)
		}
	}
}

// noReload checks that no reload starts within d: an absence can only be
// seen by waiting, and d is a few of the quiet periods a reload waits for.
func (s *session) noReload(d time.Duration) {
	s.t.Helper()
	quiet := time.After(d)
	for {
		select {
		case ev := <-s.events:
			if ev.Kind == watch.Changed || ev.Kind == watch.LoadFailed {
				s.t.Fatalf("a reload started for %v", ev.Files)
			}
		case <-quiet:
			return
		}
	}
}

// ended waits for the end of the execution that reload n started.
func (s *session) ended(n int) engine.Outcome {
	s.t.Helper()
	for {
		ev := s.next(watch.Ended)
		if ev.Reload == n {
			return ev.Outcome
		}
		if ev.Reload > n {
			s.t.Fatalf("reload %d ended while waiting for reload %d: a save reloaded more than once", ev.Reload, n)
		}
	}
}

func (s *session) journal() []map[string]any {
	s.t.Helper()
	data, err := os.ReadFile(s.rt.Store().RunPaths(s.run.ID()).Journal)
	if err != nil {
		s.t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			s.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// The pipelines' stage 2 waits at the gate "build": the run is still
// going, in stage 1 or 2, until the test releases it.
const pipeline = `export const meta = { name: 'watched', description: 'a 20 x 3 pipeline' }
const items = Array.from({ length: 20 }, (_, i) => 'item-' + i)
return await pipeline(items,
  item => agent('plan ' + item),
  (plan, item) => agent('build ' + item + ' from ' + plan + ' [gate:build]'),
  (built, item) => agent('STAGE3 test ' + item))
`

const starPipeline = `meta = {"name": "watched", "description": "a 20 x 3 pipeline"}

def main(args):
    items = ["item-%d" % i for i in range(20)]
    return pipeline(items,
        lambda item: agent("plan " + item),
        lambda plan, item: agent("build " + item + " from " + plan + " [gate:build]"),
        lambda built, item: agent("STAGE3 test " + item))
`

// Editing the stage-3 prompt while stage 1 runs resumes the run with the
// new script: no finished stage-1/2 call runs again, every stage-3 call
// uses the new prompt, and the counts reported match the journal. In both
// languages.
func TestEditStage3WhileStage1Runs(t *testing.T) {
	for file, script := range map[string]string{"p.workflow.js": pipeline, "p.workflow.star": starPipeline} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			editStage3(t, file, script)
		})
	}
}

func editStage3(t *testing.T, file, script string) {
	s := start(t, simulate.Config{MinLatency: 10 * time.Millisecond, MaxLatency: 40 * time.Millisecond, Seed: 7},
		map[string]string{file: script}, file)
	sub := s.rt.Events().Subscribe(64, func(e engine.Event) bool { return e.Type == engine.EventCallFinished })
	<-sub.C
	sub.Close()
	write(t, filepath.Join(s.dir, file), strings.Replace(script, "STAGE3 test", "STAGE3 verify", 1))
	s.next(watch.Reloaded)
	s.gates.Release("build")
	out := s.ended(1)
	if out.Status != engine.StatusCompleted {
		t.Fatalf("status %s: %s", out.Status, out.Error)
	}

	finishedBefore := map[string]bool{}
	startedAfter := 0
	for _, rec := range s.journal() {
		epoch, _ := rec["epoch"].(float64)
		path, _ := rec["path"].(string)
		switch {
		case rec["type"] == "call.finished" && epoch == 0:
			finishedBefore[path] = true
		case rec["type"] == "call.started" && epoch == 1:
			startedAfter++
			if finishedBefore[path] {
				t.Errorf("%s finished before the edit and ran again", path)
			}
			call := rec["call"].(map[string]any)
			if strings.Contains(path, "/s2/") && !strings.HasPrefix(call["prompt"].(string), "STAGE3 verify") {
				t.Errorf("%s ran with the old prompt %q", path, call["prompt"])
			}
		}
	}
	if len(finishedBefore) == 0 || len(finishedBefore) >= 40 {
		t.Fatalf("%d calls finished before the edit; the edit should land mid stage 1/2", len(finishedBefore))
	}
	if out.Stats.Live != startedAfter || out.Stats.Replayed+out.Stats.Live != 60 || out.Stats.Replayed != len(finishedBefore)-stage3(finishedBefore) {
		t.Fatalf("reported %d replayed and %d live; the journal has %d finished before (%d of them stage 3) and %d started after",
			out.Stats.Replayed, out.Stats.Live, len(finishedBefore), stage3(finishedBefore), startedAfter)
	}
}

func stage3(paths map[string]bool) int {
	n := 0
	for p := range paths {
		if strings.Contains(p, "/s2/") {
			n++
		}
	}
	return n
}

const small = `export const meta = { name: 'small', description: 'two calls' }
const a = await agent('first')
return [a, await agent('second VERSION')]
`

// Each way editors save triggers exactly one reload; so does a burst of
// five saves within 200 ms. "Exactly one" is checked by a marker save
// afterwards, whose reload must be the very next one.
func TestSaveStyles(t *testing.T) {
	saves := map[string]func(t *testing.T, path, text string){
		"in place": func(t *testing.T, path, text string) { write(t, path, text) },
		"rename over": func(t *testing.T, path, text string) {
			tmp := path + ".swp"
			write(t, tmp, text)
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		},
		"delete and recreate": func(t *testing.T, path, text string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			write(t, path, text)
		},
		"five saves within 200ms": func(t *testing.T, path, text string) {
			for i := range 5 {
				write(t, path, strings.Replace(text, "VERSION", "burst "+string(rune('a'+i)), 1))
				time.Sleep(30 * time.Millisecond) // the burst itself: saves 30 ms apart
			}
		},
	}
	for name, save := range saves {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := start(t, simulate.Config{}, map[string]string{"s.workflow.js": small}, "s.workflow.js")
			s.ended(0)
			path := filepath.Join(s.dir, "s.workflow.js")
			save(t, path, strings.Replace(small, "VERSION", "v2", 1))
			if out := s.ended(1); out.Stats.Live != 1 || out.Stats.Replayed != 1 {
				t.Errorf("reload 1: %+v, want the edited call live and the other replayed", out.Stats)
			}
			write(t, path, strings.Replace(small, "VERSION", "marker", 1))
			if out := s.ended(2); !strings.Contains(string(out.Result), "marker") {
				t.Fatalf("reload 2 ran %s, not the marker save: the first save reloaded more than once", out.Result)
			}
		})
	}
}

// A save that does not load keeps the current run going and says why; the
// next good save reloads.
func TestSyntaxErrorKeepsTheRunGoing(t *testing.T) {
	s := start(t, simulate.Config{MinLatency: 20 * time.Millisecond, MaxLatency: 20 * time.Millisecond},
		map[string]string{"p.workflow.js": pipeline}, "p.workflow.js")
	path := filepath.Join(s.dir, "p.workflow.js")
	write(t, path, strings.Replace(pipeline, "return await", "return await (", 1))
	ev := s.next(watch.LoadFailed)
	if !strings.Contains(ev.Err.Error(), "p.workflow.js:") {
		t.Errorf("the error %q does not say where", ev.Err)
	}
	select {
	case <-s.run.Done():
		t.Fatalf("the run stopped on a bad save: %+v", s.run.Outcome())
	default:
	}
	write(t, path, strings.Replace(pipeline, "STAGE3 test", "STAGE3 check", 1))
	s.next(watch.Reloaded)
	s.gates.Release("build")
	if out := s.ended(1); out.Status != engine.StatusCompleted {
		t.Fatalf("after the good save: %s %s", out.Status, out.Error)
	}
}

// An edit to a child workflow reloads the parent; an edit to an unrelated
// file in the same directory does not.
func TestChildEditsReloadTheParent(t *testing.T) {
	parent := `export const meta = { name: 'parent', description: 'runs a child' }
const c = await workflow('./child.workflow.js', { n: 2 })
return { c, own: await agent('parent call') }
`
	child := `export const meta = { name: 'child', description: 'fans out' }
return await parallel(Array.from({ length: args.n }, (_, i) => () => agent('child VERSION ' + i)))
`
	s := start(t, simulate.Config{}, map[string]string{
		"parent.workflow.js": parent, "child.workflow.js": child, "notes.md": "unrelated",
	}, "parent.workflow.js")
	s.ended(0)
	write(t, filepath.Join(s.dir, "child.workflow.js"), strings.Replace(child, "VERSION", "v2", 1))
	if out := s.ended(1); out.Stats.Live != 2 || out.Stats.Replayed != 1 {
		t.Fatalf("after the child edit: %+v, want the 2 child calls live and the parent's replayed", out.Stats)
	}
	write(t, filepath.Join(s.dir, "notes.md"), "still unrelated")
	s.noReload(3 * watch.DefaultDebounce)
	write(t, filepath.Join(s.dir, "parent.workflow.js"), strings.Replace(parent, "parent call", "parent call, marked", 1))
	if out := s.ended(2); !strings.Contains(string(out.Result), "marked") {
		t.Fatalf("reload 2 ran %s, not the parent's edit: the unrelated file reloaded", out.Result)
	}
}

// Starlark workflows reload the same way, and so does an edit to a file
// they load(); an unrelated file beside it does not.
func TestStarlarkLoadedHelperReloads(t *testing.T) {
	main := `load("lib/prompts.star", "PREFIX")

meta = {"name": "starred", "description": "loads its prompts"}

def main(args):
    a = agent("first")
    return [a, agent(PREFIX + " second")]
`
	s := start(t, simulate.Config{}, map[string]string{
		"s.workflow.star": main, "lib/prompts.star": `PREFIX = "v1"` + "\n", "lib/notes.txt": "unrelated",
	}, "s.workflow.star")
	s.ended(0)
	write(t, filepath.Join(s.dir, "lib/prompts.star"), `PREFIX = "v2"`+"\n")
	out := s.ended(1)
	if out.Stats.Replayed != 1 || out.Stats.Live != 1 || !strings.Contains(string(out.Result), "v2 second") {
		t.Fatalf("after the helper edit: %+v %s, want the call using it live and the other replayed", out.Stats, out.Result)
	}
	write(t, filepath.Join(s.dir, "lib/notes.txt"), "still unrelated")
	s.noReload(3 * watch.DefaultDebounce)
	write(t, filepath.Join(s.dir, "s.workflow.star"), strings.Replace(main, `agent("first")`, `agent("first, edited")`, 1))
	if out := s.ended(2); !strings.Contains(string(out.Result), "first, edited") {
		t.Fatalf("reload 2 ran %s, not the edit of the main file", out.Result)
	}
}
