package fakemodel

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Scenario is what the server does with one request.
type Scenario string

// The scenarios. Each is chosen by its marker in the prompt, "FAKE_" and
// its name in upper case (FAKE_TOOL, FAKE_ERR500, ...).
const (
	// Text answers "hi from fake model".
	Text Scenario = "text"
	// Tool asks for one shell tool call running `echo hi`, through the
	// request's own shell tool (exec_command, Bash or bash); once a tool
	// result is in the request, it answers "tool ran: hi".
	Tool Scenario = "tool"
	// Write asks for one tool call that writes WriteContent to WriteFile in
	// the agent's directory, through the CLI's own way of writing a file: a
	// shell command for Codex (its sandbox decides), the Write tool for
	// Claude Code and the write tool for Pi (their tool sets decide). The
	// call is made even when the tool is not offered, so that a read-only
	// agent is seen refusing it. Once a tool result is in the request, it
	// answers WriteAnswer.
	Write Scenario = "write"
	// WriteOutside is Write aimed at OutsideFile, in the parent of the
	// agent's directory: a workspace-write agent must be refused.
	WriteOutside Scenario = "write_outside"
	// Schema answers {"greeting":"hi"}: through Claude Code's
	// StructuredOutput tool when the request offers it, else as text.
	Schema Scenario = "schema"
	// Err500, Err401 and Err429 answer that HTTP status with the
	// provider's error body; 429 also sends Retry-After.
	Err500 Scenario = "err500"
	Err401 Scenario = "err401"
	Err429 Scenario = "err429"
	// ErrModel answers 404 with the provider's "no such model" error.
	ErrModel Scenario = "errmodel"
	// Cut starts a stream, sends one delta, then drops the connection.
	// A non-streaming request (Claude's fallback) gets a normal answer.
	Cut Scenario = "cut"
	// Slow sends one text delta per SlowInterval for a minute, until the
	// client goes away.
	Slow Scenario = "slow"
)

// TextAnswer, ToolAnswer and SchemaAnswer are the answers' texts.
const (
	TextAnswer   = "hi from fake model"
	ToolAnswer   = "tool ran: hi"
	SchemaAnswer = `{"greeting":"hi"}`
	ToolCommand  = "echo hi"
	// WriteAnswer starts the answer of the write scenarios, which goes on
	// with what the tool said: the CLI's refusal, when it refused.
	WriteAnswer = "the write tool said: "
	// WriteFile and WriteContent are what the Write scenario writes;
	// WriteOutside writes OutsideFile in the parent directory.
	WriteFile    = "fake_written.txt"
	OutsideFile  = "fake_outside.txt"
	WriteContent = "written by the fake model\n"
)

// writePath is the file a write scenario writes, relative to the agent's
// directory.
func writePath(sc Scenario) string {
	if sc == WriteOutside {
		return "../" + OutsideFile
	}
	return WriteFile
}

var scenarios = []Scenario{Tool, WriteOutside, Write, Schema, Err500, Err401, Err429, ErrModel, Cut, Slow}

// Marker is the prompt text that selects sc.
func Marker(sc Scenario) string { return "FAKE_" + strings.ToUpper(string(sc)) }

// scenarioOf finds the first marker in a request body.
func scenarioOf(body []byte) Scenario {
	for _, sc := range scenarios {
		if bytes.Contains(body, []byte(Marker(sc))) {
			return sc
		}
	}
	return Text
}

// toolCommand is the shell command the Tool scenario asks for.
func (a *answer) toolCommand() string {
	if a.s.opts.ToolCommand != "" {
		return a.s.opts.ToolCommand
	}
	return ToolCommand
}

// textOf flattens a tool output as the protocols send it: a string, or a
// list of blocks with text.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}
