package callpolicy

import (
	"cmp"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Settings are what an agent call runs with: its own options, else the
// run's, else its executor's configuration. The fingerprint hashes them as
// resolved, so a call whose configured model changed is another call.
type Settings struct {
	Executor    string
	Model       string
	Effort      string
	Permissions executors.Permissions
	// Timeout bounds one attempt; zero means none.
	Timeout time.Duration
	// IdleTimeout bounds the time an attempt goes without progress; zero
	// means none.
	IdleTimeout time.Duration
	// Route is the route that set any of these, as --route writes it; ""
	// when none did.
	Route string
}

// Resolve fixes what the call at path, in phase, runs with. The
// precedence, highest first: a route of the run that matches the call (see
// Route); the call's option; for the model, metaModel, the model the
// script's meta gives the call's phase (lang.Meta.ModelFor: the Node
// runtime's routing); the run's option (its model only for calls on the
// run's own executor, since a model name belongs to one provider); the
// executor's configuration (project file over user file), which defaults
// gives for an executor's name; the built-in default. An agentType of
// Claude Code's read-only kinds (Explore, Plan) counts as the call asking
// for read-only.
func Resolve(path, phase string, opts lang.AgentOptions, metaModel string, run Limits, defaults func(executor string) executors.Defaults) Settings {
	route, routed := RouteFor(run.Routes, path, opts.Label, phase)
	s := Settings{Executor: cmp.Or(route.Executor, opts.Executor, run.Executor)}
	if routed {
		s.Route = route.String()
	}
	defs := defaults(s.Executor)
	runModel := ""
	if s.Executor == run.Executor {
		runModel = run.Model
	}
	s.Model = cmp.Or(route.Model, opts.Model, metaModel, runModel, defs.Model)
	s.Effort = cmp.Or(route.Effort, opts.Effort, defs.Effort)
	s.Permissions = cmp.Or(executors.Permissions(opts.Permissions), executors.AgentTypePermissions(opts.AgentType),
		run.Permissions, defs.Permissions, executors.WorkspaceWrite)
	s.Timeout = cmp.Or(run.AgentTimeout, defs.Timeout)
	if opts.TimeoutMs != nil {
		s.Timeout = time.Duration(*opts.TimeoutMs) * time.Millisecond
	}
	// The idle timeout is on unless someone turns it off (a negative
	// value): the call, else the run, else the executor's configuration.
	s.IdleTimeout = cmp.Or(run.IdleTimeout, defs.IdleTimeout, DefaultIdleTimeout)
	if opts.IdleTimeoutMs != nil {
		s.IdleTimeout = time.Duration(*opts.IdleTimeoutMs) * time.Millisecond
	}
	s.IdleTimeout = max(0, s.IdleTimeout)
	return s
}
