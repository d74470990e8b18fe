package pi

import (
	"context"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
)

// Name is the executor's name.
const Name = "pi"

// Executor runs agent calls on Pi. It is safe for concurrent use.
type Executor struct {
	agentcli.Base
}

var _ executors.Executor = (*Executor)(nil)

// New returns the pi executor.
func New(cfg agentcli.Config) *Executor {
	return &Executor{Base: agentcli.NewBase(Name, "pi", cfg)}
}

// Run runs one call as one pi -p.
func (e *Executor) Run(ctx context.Context, req executors.Request, observe executors.Observer) (executors.Result, error) {
	return e.Base.Run(ctx, req, agentcli.Call{Args: Args(req), Stdin: []byte(prompt(req)), Dir: req.Dir}, newParser(req, observe))
}

// Args is the command line of one call.
func Args(req executors.Request) []string {
	args := []string{"-p", "--mode", "json", "--no-session"}
	if req.Model != "" {
		args = append(args, "--model", req.Model)
	}
	if effort := effortOf(req.Effort); effort != "" {
		args = append(args, "--thinking", effort)
	}
	return args
}

// prompt adds the schema to the prompt: Pi has no structured-output
// option, so the model is asked for JSON and the engine validates it.
func prompt(req executors.Request) string {
	if len(req.Schema) == 0 {
		return req.Prompt
	}
	return req.Prompt + "\n\nAnswer with only a JSON value (no prose, no code fence) that satisfies this JSON Schema:\n" + string(req.Schema)
}

// effortOf maps the workflow's effort to Pi's --thinking (off, minimal,
// low, medium, high, xhigh); "max" is its "xhigh".
func effortOf(effort string) string {
	switch effort {
	case "max":
		return "xhigh"
	case "minimal", "low", "medium", "high", "xhigh", "off":
		return effort
	}
	return ""
}
