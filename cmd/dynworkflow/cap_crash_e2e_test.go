package main_test

import (
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/internal/testsize"
)

// Forty branches of two calls each, under a cap of sixty agents: the
// second call of branch 20 is the 61st, over the cap, and the run fails
// there, as in the Node runtime. It must be that call on every execution.
var capCrashScripts = map[string]string{
	"cap.workflow.js": `export const meta = { name: 'cap', description: '40 branches, 60 agents' }
return await parallel(Array.from({ length: 40 }, (_, i) => async () => {
  await agent('first ' + i)
  return agent('second ' + i)
}))
`,
	"cap.workflow.star": `meta = {"name": "cap", "description": "40 branches, 60 agents"}

def branch(i):
    agent("first %d" % i)
    return agent("second %d" % i)

def main(args):
    return parallel(list(range(40)), lambda _, i: branch(i))
`,
}

// TestCrashResumeUnderAgentCap: SIGKILL a run whose agent cap falls inside
// a fan-out, resume it, and nothing that finished runs again and the run
// fails at the cap as the uninterrupted run does, exit 1, 20 times in each
// language at full size (internal/testsize), 6 otherwise (each kill point
// once). Starlark branches used to start in the order goroutines won a
// lock, so the cap fell on other branches after the resume.
func TestCrashResumeUnderAgentCap(t *testing.T) {
	t.Parallel()
	rounds := testsize.Of(20, 6)
	// Slow enough that a kill after 1-6 answers comes well before the
	// 21st, which meets the cap, even on a busy machine.
	flags := []string{"--max-agents", "60", "--concurrency", "1", "--simulate-latency", "20ms..40ms"}
	for name, text := range capCrashScripts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := e2etest.NewEnv(t)
			e.Write(name, text)
			r := e.DW(append([]string{"run", name, "--json"}, flags...)...)
			e2etest.ExpectCode(t, r, 1)
			want := e2etest.ParseOutcome(t, r)
			if want.Status != "failed" || !strings.Contains(want.Error, "cap of 60 agents") {
				t.Fatalf("uninterrupted: want a run failed at the cap:\n%s", r)
			}
			for round := range rounds {
				k := e.StartAndKill(name, 1+round%6, 60, flags...)
				r := e.DW("resume", k.ID, "--json")
				e2etest.ExpectCode(t, r, 1)
				e2etest.NoReRun(t, k.Journal, k.Finished)
				got := e2etest.ParseOutcome(t, r)
				if got.Stats.Replayed != len(k.Finished) {
					t.Fatalf("round %d: %d replayed, want the %d calls finished before the kill", round, got.Stats.Replayed, len(k.Finished))
				}
				if got.Status != "failed" || got.Error != want.Error {
					t.Fatalf("round %d: resumed: %s %s\nwant failed as the uninterrupted run: %s", round, got.Status, got.Error, want.Error)
				}
			}
		})
	}
}
