package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
)

// hugeFanouts hand parallel and pipeline 50 million items in each
// language: the cap must refuse them before they are listed.
var hugeFanouts = []struct{ name, ext, text string }{
	{"js parallel", ".workflow.js", `export const meta = { name: 'huge', description: 'too many items' }
return await parallel(new Array(5e7))`},
	{"js pipeline", ".workflow.js", `export const meta = { name: 'huge', description: 'too many items' }
return await pipeline(new Array(5e7), x => agent('x'))`},
	{"star parallel", ".workflow.star", `meta = {"name": "huge", "description": "too many items"}
def main(args):
    return parallel(range(50000000), lambda x: agent("x"))`},
	{"star parallel of functions", ".workflow.star", `meta = {"name": "huge", "description": "too many items"}
def main(args):
    return parallel(range(50000000))`},
	{"star pipeline", ".workflow.star", `meta = {"name": "huge", "description": "too many items"}
def main(args):
    return pipeline(range(50000000), lambda x: agent("x"))`},
}

// The item cap is checked before the items are read: 50 million of them
// used to take 25 s and 2 GB (7.6 GB in Starlark) to be refused, in a Go
// loop a pause could not interrupt. The bound here is loose on purpose;
// BenchmarkHugeFanoutRefused prints the time.
func TestItemCapBeforeTheList(t *testing.T) {
	for _, tc := range hugeFanouts {
		t.Run(tc.name, func(t *testing.T) {
			x := &recorder{}
			rt := newOrderRuntime(t, x)
			t0 := time.Now()
			r, err := rt.Start(context.Background(), engine.StartRequest{Script: loadText(t, rt, "huge"+tc.ext, tc.text), Options: orderOptions(4)})
			o := runToEnd(t, rt, r, err)
			if took := time.Since(t0); took > 5*time.Second {
				t.Errorf("refusing took %v", took)
			}
			if o.Status != engine.StatusFailed || !strings.Contains(o.Error, "50000000 items exceed the cap of 4096 per call") ||
				!strings.Contains(o.Error, "--max-items") {
				t.Fatalf("status %s, error %q: want failed with the cap's message", o.Status, o.Error)
			}
			if len(x.order()) != 0 {
				t.Fatalf("%d agents ran", len(x.order()))
			}
		})
	}
}

// BenchmarkHugeFanoutRefused reports how long a run takes to refuse a
// fan-out of 50 million items (target: under 50 ms), per language.
func BenchmarkHugeFanoutRefused(b *testing.B) {
	for _, tc := range hugeFanouts {
		b.Run(strings.ReplaceAll(tc.name, " ", "-"), func(b *testing.B) {
			x := &recorder{}
			rt := newOrderRuntime(b, x)
			s := loadText(b, rt, "huge"+tc.ext, tc.text)
			for b.Loop() {
				r, err := rt.Start(context.Background(), engine.StartRequest{Script: s, Options: orderOptions(4)})
				if o := runToEnd(b, rt, r, err); o.Status != engine.StatusFailed {
					b.Fatalf("status %s", o.Status)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/run")
		})
	}
}
