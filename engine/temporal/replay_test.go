package temporal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
)

// TestEditResume edits a finished run's script and resumes it on both
// backends: the per-scope prefix rule replays the same calls on Temporal as
// locally, across executions, children and parallel branches.
func TestEditResume(t *testing.T) {
	c := newClient(t)
	startWorker(t, c, "w1", simulated())
	startWorker(t, c, "w2", simulated())
	const v1 = `export const meta = { name: 'edit', description: 'edited between runs' }
const a = await agent('a')
const b = await agent('b')
const par = await parallel([() => agent('p0'), () => agent('p1'), () => agent('p2')])
const child = await workflow('child.workflow.js', { n: 1 })
const d = await agent('d')
return [a, b, par, child, d]
`
	const child = `export const meta = { name: 'child', description: 'a child' }
return [await agent('c0 ' + args.n), await agent('c1')]
`
	edits := []struct{ name, from, to string }{
		{"a call in main", "agent('b')", "agent('b, edited')"},
		{"one parallel branch", "agent('p1')", "agent('p1, edited')"},
		{"a new call at the end", "return [a, b", "await agent('e')\nreturn [a, b"},
		{"nothing", "", ""},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			dir := t.TempDir()
			main := filepath.Join(dir, "edit.workflow.js")
			write(t, main, v1)
			write(t, filepath.Join(dir, "child.workflow.js"), child)
			opts := engine.DefaultOptions()

			local := newLocal(t, dir)
			lid := local.start(t, main, opts)
			in := startFile(t, c, main, "", opts, false)
			if st := wait(t, c, in.RunID); st.Status != engine.StatusCompleted {
				t.Fatalf("first execution: %s %s", st.Status, st.Error)
			}

			write(t, main, strings.Replace(v1, e.from, e.to, 1))
			lo := local.resume(t, lid, main)
			b, script, err := BundleFile(c.hosts, main)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Resume(context.Background(), in.RunID, ResumeRequest{Bundle: b, Script: script}); err != nil {
				t.Fatal(err)
			}
			st := wait(t, c, in.RunID)
			if st.Status != lo.Status || string(st.Result) != string(lo.Result) {
				t.Errorf("on Temporal %s %s, locally %s %s", st.Status, st.Result, lo.Status, lo.Result)
			}
			if st.Stats.Replayed != lo.Stats.Replayed || st.Stats.Live != lo.Stats.Live {
				t.Errorf("on Temporal %d replayed and %d live, locally %d and %d", st.Stats.Replayed, st.Stats.Live, lo.Stats.Replayed, lo.Stats.Live)
			}
			d, err := c.Detail(context.Background(), in.RunID)
			if err != nil {
				t.Fatal(err)
			}
			ld, err := local.rt.Inspect(lid)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := epochs(d), epochs(ld); g != w {
				t.Errorf("which execution answered each call, on Temporal:\n%s\nlocally:\n%s", g, w)
			}
			replay(t, c, in.RunID)
		})
	}
}

// epochs lists each call with the execution that answered it.
func epochs(d *engine.Detail) string {
	var b strings.Builder
	for _, c := range d.Calls {
		fmt.Fprintf(&b, "%s %d %s\n", c.Path, c.Epoch, c.Status)
	}
	return b.String()
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// local is the local engine over a temporary state, for comparison.
type local struct{ rt *engine.Runtime }

func newLocal(t *testing.T, dir string) *local {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{Store: st, Hosts: hosts(), Executors: simulated(), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	return &local{rt}
}

func (l *local) start(t *testing.T, path string, opts engine.Options) string {
	t.Helper()
	script, err := l.rt.Hosts().LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.rt.Start(context.Background(), engine.StartRequest{Script: script, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	l.wait(t, r)
	return r.ID()
}

func (l *local) resume(t *testing.T, id, path string) engine.Outcome {
	t.Helper()
	script, err := l.rt.Hosts().LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.rt.Resume(context.Background(), id, engine.ResumeRequest{Script: script})
	if err != nil {
		t.Fatal(err)
	}
	return l.wait(t, r)
}

func (l *local) wait(t *testing.T, r *engine.Run) engine.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
