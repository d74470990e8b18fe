// Package jsvm runs workflow scripts written in JavaScript, the dialect of
// Claude Code's Workflow tool, on the goja interpreter. It implements
// lang.Host.
//
// A script is a plain JavaScript file whose first statement is
//
//	export const meta = { name: '...', description: '...' }
//
// followed by a body that runs as the body of an async function, so
// top-level await and return are legal and the returned value is the
// workflow's result.
//
// Loading a script runs none of its code. The meta is read by walking the
// syntax tree, so it must be a pure literal; import, require, other exports,
// TypeScript and hidden control characters are rejected with a position and a
// hint. The body is compiled once and may then run any number of times.
//
// Each run gets a fresh goja.Runtime owned by one goroutine, the run's event
// loop. Every call into the engine is made on the loop, in program order,
// because that order decides each call's identity. The primitives that take
// time (agent, checkpoint, workflow) return a promise at once; the engine
// answers later from its own goroutine, and the answer waits in an inbox
// until the loop settles the promise with it. Values cross the boundary as
// JSON.
//
// The engine identifies a call by the scope it was made in, so the host must
// know, whenever a primitive is called, which branch of which parallel or
// pipeline is running. A script's branches interleave at every await, so the
// scope cannot live on a stack: it travels with the promise reactions, through
// goja's AsyncContextTracker (see scope.go).
//
// Workflow scripts are trusted code. The runtime removes the sources of
// nondeterminism that would break a resumed run (the clock and Math.random),
// but it is not a sandbox.
package jsvm
