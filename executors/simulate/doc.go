// Package simulate is the built-in simulated executor, named "simulate".
//
// It answers agent calls without any model or CLI installed, which makes it
// the engine behind dry runs, tests and the README's first command. Answers
// are deterministic: the same prompt, model and schema always give the same
// output, whatever the attempt number, so a replayed or re-run workflow sees
// exactly what it saw before.
//
// A call without a schema answers with one line of text:
//
//	simulated answer to "<first 60 characters of the prompt>" [<8 hex digits>]
//
// where the quote is put on one line and ends with an ellipsis if the prompt
// is longer, and the hex digits are the start of sha256(prompt + "|" +
// model). A call with a schema answers with compact JSON that conforms to
// it, made by a [Generator]; the answer goes in Result.Text, because the
// engine parses and validates Text like any agent's answer.
//
// Usage is estimated at four characters a token, at no cost. The history
// holds the user's prompt and the assistant's answer, both truncated.
//
// # Latency and failures
//
// [Config] sets a latency range, drawn uniformly for each call, and a rate at
// which attempts fail with a transient error. Both come from a PRNG seeded by
// Config.Seed, so a fixed seed gives a repeatable sequence of latencies and
// failures for callers that run one at a time. Zero latency costs nothing: no
// timer is started.
//
// # Markers
//
// Tests steer the simulator with markers written anywhere in the prompt:
//
//	[simulate:fail]          every attempt fails with a terminal error
//	[simulate:transient]     attempt 1 fails with a transient error
//	[simulate:ratelimit]     every attempt fails rate-limited, retry after 1m
//	[simulate:ratelimit=5s]  the same, with the reset 5s ahead
//	[simulate:invalid]       every attempt answers JSON that breaks the schema
//	[simulate:invalid-once]  attempt 1 answers JSON that breaks the schema
//	[simulate:sleep=250ms]   this call takes 250ms, whatever the latency config
//	[simulate:size=102400]   a text answer of exactly 102,400 bytes (padded with dots)
//
// The invalid markers matter only to calls with a schema; a text answer
// cannot be invalid. An unknown marker fails the call terminally, so a typo
// in a test is reported rather than silently ignored. Markers are part of the
// prompt, so they also change the answer's content like any other text.
package simulate
