// Package callpolicy holds the rules that decide what a workflow's calls
// do, for every backend that runs them: the local engine (package engine)
// and Temporal (engine/temporal) both call it, so a rule is written once
// and a run behaves the same wherever it runs.
//
// The rules, by file:
//   - scope.go: identity. A call's path is its scope's path and its
//     ordinal there; scopes open per parallel() branch, pipeline() item and
//     stage, and workflow() child, never by timing.
//   - fingerprint.go, resolve.go: a call's fingerprint hashes what decides
//     its answer, with its executor, model, effort, permissions and
//     timeout resolved as the call will run (call option, run option,
//     executor configuration, built-in default).
//   - ledger.go: replay. Which answer of which earlier execution a call
//     may reuse: the crash rule, the per-scope prefix rule of
//     edit-and-resume, and why a superseded answer never comes back.
//   - execution.go, call.go: caps (agents, items), the token budget, and
//     what a live call does with each failure class (executors.Class):
//     retry with backoff, re-prompt a broken schema, give null or throw,
//     or pause the run.
//   - retry.go: how many retries and how long to wait.
//   - attempt.go: one attempt, on whichever machine runs it.
//   - ending.go: what the end of a script does to the calls under way
//     (they finish, and are kept) and to those queued (they never start).
//
// What differs between backends is behind small interfaces: Host (an
// executor's configuration, schema compilation, where limits and warnings
// are reported) and Launcher (where an attempt runs, how to wait before the
// next). A backend keeps only its own machinery: goroutines, a scheduler
// and a journal locally; workflow coroutines, activities, signals and
// updates on Temporal. The policy never reads a clock, starts a goroutine
// or draws a random number, so it runs unchanged inside a deterministic
// Temporal workflow.
package callpolicy
