// Package langtest provides a fake lang.Env for testing script hosts, in the
// spirit of go.starlark.net's starlarktest.
//
// Every host must make the same calls through the same contract, so every
// host's tests drive their scripts against the same Env: it records each
// call with the path of its scope, answers agent calls (by default with
// "echo: <prompt>"), and counts the calls that broke the rule that the
// engine is called on one thread at a time.
//
// The package also reads the expectations that test scripts state in
// comments at their top; see Directives.
package langtest
