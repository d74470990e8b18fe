// Package engine runs workflows: it schedules their agent calls, journals
// every finished call before the script sees it, and resumes runs after a
// crash or an edit by replaying finished calls instead of paying for them
// again.
//
// A run is a tree of scopes. parallel, pipeline and workflow open child
// scopes named only by their parent and their ordinal in it, so a call's
// identity — its scope path plus its ordinal in that scope — does not depend
// on which agent happened to finish first. Each call also carries a
// fingerprint of what determines its answer (prompt, executor, model,
// schema, ...), which checks the identity on replay.
//
// Resuming the same script with the same args replays every finished call
// whose path and fingerprint match, wherever it sits in the tree. Resuming
// an edited script applies the prefix rule per scope: after the first
// changed or new call in a scope, later calls of that scope, and scopes it
// opens afterwards, run live, while sibling branches keep their results.
//
// The journal (an append-only file of JSON lines, group-committed with one
// fsync for calls that finish together) is the truth; the snapshot beside
// it is a small projection for fast listing, rebuilt from the journal when
// damaged. Runtime is the Go API an embedding program, the CLI and the HTTP
// server share.
package engine
