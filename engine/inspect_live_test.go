package engine_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	callgate "github.com/dynworkflow/dynworkflow/internal/gate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
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

// A resume rebuilds a run's executors from its journal, each as the latest
// execution configured it. RunExecutors reads only the run's and the
// executions' records; what it returns is what the full fold (show) finds.
func TestRunExecutorsAreTheLatestExecutions(t *testing.T) {
	h := newHarness(t, simulate.Config{MinLatency: time.Millisecond})
	r := h.start(h.write("two.workflow.js", `export const meta = { name: 'two', description: 'two agents' }
return await parallel([() => agent('a'), () => agent('b')])`), "", testOptions())
	mustStatus(t, h.wait(r), engine.StatusCompleted)

	again, err := engine.New(engine.Config{Store: h.rt.Store(), Hosts: lang.NewRegistry(jsvm.New()), Cwd: h.dir,
		Executors: executors.NewSet(simulate.New(simulate.Config{MinLatency: 5 * time.Millisecond, Seed: 7}))})
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := again.Resume(context.Background(), r.ID(), engine.ResumeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resumed.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}

	got, err := engine.RunExecutors(h.rt.Store(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	d, err := again.Inspect(r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d.Executors) {
		t.Errorf("RunExecutors = %+v, the fold found %+v", got, d.Executors)
	}
	var sim *executors.Definition
	for i := range got {
		if got[i].Name == simulate.Name {
			sim = &got[i]
		}
	}
	if sim == nil || sim.Settings[simulate.SettingLatency] != "5ms" || sim.Settings[simulate.SettingSeed] != "7" {
		t.Errorf("the simulate executor is %+v, want the resumed execution's latency 5ms and seed 7", sim)
	}
}
