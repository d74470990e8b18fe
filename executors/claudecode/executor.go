package claudecode

import (
	"context"
	"strings"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
)

// Name is the executor's name.
const Name = "claude-code"

// Executor runs agent calls on the Claude Code CLI. It is safe for
// concurrent use.
type Executor struct {
	agentcli.Base
}

var _ executors.Executor = (*Executor)(nil)

// fixes say how to make claude usable again.
var fixes = agentcli.Fixes{
	Install: "install Claude Code (npm install -g @anthropic-ai/claude-code), or set its path in .dynworkflow/executors.json (executors.claude-code.binary)",
	Login:   "log in: run `claude` once and type /login, or set ANTHROPIC_API_KEY (executors.claude-code.env can set it)",
	Model:   "pick a model Claude Code knows (sonnet, opus, haiku or a full model name): agent({model}), --model, or executors.claude-code.model",
}

// New returns the claude-code executor.
func New(cfg agentcli.Config) *Executor {
	// A child must never update itself in the middle of a run.
	cfg.Env = append([]string{"DISABLE_AUTOUPDATER=1"}, cfg.Env...)
	return &Executor{Base: agentcli.NewBase(Name, Name, "claude", fixes, cfg)}
}

// Run runs one call as one claude -p.
func (e *Executor) Run(ctx context.Context, req executors.Request, observe executors.Observer) (executors.Result, error) {
	req = e.WithDefaults(req)
	args := append(Args(req), SettingSourceArgs(e.Args)...)
	return e.Base.Run(ctx, req, agentcli.Call{Args: args, Stdin: []byte(req.Prompt), Dir: req.Dir}, newParser(req, observe))
}

// SettingSourceArgs keeps Claude Code from the settings a repository
// ships. claude -p skips the workspace-trust dialog, and reads the
// project's .claude/settings.json and .claude/settings.local.json (their
// hooks, plugins, apiKeyHelper, permission rules) and its .mcp.json
// servers, and runs them, under every permission mode. --setting-sources
// user leaves all of them out; the user's own settings (~/.claude) and
// MCP servers stay. Executor args that say --setting-sources themselves
// (the user's configuration, or a project file the user allowed) decide
// instead.
func SettingSourceArgs(configured []string) []string {
	for _, a := range configured {
		if a == "--setting-sources" || strings.HasPrefix(a, "--setting-sources=") {
			return nil
		}
	}
	return []string{"--setting-sources", "user"}
}

// Args is the command line of one call.
func Args(req executors.Request) []string {
	args := append([]string{"-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence"}, PermissionArgs(req.Permissions)...)
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

// The tool sets of the policies. Claude Code's other built-in tools
// (subagents, the web, notebooks, scheduling) are left out of both: an
// agent of a workflow does one job in its directory, and the workflow is
// what fans out.
const (
	writeTools    = "Bash,Edit,Glob,Grep,Read,Write"
	readOnlyTools = "Glob,Grep,Read"
	// fullAccessTools are allowed without asking under full-access:
	// Claude Code's bypassPermissions mode would do the same, but it
	// refuses to run as root, which is how containers often run.
	fullAccessTools = "Bash,Edit,Glob,Grep,NotebookEdit,Read,WebFetch,WebSearch,Write"
)

// PermissionArgs maps a permission policy onto Claude Code's tool set and
// permission mode:
//
//   - workspace-write: the coding tools, with edits accepted. Claude
//     accepts edits, and shell commands that only create or move files,
//     inside the working directory; it refuses them outside it, and
//     refuses any other shell command (running a program, a build, a test)
//     that no allow rule of the user's settings or of --allowedTools
//     (executors.claude-code.args) permits.
//   - read-only: Read, Glob and Grep only, in dontAsk mode: nothing can be
//     changed, and nothing asks.
//   - full-access: the default tool set, with the coding tools, the shell
//     and the web allowed everywhere.
func PermissionArgs(p executors.Permissions) []string {
	switch p {
	case executors.ReadOnly:
		return []string{"--tools", readOnlyTools, "--permission-mode", "dontAsk"}
	case executors.FullAccess:
		return []string{"--permission-mode", "acceptEdits", "--allowedTools", fullAccessTools}
	}
	return []string{"--tools", writeTools, "--permission-mode", "acceptEdits"}
}

// effortOf maps the workflow's effort to Claude's --effort, which takes
// the same names (low, medium, high, xhigh, max).
func effortOf(effort string) string {
	switch effort {
	case "low", "medium", "high", "xhigh", "max":
		return effort
	}
	return ""
}
