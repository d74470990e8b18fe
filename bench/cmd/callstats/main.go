// Command callstats reads `dynworkflow show --json` on stdin and prints,
// over the run's finished agent calls, what each call cost beyond its
// executor's own time: from the moment the call was handed over (journaled
// as started locally, scheduled as an activity on Temporal) to the moment
// its answer was recorded, minus the executor's run. It prints one line of
// key=value pairs, as bench/cmd/measure does.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"
)

func main() {
	var d struct {
		Calls []struct {
			Kind      string    `json:"kind"`
			Status    string    `json:"status"`
			DurMs     int64     `json:"durMs"`
			StartedAt time.Time `json:"startedAt"`
			EndedAt   time.Time `json:"endedAt"`
		} `json:"calls"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&d); err != nil {
		fmt.Fprintln(os.Stderr, "callstats: stdin is not show --json:", err)
		os.Exit(1)
	}
	var over, dur []float64
	for _, c := range d.Calls {
		if c.Kind != "agent" || c.Status != "done" || c.StartedAt.IsZero() || c.EndedAt.IsZero() {
			continue
		}
		total := float64(c.EndedAt.Sub(c.StartedAt).Microseconds()) / 1000
		over = append(over, total-float64(c.DurMs))
		dur = append(dur, float64(c.DurMs))
	}
	if len(over) == 0 {
		fmt.Fprintln(os.Stderr, "callstats: no finished agent calls with times")
		os.Exit(1)
	}
	slices.Sort(over)
	slices.Sort(dur)
	q := func(xs []float64, p float64) float64 { return xs[min(len(xs)-1, int(p*float64(len(xs))))] }
	fmt.Printf("calls=%d overhead_p50_ms=%.1f overhead_p90_ms=%.1f overhead_max_ms=%.1f executor_p50_ms=%.1f\n",
		len(over), q(over, 0.5), q(over, 0.9), over[len(over)-1], q(dur, 0.5))
}
