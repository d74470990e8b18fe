package claudecode

import (
	"context"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
)

// Name is the executor's name.
const Name = "claude-code"

// DefaultPermissionMode lets a headless agent edit files in its working
// directory; in the default mode Claude denies every write in -p mode.
const DefaultPermissionMode = "acceptEdits"

// Executor runs agent calls on the Claude Code CLI. It is safe for
// concurrent use.
type Executor struct {
	agentcli.Base
	// PermissionMode is passed as --permission-mode; empty means
	// DefaultPermissionMode.
	PermissionMode string
}

var _ executors.Executor = (*Executor)(nil)

// New returns the claude-code executor.
func New(cfg agentcli.Config) *Executor {
	// A child must never update itself in the middle of a run.
	cfg.Env = append([]string{"DISABLE_AUTOUPDATER=1"}, cfg.Env...)
	return &Executor{Base: agentcli.NewBase(Name, "claude", cfg)}
}

// Run runs one call as one claude -p.
func (e *Executor) Run(ctx context.Context, req executors.Request, observe executors.Observer) (executors.Result, error) {
	mode := e.PermissionMode
	if mode == "" {
		mode = DefaultPermissionMode
	}
	return e.Base.Run(ctx, req, agentcli.Call{Args: Args(req, mode), Stdin: []byte(req.Prompt), Dir: req.Dir}, newParser(req, observe))
}

// Args is the command line of one call.
func Args(req executors.Request, permissionMode string) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence", "--permission-mode", permissionMode}
	if req.Model != "" {
		args = append(args, "--model", req.Model)
	}
	if effort := effortOf(req.Effort); effort != "" {
		args = append(args, "--effort", effort)
	}
	if len(req.Schema) > 0 {
		args = append(args, "--json-schema", string(req.Schema))
	}
	return args
}

// effortOf maps the workflow's effort to Claude's --effort (low, medium,
// high, xhigh, max); "minimal" is its "low".
func effortOf(effort string) string {
	switch effort {
	case "minimal":
		return "low"
	case "low", "medium", "high", "xhigh", "max":
		return effort
	}
	return ""
}
