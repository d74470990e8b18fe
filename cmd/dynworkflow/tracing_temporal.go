//go:build temporal

package main

import (
	"context"
	"fmt"

	"github.com/dynworkflow/dynworkflow/engine"
)

// traceDetail exports the latest execution of a run this process only
// followed (on Temporal), from its detail, when tracing is asked for.
func (a *app) traceDetail(ctx context.Context, detail func(context.Context) (*engine.Detail, error)) {
	t, err := a.startTracer(nil)
	if err != nil || t == nil {
		if err != nil {
			fmt.Fprintln(a.stderr, "dynworkflow: warning: tracing:", err)
		}
		return
	}
	d, err := detail(ctx)
	if err != nil {
		fmt.Fprintln(a.stderr, "dynworkflow: warning: tracing: read the run back:", err)
		return
	}
	t.ExportLatest(d)
}
