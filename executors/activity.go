package executors

import (
	"errors"
	"strings"
	"time"
)

// Activity is what a running agent did last, as its CLI reported it: a
// tool call, a message, a token streamed, a retry of its model request, an
// error it printed. Executors report each one as it happens (see
// Progress); the engine keeps only the latest per call, so it is cheap
// however chatty the CLI.
type Activity struct {
	// Kind is one of the Activity* kinds.
	Kind string `json:"kind"`
	// Text says what, in one line: "shell: npm test", "Reconnecting...
	// waiting for network".
	Text string `json:"text,omitempty"`
	// At is when it happened. An executor may leave it zero: whoever
	// records it first stamps it.
	At time.Time `json:"at,omitzero"`
}

// The kinds of activity. The first ones are progress: the agent's work
// moves on. ActivityRetry, ActivityError and ActivityUnreachable are not:
// the CLI is waiting, retrying or complaining, and an agent that shows
// nothing else is not getting anywhere (see Stalled).
const (
	// ActivityTool is a tool call starting or finishing.
	ActivityTool = "tool"
	// ActivityMessage is text from the model.
	ActivityMessage = "message"
	// ActivityReasoning is the model's reasoning.
	ActivityReasoning = "reasoning"
	// ActivityStream is output still streaming: tokens, a tool's output,
	// a line of a command: a heartbeat, reported at most about once a
	// second.
	ActivityStream = "stream"
	// ActivityRetry is the CLI retrying its model request (an HTTP 5xx, a
	// 429, a cut stream).
	ActivityRetry = "retry"
	// ActivityError is an error the CLI reported while it goes on.
	ActivityError = "error"
	// ActivityUnreachable is the CLI saying it cannot reach its model
	// endpoint at all: connection refused, no route, DNS failure.
	ActivityUnreachable = "unreachable"
)

// Stalled reports whether the activity is the CLI waiting rather than the
// agent working: a retry, an error, an unreachable endpoint.
func (a Activity) Stalled() bool {
	switch a.Kind {
	case ActivityRetry, ActivityError, ActivityUnreachable:
		return true
	}
	return false
}

// maxActivityText bounds an activity's text: one line of a live view.
const maxActivityText = 160

// NewActivity is an activity of kind with text cut to one short line.
func NewActivity(kind, text string) Activity {
	return Activity{Kind: kind, Text: OneLine(text, maxActivityText)}
}

// OneLine is the first non-blank line of s, at most n bytes (cut on a
// character boundary and marked), with the rest marked as left out.
func OneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	more := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, more = strings.TrimSpace(s[:i]), true
	}
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		return s[:cut] + "…"
	}
	if more {
		return s + " …"
	}
	return s
}

// Unreachable reports whether err is an executor failure that says its
// CLI never reached the model endpoint (see Error.Unreachable).
func Unreachable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Unreachable
}
