// Package command is the generic executor: any agent CLI, plugged in with
// a command template instead of code.
//
// A template is a command line, split into words as a shell would (single
// and double quotes, backslash escapes) but run without a shell, so a
// prompt can never inject anything. These placeholders are replaced inside
// the words:
//
//	{prompt}       the prompt; without it the prompt goes to standard input
//	{model}        the call's model option ("" when unset)
//	{effort}       the call's effort option
//	{schema}       the call's JSON Schema as text ("" for a text call)
//	{schema_file}  the path of a temporary file holding the schema
//	{dir}          the working directory (also the child's)
//	{permissions}  the call's permission policy: workspace-write, read-only
//	               or full-access. The tool must enforce it itself: a
//	               command executor is trusted to.
//
// Standard input is closed after the prompt (or at once), so a tool that
// reads it never hangs. Standard output is the answer: plain text, or one
// JSON object with these fields, all optional:
//
//	{"text": "...", "structured": {...}, "model": "...", "provider": "...",
//	 "usage": {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "cost_usd": 0},
//	 "error": {"class": "transient" | "rate-limited" | "terminal", "message": "..."}}
//
// A non-zero exit is a terminal failure, except 75 (EX_TEMPFAIL), which is
// transient, and whatever an "error" object says.
package command
