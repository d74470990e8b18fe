package temporal

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
)

// TestExamples runs the project's examples on Temporal, with two workers
// sharing the task queue, and gets what a local run gets.
func TestExamples(t *testing.T) {
	c := newClient(t)
	startWorker(t, c, "w1", simulated())
	startWorker(t, c, "w2", simulated())
	files, err := filepath.Glob("../../examples/*.workflow.*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		t.Run(filepath.Base(f), func(t *testing.T) {
			opts := engine.DefaultOptions()
			local, localDetail := runLocally(t, abs, "", opts)
			in := startFile(t, c, abs, "", opts, false)
			got := wait(t, c, in.RunID)
			if got.Status != local.Status || string(got.Result) != string(local.Result) {
				t.Errorf("on Temporal: %s %s (%s)\nlocally:     %s %s (%s)", got.Status, got.Result, got.Error, local.Status, local.Result, local.Error)
			}
			if got.Stats.Agents != local.Stats.Agents {
				t.Errorf("on Temporal %d agents, locally %d", got.Stats.Agents, local.Stats.Agents)
			}
			d, err := c.Detail(context.Background(), in.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := strings.Join(callLines(d), "\n"), strings.Join(callLines(localDetail), "\n"); g != w {
				t.Errorf("calls on Temporal:\n%s\nlocally:\n%s", g, w)
			}
			replay(t, c, in.RunID)
		})
	}
}
