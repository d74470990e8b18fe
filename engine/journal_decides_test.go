package engine_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// When the journal and the snapshot disagree, list and show say what the
// journal says; a run whose journal is gone, or empty, is damaged, with
// what can be done about it.
func TestListAndShowFollowTheJournal(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	s := h.write("fan.workflow.js", `export const meta = { name: 'fan', description: 'd' }
return await parallel(Array.from({ length: 200 }, (_, i) => () => agent('task ' + i)))`)
	o := h.run(s, "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	path := h.rt.Store().RunPaths(o.RunID).Journal
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	listed := func() engine.Status {
		t.Helper()
		sums, err := h.rt.List()
		if err != nil || len(sums) != 1 {
			t.Fatalf("list: %v, %d runs", err, len(sums))
		}
		return engine.Status(sums[0].Status)
	}

	cut := len(full) / 2
	if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := h.rt.Inspect(o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, c := range d.Calls {
		if c.Status == "done" {
			done++
		}
	}
	if d.Summary.Status != string(engine.StatusPaused) || len(d.Result) != 0 || d.Summary.Stats.Agents != done || done == 0 || done == 200 {
		t.Errorf("show of a cut journal: %s, %d agents (%d calls done), result %s; want paused with the calls the journal holds",
			d.Summary.Status, d.Summary.Stats.Agents, done, d.Result)
	}
	if st := listed(); st != engine.StatusPaused {
		t.Errorf("list of a cut journal says %s", st)
	}

	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err = h.rt.Inspect(o.RunID)
	if err != nil || d.Summary.Status != string(engine.StatusDamaged) || d.Summary.Name != "fan" ||
		!strings.Contains(d.Summary.Error, "empty") || !strings.Contains(d.Summary.Error, "dynworkflow delete "+o.RunID) {
		t.Errorf("show of an empty journal: %+v, %v", d.Summary, err)
	}
	if st := listed(); st != engine.StatusDamaged {
		t.Errorf("list of an empty journal says %s", st)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	d, err = h.rt.Inspect(o.RunID)
	if err != nil || d.Summary.Status != string(engine.StatusDamaged) || !strings.Contains(d.Summary.Error, "missing") {
		t.Errorf("show of a run without its journal: %+v, %v", d, err)
	}
	if st := listed(); st != engine.StatusDamaged {
		t.Errorf("list of a run without its journal says %s", st)
	}
	if _, err := h.rt.Resume(t.Context(), o.RunID, engine.ResumeRequest{}); !errors.Is(err, engine.ErrNotResumable) ||
		!strings.Contains(err.Error(), "missing") {
		t.Errorf("resume of a run without its journal = %v", err)
	}
	if err := h.rt.Delete(o.RunID); err != nil {
		t.Fatal(err)
	}
	if sums, _ := h.rt.List(); len(sums) != 0 {
		t.Errorf("a deleted damaged run is still listed: %+v", sums)
	}
}

// Recover removes what an older version's start killed before its run
// record left (an empty journal, no snapshot), and leaves a damaged run
// with a snapshot to be seen.
func TestRecoverSweepsEmptyJournals(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	st := h.rt.Store()
	empty := st.RunPaths("empty-1")
	if err := os.WriteFile(empty.Journal, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty.Lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := h.write("one.workflow.js", "export const meta = { name: 'one', description: 'd' }\nreturn await agent('x')")
	o := h.run(s, "", testOptions())
	if err := os.WriteFile(st.RunPaths(o.RunID).Journal, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h.rt.Recover(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{empty.Journal, empty.Lock} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived Recover: %v", p, err)
		}
	}
	sums, err := h.rt.List()
	if err != nil || len(sums) != 1 || sums[0].RunID != o.RunID || sums[0].Status != string(engine.StatusDamaged) || sums[0].Name != "one" {
		t.Errorf("list after Recover = %+v, %v; want only the damaged run, named", sums, err)
	}
}
