// Package codex is the executor "codex": OpenAI's Codex CLI run once per
// agent call as
//
//	codex exec --json --ephemeral --skip-git-repo-check --sandbox SANDBOX -C DIR
//	      [-m MODEL] [-c model_reasoning_effort="EFFORT"] [--output-schema FILE] -
//
// with the prompt on standard input (the trailing "-"), which is then
// closed: codex exec waits forever for the end of an open pipe. It prints
// one JSON event a line; the last agent_message item is the answer,
// turn.completed carries the usage summed over the turn's model calls, and
// turn.failed (with exit status 1) a failure. Codex checks no schema: the
// engine validates the answer, as for every executor.
//
// SANDBOX is the call's permission policy in Codex's terms: workspace-write
// (the default: commands and patches may write the working directory, /tmp
// and $TMPDIR), read-only, or danger-full-access for full-access. Codex
// enforces it with its own OS sandbox; a refused patch or command is
// reported to the model as the tool's output.
//
// Codex reads its provider, credentials and approval policy from
// $CODEX_HOME/config.toml (default ~/.codex); those stay the user's. A
// project's own .codex/config.toml is never read: when the user's
// configuration trusts projects, the call runs with a shadow CODEX_HOME
// that trusts none (home.go). Tests point CODEX_HOME at a config whose
// provider is a fake server.
package codex
