package codex

import (
	"context"
	"fmt"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
)

// Name is the executor's name.
const Name = "codex"

// Executor runs agent calls on the Codex CLI. It is safe for concurrent use.
type Executor struct {
	agentcli.Base
}

var _ executors.Executor = (*Executor)(nil)

// fixes say how to make codex usable again.
var fixes = agentcli.Fixes{
	Install: "install Codex (npm install -g @openai/codex), or set its path in .dynworkflow/executors.json (executors.codex.binary)",
	Login:   "log in with `codex login`, or give it a key: OPENAI_API_KEY, or the env_key of the model provider in $CODEX_HOME/config.toml (executors.codex.env sets either)",
	Model:   "pick a model your Codex provider serves: agent({model}), --model, or executors.codex.model",
}

// New returns the codex executor.
func New(cfg agentcli.Config) *Executor {
	return &Executor{Base: agentcli.NewBase(Name, Name, "codex", fixes, cfg)}
}

// Run runs one call as one codex exec.
func (e *Executor) Run(ctx context.Context, req executors.Request, observe executors.Observer) (executors.Result, error) {
	req = e.WithDefaults(req)
	args, cleanup, err := Args(req)
	if err != nil {
		return executors.Result{}, &executors.Error{Class: executors.Terminal, Message: "codex", Err: err}
	}
	defer cleanup()
	call := agentcli.Call{Args: args, Stdin: []byte(req.Prompt), Dir: req.Dir}
	home, remove, err := shadowHome(e.Env, e.Scratch)
	if err != nil {
		return executors.Result{}, &executors.Error{Class: executors.Infrastructure, Message: "codex", Err: err}
	}
	defer remove()
	if home != "" {
		call.Env = []string{"CODEX_HOME=" + home}
	}
	return e.Base.Run(ctx, req, call, newParser(req, observe))
}

// Args is the command line of one call. The cleanup removes the schema
// file, if one was written.
func Args(req executors.Request) ([]string, func(), error) {
	args := []string{"exec", "--json", "--ephemeral", "--skip-git-repo-check", "--sandbox", Sandbox(req.Permissions)}
	if req.Dir != "" {
		args = append(args, "-C", req.Dir)
	}
	if req.Model != "" {
		args = append(args, "-m", req.Model)
	}
	if effort := effortOf(req.Effort); effort != "" {
		args = append(args, "-c", fmt.Sprintf("model_reasoning_effort=%q", effort))
	}
	cleanup := func() {}
	if len(req.Schema) > 0 {
		path, rm, err := agentcli.SchemaFile(req.Schema)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "--output-schema", path)
		cleanup = rm
	}
	return append(args, "-"), cleanup, nil
}

// Sandbox is the codex sandbox of a permission policy. Codex's
// workspace-write sandbox lets commands write the working directory, /tmp
// and $TMPDIR, and nothing else; read-only lets them write nothing.
func Sandbox(p executors.Permissions) string {
	switch p {
	case executors.ReadOnly:
		return "read-only"
	case executors.FullAccess:
		return "danger-full-access"
	}
	return "workspace-write"
}

// effortOf maps the workflow's effort (low, medium, high, xhigh, max) to
// Codex's model_reasoning_effort; "max" is Codex's "xhigh".
func effortOf(effort string) string {
	switch effort {
	case "max":
		return "xhigh"
	case "low", "medium", "high", "xhigh":
		return effort
	}
	return ""
}
