package main_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/testsize"
)

// Forty branches of one call each, under a cap of twenty agents: the
// branches that get an agent must be the same on every execution.
var capCrashScripts = map[string]string{
	"cap.workflow.js": `export const meta = { name: 'cap', description: '40 branches, 20 agents' }
return await parallel(Array.from({ length: 40 }, (_, i) => () => agent('task ' + i)))
`,
	"cap.workflow.star": `meta = {"name": "cap", "description": "40 branches, 20 agents"}

def main(args):
    return parallel(list(range(40)), lambda _, i: agent("task %d" % i))
`,
}

// TestCrashResumeUnderAgentCap: SIGKILL a run whose agent cap falls inside
// a fan-out, resume it, and nothing that finished runs again and the
// result is the uninterrupted run's, 20 times in each language at full size
// (internal/testsize), 6 otherwise (each kill point once). Starlark
// branches used to start in the order goroutines won a lock, so the cap
// fell on other branches after the resume.
func TestCrashResumeUnderAgentCap(t *testing.T) {
	rounds := testsize.Of(20, 6)
	// Slow enough that a kill after 1-6 answers comes well before the
	// 20th, even on a busy machine.
	flags := []string{"--max-agents", "20", "--concurrency", "1", "--simulate-latency", "20ms..40ms"}
	for name, text := range capCrashScripts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.write(name, text)
			want := e.runCompleted(name, flags...)
			if strings.Count(string(want.Result), "null") != 20 {
				t.Fatalf("uninterrupted result %s: want 20 branches over the cap as null", want.Result)
			}
			for round := range rounds {
				k := e.startAndKill(name, 1+round%6, 20, flags...)
				r := e.dw("resume", k.id, "--json")
				expectCode(t, r, 0)
				noReRun(t, k.journal, k.finished)
				got := parseOutcome(t, r)
				if got.Stats.Replayed != len(k.finished) {
					t.Fatalf("round %d: %d replayed, want the %d calls finished before the kill", round, got.Stats.Replayed, len(k.finished))
				}
				sameJSON(t, fmt.Sprintf("round %d: the resumed result", round), got.Result, want.Result)
			}
		})
	}
}
