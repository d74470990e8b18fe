// Package temporal runs workflows on Temporal, for when one machine is not
// enough: the script host runs inside a Temporal workflow, and every live
// agent() call is an activity that any worker process may execute.
//
// The package keeps the engine's contract on a durable-execution engine it
// does not own. Call identity stays ours: a call's path (scope path plus
// ordinal) and fingerprint are computed in the workflow exactly as the local
// engine computes them, and an agent's activity id is its path. Limits hold
// across workers because they are enforced in the workflow, the deterministic
// side: the concurrency cap (how many activities are outstanding), the agent
// cap, the item cap and the token budget. Transient failures are retried by
// the workflow with the run's backoff, as new activities, so a retry may
// land on another worker; Temporal itself retries only what is not an
// agent's failure, such as a worker that died mid-call (its heartbeat
// stops).
//
// A run is a Temporal workflow whose id is the run id; each execution of
// the run (its start, and every resume) is a Temporal run of that workflow.
// Pause ends the execution as paused (a signal), stop cancels it, resume
// starts a new execution that replays the finished calls of the earlier ones
// by the engine's rules: every matching call when the script and args are
// unchanged, the per-scope prefix rule when they were edited. What `show`
// prints is folded from the executions' histories (agent calls) and from the
// workflow's own state, read by a query while it runs and from its result
// once it has ended.
//
// Workflow code must be deterministic, so the hosts run on the workflow's
// coroutines through the lang.Scheduler this package supplies, and scripts
// travel as bundles (every file they load) rather than being read from a
// worker's disk.
package temporal
