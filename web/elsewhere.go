package web

import (
	"context"
	"encoding/json"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/lang"
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

// RunControl is a RunSource whose runs the API also starts and controls:
// `serve --backend temporal` starts the runs of POST /api/runs there, and
// pauses, stops, resumes and deletes them there. Each method reports ok
// false for a run that is not the source's, which the runtime then
// handles.
type RunControl interface {
	RunSource
	// Start starts a run of script with args and opts there, and returns
	// its id.
	Start(ctx context.Context, req RemoteStart) (runID string, err error)
	// Resume starts the run's next execution, replaying what it finished;
	// it returns the new epoch.
	Resume(ctx context.Context, id string) (epoch int, ok bool, err error)
	// Act pauses, stops or deletes the run ("pause", "stop", "delete").
	Act(ctx context.Context, id, action string) (ok bool, err error)
}

// RemoteStart is a run POST /api/runs starts on a RunControl.
type RemoteStart struct {
	Script  lang.Script
	Args    json.RawMessage
	Options engine.Options
}

// RunWatcher is a RunSource that follows its runs for the event stream:
// Watch publishes on bus what changes (run.status, run.spend) until ctx
// ends, and puts the checkpoints its runs wait on in cps, answering them
// where the run executes when the API or the dashboard does.
type RunWatcher interface {
	RunSource
	Watch(ctx context.Context, bus *engine.Bus, cps *Checkpoints)
}
