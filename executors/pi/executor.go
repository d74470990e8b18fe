package pi

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

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

// fixes say how to make pi usable again.
var fixes = agentcli.Fixes{
	Install: "install Pi (npm install -g @mariozechner/pi-coding-agent), or set its path in .dynworkflow/executors.json (executors.pi.binary)",
	Login:   "give Pi a key: the provider's variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...), apiKey in ~/.pi/agent/models.json, or run pi and /login",
	Model:   "pick a model Pi lists (pi --list-models), as provider/id: agent({model}), --model, or executors.pi.model",
}

// New returns the pi executor.
func New(cfg agentcli.Config) *Executor {
	return &Executor{Base: agentcli.NewBase(Name, Name, "pi", fixes, cfg)}
}

// Run runs one call as one pi -p.
func (e *Executor) Run(ctx context.Context, req executors.Request, observe executors.Observer) (executors.Result, error) {
	req = e.WithDefaults(req)
	args, cleanup, err := Args(req)
	if err != nil {
		return executors.Result{}, &executors.Error{Class: executors.Terminal, Message: "pi", Err: err}
	}
	defer cleanup()
	return e.Base.Run(ctx, req, agentcli.Call{Args: args, Stdin: []byte(prompt(req)), Dir: req.Dir}, newParser(req, observe))
}

// Args is the command line of one call. The cleanup removes the guard
// extension, if one was written.
//
// Pi loads code a repository ships: the extensions of .pi/extensions and
// those its .pi/settings.json lists, and the packages that file names,
// installed at start with the npm command it names. --no-extensions turns
// the discovery off (an extension given with --extension, ours or one in
// the executor's configured args, still loads) and --offline the
// installing; the user's own extensions are turned off with them, and go
// in the executor's args to load.
func Args(req executors.Request) ([]string, func(), error) {
	args := []string{"-p", "--mode", "json", "--no-session", "--no-extensions", "--offline"}
	tools, guard := PermissionTools(req.Permissions)
	args = append(args, "--tools", tools)
	cleanup := func() {}
	if guard {
		path, rm, err := writeGuard()
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "--extension", path)
		cleanup = rm
	}
	if req.Model != "" {
		args = append(args, "--model", req.Model)
	}
	if effort := effortOf(req.Effort); effort != "" {
		args = append(args, "--thinking", effort)
	}
	return args, cleanup, nil
}

// PermissionTools maps a permission policy onto Pi's tool allowlist. Pi
// has no sandbox of its own, so:
//
//   - workspace-write: read, edit, write, grep, find and ls, and an
//     extension (workspace_guard.js) that blocks an edit or write whose
//     path, symbolic links resolved, leaves the working directory. The
//     shell tool is left out: nothing could hold a shell command to the
//     directory.
//   - read-only: read, grep, find and ls.
//   - full-access: every built-in tool, the shell included, unguarded.
//
// guard reports whether the workspace guard must be loaded.
func PermissionTools(p executors.Permissions) (tools string, guard bool) {
	switch p {
	case executors.ReadOnly:
		return "read,grep,find,ls", false
	case executors.FullAccess:
		return "read,bash,edit,write,grep,find,ls", false
	}
	return "read,edit,write,grep,find,ls", true
}

//go:embed workspace_guard.js
var workspaceGuard []byte

// writeGuard writes the workspace guard to a new private directory, so
// that no other user can put their code in its place.
func writeGuard() (string, func(), error) {
	dir, err := os.MkdirTemp("", "dynworkflow-pi-")
	if err != nil {
		return "", nil, fmt.Errorf("write the workspace guard: %w", err)
	}
	path := filepath.Join(dir, "workspace_guard.js")
	if err := os.WriteFile(path, workspaceGuard, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("write the workspace guard: %w", err)
	}
	return path, func() { _ = os.RemoveAll(dir) }, nil
}

// prompt adds the schema to the prompt: Pi has no structured-output
// option, so the model is asked for JSON and the engine validates it.
func prompt(req executors.Request) string {
	if len(req.Schema) == 0 {
		return req.Prompt
	}
	return req.Prompt + "\n\nAnswer with only a JSON value (no prose, no code fence) that satisfies this JSON Schema:\n" + string(req.Schema)
}

// effortOf maps the workflow's effort (low, medium, high, xhigh, max) to
// Pi's --thinking; "max" is its "xhigh".
func effortOf(effort string) string {
	switch effort {
	case "max":
		return "xhigh"
	case "low", "medium", "high", "xhigh":
		return effort
	}
	return ""
}
