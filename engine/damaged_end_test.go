package engine_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// A flipped bit in a completed run's end record is damage, not a crash:
// list and show must not say that the process running it exited, nor that
// a crash cut the journal short, but that how it ended is lost, and that a
// resume ends it again without paying for its calls.
func TestDamagedEndRecord(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	s := h.write("two.workflow.js", `export const meta = { name: 'two', description: 'two calls' }
return [await agent('a'), await agent('b')]
`)
	o := h.run(s, "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	path := h.rt.Store().RunPaths(o.RunID).Journal
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	data[end+len(`{"seq":`)+3] ^= 0x08
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := h.rt.Inspect(o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := h.rt.List()
	if err != nil || len(sums) != 1 {
		t.Fatalf("list: %v %v", sums, err)
	}
	for _, s := range []string{d.Summary.Status + " " + d.Summary.PauseReason, sums[0].Status + " " + sums[0].PauseReason} {
		if !strings.HasPrefix(s, "paused its end record is damaged") || !strings.Contains(s, "it seems to say completed") ||
			strings.Contains(s, "exited") {
			t.Errorf("status %q", s)
		}
	}
	if d.TornBytes != 0 || len(d.Damaged) != 1 || d.Damaged[0].Type != "end" || !d.Damaged[0].Last {
		t.Errorf("torn %d, damaged %+v", d.TornBytes, d.Damaged)
	}
	o = h.resume(o.RunID, engine.ResumeRequest{})
	if o.Status != engine.StatusCompleted || o.Stats.Replayed != 2 || o.Stats.Live != 0 {
		t.Errorf("resumed: %s, %d replayed, %d live", o.Status, o.Stats.Replayed, o.Stats.Live)
	}
}

// A result holding NaN or Infinity completes with null in their place, as
// JSON.stringify makes them, and the run says where, once.
func TestNonFiniteResultCompletes(t *testing.T) {
	h := newHarness(t, simulate.Config{})
	s := h.write("left.workflow.js", `export const meta = { name: 'left', description: 'no budget' }
await agent('a')
return { left: budget.remaining(), ratio: 0 / 0 }
`)
	o := h.run(s, "", testOptions())
	mustStatus(t, o, engine.StatusCompleted)
	if string(o.Result) != `{"left":null,"ratio":null}` {
		t.Errorf("result %s", o.Result)
	}
	d, err := h.rt.Inspect(o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, l := range d.Logs {
		if l.Level == "warn" {
			warned = append(warned, l.Message)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "Infinity at result.left (and 1 more)") {
		t.Errorf("warnings %q", warned)
	}
}
