package temporal

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/executors"
)

// TestDollarCapAndStopOnTemporal: the call policy's dollar cap and a
// user's stop of one call work on Temporal as they do locally, since the
// rules are the same code. The cap pauses the run once the running calls
// end, with the same reason, and a resume with a higher cap goes on; a
// stopped call gives the script null.
func TestDollarCapAndStopOnTemporal(t *testing.T) {
	c := newClient(t)
	startWorker(t, c, "w1", simulated())
	// The simulator's answers (a dozen tokens) cost $0.10 a token here,
	// and a call is expected to use one.
	prices := cost.Builtin()
	prices.Models["simulate"] = cost.Price{Input: 100_000, CachedInput: 100_000, Output: 100_000}
	prices.ExecutorModels["simulate"] = "simulate"
	model := &cost.Model{Prices: prices, Estimates: cost.NewEstimates(executors.Usage{InputTokens: 1})}

	path := writeScript(t, "cap.workflow.js", `export const meta = { name: 'cap', description: 'five calls' }
const out = []
for (let i = 0; i < 5; i++) out.push(await agent('task ' + i))
return out.length`)
	b, script, err := BundleFile(c.hosts, path)
	if err != nil {
		t.Fatal(err)
	}
	opts := engine.DefaultOptions()
	opts.RetryBackoff, opts.MaxCostUSD = 0, 2
	in, err := c.Start(context.Background(), StartRequest{Bundle: b, Script: script, Options: opts, Cwd: t.TempDir(),
		Heartbeat: 5 * time.Second, Cost: model})
	if err != nil {
		t.Fatal(err)
	}
	st := wait(t, c, in.RunID)
	if st.Status != engine.StatusPaused || !strings.Contains(st.PauseReason, "dollar cap") || st.Stats.Live < 1 || st.Stats.Live > 3 {
		t.Fatalf("under a $2 cap at about $1 a call: %s after %d calls (%q)", st.Status, st.Stats.Live, st.PauseReason)
	}
	if st.Stats.CostUSD <= 0 {
		t.Errorf("the run's cost was not priced: %+v", st.Stats)
	}
	// A resume counts what the run spent before: raised by a dollar,
	// about one more call fits.
	spent := st.Stats.CostUSD
	if _, err := c.Resume(context.Background(), in.RunID, ResumeRequest{Options: func(o *engine.Options) { o.MaxCostUSD = spent + 1 }}); err != nil {
		t.Fatal(err)
	}
	again := wait(t, c, in.RunID)
	if again.Status != engine.StatusPaused || again.Stats.Live > 2 || again.Stats.CostUSD < spent {
		t.Fatalf("resumed with $%.2f more: %s after %d more calls, $%.2f in all; want paused again, having counted the $%.2f spent", 1.0, again.Status, again.Stats.Live, again.Stats.CostUSD, spent)
	}
	if _, err := c.Resume(context.Background(), in.RunID, ResumeRequest{Options: func(o *engine.Options) { o.MaxCostUSD = 0 }}); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, c, in.RunID); st.Status != engine.StatusCompleted || string(st.Result) != "5" {
		t.Fatalf("after the cap was lifted: %s %s", st.Status, st.Result)
	}
	replay(t, c, in.RunID)

	stopped := writeScript(t, "stop.workflow.js", `export const meta = { name: 'stop', description: 'one slow call' }
const slow = await agent('slow [simulate:sleep=120s]')
return { slow, after: await agent('after') }`)
	run := startFile(t, c, stopped, "", opts, false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		s, err := c.State(ctx, run.RunID)
		if err == nil && s.Stats.Running == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the slow call never ran: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := c.ControlCall(ctx, run.RunID, "/agent.0", "stop"); err != nil {
		t.Fatal(err)
	}
	got := wait(t, c, run.RunID)
	var res map[string]any
	_ = json.Unmarshal(got.Result, &res)
	if got.Status != engine.StatusCompleted || res["slow"] != nil || res["after"] == nil || got.Stats.Failed != 1 {
		t.Fatalf("after stopping the slow call: %s %s (%d failed)", got.Status, got.Result, got.Stats.Failed)
	}
	replay(t, c, run.RunID)
}
