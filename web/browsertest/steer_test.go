package browsertest_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/web"
)

// TestSteerOneAgentFromThePage stops a running agent from its panel (the
// script gets null and the run goes on), shows what the run spent of its
// dollar cap, and forks the run at a finished call with an edited prompt:
// the page moves to the new run, which replays what came before.
func TestSteerOneAgentFromThePage(t *testing.T) {
	s := newServer(t, simulate.Config{})
	script := `export const meta = { name: 'steer', description: 'one slow agent, one quick' }
const quick = await agent('quick first', { label: 'quick' })
const slow = await agent('[simulate:sleep=120s] slow second', { label: 'slow' })
return { quick, slow }
`
	resp, err := s.client.Start(context.Background(), web.StartRequest{Script: script, Options: &web.RunOptions{MaxCost: new(5.0)}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.RunID
	tb := newTab(t)
	tb.navigate(s.link(id) + "&call=" + url.QueryEscape("/agent.1"))
	tb.waitFor("the run's spend against its cap", `document.querySelector('[data-stat=cost]')?.textContent === "$0.00 of $5.00 cap"`)
	tb.waitFor("the running agent's Stop button", `document.querySelector('.agent-panel button[data-call-action=stop]')`)
	tb.click(`.agent-panel button[data-call-action=stop]`)
	tb.waitFor("the run completed", `document.querySelector('.run-sub .badge').textContent === "completed"`)
	d := s.detail(id)
	var res map[string]any
	if err := json.Unmarshal(d.Result, &res); err != nil || res["slow"] != nil || res["quick"] == nil {
		t.Fatalf("result %s: want the stopped agent's null", d.Result)
	}
	if len(d.Failures) != 1 || d.Failures[0].Class != "stopped" {
		t.Errorf("failures %+v", d.Failures)
	}

	// Fork at the stopped agent, with its prompt edited: the quick one
	// replays.
	tb.navigate(s.link(id) + "&call=" + url.QueryEscape("/agent.1"))
	tb.waitFor("the fork form", `document.querySelector('.agent-panel details.fork-box')`)
	tb.do(evalVoid(`document.querySelector('.agent-panel details.fork-box').open = true`))
	tb.do(evalVoid(`document.querySelector('.agent-panel form.fork textarea').value = 'slow, rewritten'`))
	tb.click(`.agent-panel form.fork button[data-fork]`)
	tb.waitFor("the page on the forked run", `new URLSearchParams(location.hash.slice(1)).get("run") !== `+jsString(id))
	forked := eval[string](tb, `new URLSearchParams(location.hash.slice(1)).get("run")`)
	fd := s.waitStatus(forked, "completed")
	if fd.Fork == nil || fd.Fork.RunID != id || fd.Fork.Path != "/agent.1" || fd.Fork.Prompt == nil || *fd.Fork.Prompt != "slow, rewritten" {
		t.Errorf("the forked run says %+v", fd.Fork)
	}
	if fd.Summary.Stats.Replayed != 1 || fd.Summary.Stats.Live != 1 {
		t.Errorf("the fork replayed %d and ran %d; want the quick agent replayed, the rewritten one live", fd.Summary.Stats.Replayed, fd.Summary.Stats.Live)
	}
}
