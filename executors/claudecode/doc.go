// Package claudecode is the executor "claude-code": Anthropic's Claude
// Code CLI run once per agent call as
//
//	claude -p --output-format stream-json --verbose --no-session-persistence
//	       --tools TOOLS --permission-mode MODE [--model MODEL] [--effort EFFORT]
//	       [--json-schema SCHEMA] --setting-sources user
//
// TOOLS and MODE are the call's permission policy (see PermissionArgs):
// workspace-write is Bash,Edit,Glob,Grep,Read,Write in acceptEdits mode,
// read-only is Glob,Grep,Read in dontAsk mode. --setting-sources user keeps
// out the settings (hooks) and MCP servers a repository ships (see
// SettingSourceArgs).
//
// with the prompt on standard input, which is then closed (with an open
// pipe Claude waits 3 s for input). Taking the prompt from standard input
// also keeps it clear of the variadic flags (--tools, --allowedTools) that
// would swallow a positional prompt, and of the argument-size limit.
//
// The stream is one JSON object a line: system, assistant, user and a
// final result. The result line is the authority: its result (or
// structured_output, with --json-schema) is the answer, its usage and
// total_cost_usd the whole call's usage (per-assistant usage is only the
// message_start snapshot). Failure is read from is_error, api_error_status
// and terminal_reason: subtype stays "success" on API errors.
package claudecode
