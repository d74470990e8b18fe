// Package star runs workflow scripts written in Starlark (go.starlark.net).
// It implements lang.Host for files named *.workflow.star (or *.star), on
// the same engine and journal as the JavaScript host.
//
// A script is a Starlark file with a top-level meta dict literal and a
// main(args) function:
//
//	meta = {"name": "review", "description": "Review each file"}
//
//	def main(args):
//	    return parallel(args["files"], lambda f, i: agent("Review " + f))
//
// Loading a script runs none of its code. The meta is read from the syntax
// tree, so it must be a literal; the file and every file it load()s are
// parsed and compiled, and a missing load target, a syntax error or an
// undefined name is rejected with its position. The compiled programs are
// immutable and may run any number of times.
//
// Each run executes the file's top level once (load()ed modules too, once
// per run), freezes the module, and calls main with the run's args. The
// primitives (agent, parallel, pipeline, workflow, checkpoint, phase, log,
// budget) are predeclared builtins. The calls that take time block the
// calling Starlark thread until the engine answers.
//
// Every branch of a parallel() and every item of a pipeline() runs on its
// own starlark.Thread in its own goroutine, and the engine's scope for the
// branch rides on the thread (Thread.SetLocal): a call's identity is its
// scope plus its ordinal there, so it never depends on timing. Starlark
// values are not safe for concurrent use, so one goroutine at a time holds
// the run's turn to run Starlark code or touch a value, and gives it up
// only while a builtin waits for the engine. The turn passes first in,
// first out (branches start in index order, as in JavaScript), but
// branches still interleave at every wait in an order that depends on
// which agent answered first, so any
// state two branches could both mutate would make a resumed run differ:
// parallel() and pipeline() freeze the functions and items they are given,
// and the module is frozen once loaded. Mutating shared state in a branch is
// then an ordinary Starlark error ("cannot append to frozen list").
//
// Starlark has no clock and no randomness, and no builtin here adds one, so
// a resumed run makes the same calls as the first one. Workflow scripts are
// trusted code nonetheless: this is not a sandbox.
package star
