// Package proc runs agent CLIs as child processes that never outlive us.
//
// Every child starts in its own process group, so that a timeout or an
// abort can signal everything the CLI spawned (its shell tools included):
// SIGTERM to the group first, SIGKILL after a grace period. On Linux the
// child also gets SIGKILL when our process dies, and, given a Supervisor,
// is started by a helper process that outlives us just long enough to kill
// everything the child started, in whatever group or session, as soon as
// we die (see supervisor_linux.go).
//
// A Registry keeps one small file per live child in the state directory
// (a child's file is written over by a later child's once it exits).
// When our process is killed with SIGKILL and no supervisor could run, the
// next start calls Reap: every child whose owner is dead is killed, as a
// group, after checking that its pid still names the same process (by its
// start time), so a pid reused by an unrelated process is never signalled.
package proc
