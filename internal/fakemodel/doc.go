// Package fakemodel is a fake model server for tests of the agent CLIs.
//
// It listens on 127.0.0.1 on a random port and speaks just enough of three
// provider protocols for the real codex, claude and pi binaries to run a
// whole turn against it:
//
//   - the OpenAI Responses API, streamed as SSE (POST …/responses: Codex);
//   - the Anthropic Messages API, streamed and not (POST …/messages:
//     Claude Code, which falls back to a non-streaming request when a
//     stream breaks);
//   - OpenAI chat completions, streamed (POST …/chat/completions: Pi).
//
// What a request gets is its scenario: a marker in the prompt (FAKE_TOOL,
// FAKE_SCHEMA, FAKE_ERR500, FAKE_ERR401, FAKE_ERR429, FAKE_CUT, FAKE_SLOW),
// or the scenario a test forces on every request with Force. Without
// either, the answer is the text "hi from fake model".
//
// Every answer reports the same usage (11 input tokens of which 3 cached,
// 7 output tokens), encoded as each protocol does: OpenAI counts cached
// tokens inside the input, Anthropic beside it. Sent adds up the usage the
// server has put on the wire, so a test can check that an executor
// reported exactly what the model said.
package fakemodel
