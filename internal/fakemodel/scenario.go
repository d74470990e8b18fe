package fakemodel

import (
	"bytes"
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
	// Schema answers {"greeting":"hi"}: through Claude Code's
	// StructuredOutput tool when the request offers it, else as text.
	Schema Scenario = "schema"
	// Err500, Err401 and Err429 answer that HTTP status with the
	// provider's error body; 429 also sends Retry-After.
	Err500 Scenario = "err500"
	Err401 Scenario = "err401"
	Err429 Scenario = "err429"
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
)

var scenarios = []Scenario{Tool, Schema, Err500, Err401, Err429, Cut, Slow}

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
