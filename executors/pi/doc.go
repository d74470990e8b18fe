// Package pi is the executor "pi": the Pi coding agent run once per agent
// call as
//
//	pi -p --mode json --no-session --no-extensions --offline --tools TOOLS
//	   [--extension GUARD] [--model MODEL] [--thinking EFFORT]
//
// with the prompt on standard input, which is then closed (pi -p waits
// forever on an open pipe; a prompt given as an argument would also be
// read as a file reference when it starts with "@").
//
// TOOLS and GUARD are the call's permission policy (see PermissionTools):
// Pi has no sandbox, so workspace-write leaves its shell out and loads a
// small extension that blocks edits and writes outside the working
// directory, and to the files inside it that make programs run.
// --no-extensions and --offline keep Pi from loading the extensions and
// installing the packages a repository names in its .pi directory.
//
// Why -p --mode json and not --mode rpc: one child per call gives each
// call a fresh conversation (an RPC session carries the previous prompts
// into the next), its own working directory and model, as much
// concurrency as the run's cap allows without a pool of RPC children, and
// the same process handling as the other CLIs: a timeout or abort stops
// the call's process group, and nothing is shared that a stuck call could
// wedge. What RPC would save is Node's start-up per call (about a second).
//
// The trap: pi exits 0 in json mode even when the model call failed. The
// outcome is the last assistant message's stopReason ("error" or
// "aborted" with an errorMessage that starts with the HTTP status when
// there is one). Usage is per assistant message, summed here; Pi's input
// count excludes cached tokens, which executors.Usage includes.
package pi
