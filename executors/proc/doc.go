// Package proc runs agent CLIs as child processes that never outlive us.
//
// Every child starts in its own process group, so that a timeout or an
// abort can signal everything the CLI spawned (its shell tools included):
// SIGTERM to the group first, SIGKILL after a grace period. On Linux the
// child also gets SIGKILL when our process dies (Pdeathsig), and a program
// that runs its main through Main and hands its agent commands to
// RunAncestor runs as two processes, an ancestor and its runtime child,
// both child subreapers, so that whatever an agent started, in whatever
// group or session, is killed as soon as either of them dies (see
// ancestor_linux.go). Children start with the signal dispositions and mask
// of a plain start: nothing we ignore is ignored for them.
//
// A failure that is ours and not the child's (descriptors, memory or
// processes ran out, our ancestor died) is reported as an
// executors.Infrastructure failure, never as the agent's.
//
// A Registry keeps one small file per live child in the state directory
// (a child's file is written over by a later child's once it exits).
// When our process is killed with SIGKILL and nothing else could clean
// up, the next start calls Reap: every child whose owner is dead is
// killed, as a group, after checking that its pid still names the same
// process (by its start time), so a pid reused by an unrelated process is
// never signalled.
package proc
