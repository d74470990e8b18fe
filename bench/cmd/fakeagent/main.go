// Command fakeagent is an agent for bench/forecast.sh, run as a command
// executor: it answers like the simulated executor (a schema-conforming
// object when the call has a schema, via {schema_file}), and reports the
// usage a coding agent's call would have, which grows with its prompt and
// varies from call to call: a system prompt and tools of 12,000 tokens,
// cached after the first turn, sent again with the prompt on every turn of
// a 1-to-4-turn conversation, and an answer of a few hundred tokens. The
// figures are a model, not a measurement of any CLI; what matters for the
// forecast's error is that they vary the way a bill does.
//
//	fakeagent [SCHEMA_FILE]   (the prompt on standard input)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

func main() {
	prompt, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	req := executors.Request{Prompt: string(prompt)}
	if len(os.Args) > 1 && os.Args[1] != "" {
		if req.Schema, err = os.ReadFile(os.Args[1]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	res, err := simulate.New(simulate.Config{}).Run(context.Background(), req, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h := fnv.New32a()
	h.Write(prompt)
	turns := int64(1 + h.Sum32()%4)
	const system = 12_000
	promptTokens := int64(len(prompt)/4 + 1)
	answer := res.Text
	if len(res.Structured) > 0 {
		answer = string(res.Structured)
	}
	out := map[string]any{
		"usage": map[string]int64{
			"input_tokens":        turns * (system + promptTokens + 150*(turns-1)),
			"cached_input_tokens": (turns-1)*system + system/2,
			"output_tokens":       turns*120 + int64(len(answer)/4),
		},
	}
	if len(res.Structured) > 0 {
		out["structured"] = res.Structured
	} else {
		out["text"] = res.Text
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
