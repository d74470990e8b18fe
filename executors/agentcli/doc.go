// Package agentcli is what the CLI executors (codex, claude-code, pi and
// command) share: finding the binary, running it through package proc with
// the prompt on standard input, feeding each output line to a parser as it
// arrives, publishing live history, classifying failures, and turning a
// timeout or an abort into the context's error with the usage seen so far.
package agentcli
