package engine_test

import (
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	callgate "github.com/dynworkflow/dynworkflow/internal/gate"
)

// The detail of a live run shows every call its events announced: a page
// that saw a call start, and then fetched the detail, must find it there
// (the dashboard drops events of a run it has not opened yet). A start is
// journaled without a wait, and used to reach the file only with the next
// flush, up to 200 ms later, longer on a busy machine; a held agent sends
// no event after its start, so the page showed none running.
func TestInspectShowsWhatEventsSaid(t *testing.T) {
	gates := &callgate.Gates{}
	defer gates.Release("held")
	h := newHarnessWith(t, simulate.Config{}, func(c *engine.Config) {
		c.Executors = executors.NewSet(gates.Wrap(simulate.New(simulate.Config{})))
	})
	sub := h.rt.Events().Subscribe(64, func(e engine.Event) bool { return e.Type == engine.EventCallStarted })
	defer sub.Close()
	r := h.start(h.write("held.workflow.js", `export const meta = { name: 'held', description: 'one held agent' }
return await agent('wait [gate:held]', { label: 'held' })`), "", testOptions())
	select {
	case <-sub.C:
	case <-time.After(time.Minute):
		t.Fatal("no call started in a minute")
	}
	d, err := h.rt.Inspect(r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Calls) != 1 || d.Calls[0].Status != "running" {
		t.Errorf("the detail right after the call's start event has calls %+v, want the held call running", d.Calls)
	}
	gates.Release("held")
	mustStatus(t, h.wait(r), engine.StatusCompleted)
}
