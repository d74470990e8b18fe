package web

import (
	"context"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
)

// RunSource gives the API the project's runs that execute elsewhere (on
// Temporal, say): the run list and the run endpoint show them beside the
// runtime's own, in the same shape.
type RunSource interface {
	// Summaries lists the runs, as fresh as the source can make them.
	Summaries(ctx context.Context) ([]store.Summary, error)
	// Detail reads one run; ok is false when the run is not the source's.
	Detail(ctx context.Context, id string) (d *engine.Detail, ok bool, err error)
}
