package agentcli

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dynworkflow/dynworkflow/executors"
)

// maxText bounds the text of one history item: the history is a compact
// transcript journaled with the call, not a copy of every tool's output.
const maxText = 2000

// Recorder collects a call's history and usage and publishes each change
// to the observer as it happens.
type Recorder struct {
	observe executors.Observer

	mu      sync.Mutex
	history []executors.HistoryItem
	usage   executors.Usage
	// beat is when the last heartbeat was published.
	beat time.Time
}

// NewRecorder returns a recorder publishing to observe (which may be nil).
func NewRecorder(observe executors.Observer) *Recorder {
	return &Recorder{observe: observe}
}

// Add records one history item and publishes it.
func (r *Recorder) Add(item executors.HistoryItem) {
	item.Text = Truncate(item.Text, maxText)
	r.mu.Lock()
	r.history = append(r.history, item)
	r.mu.Unlock()
	if r.observe != nil {
		a := activityOf(item)
		r.observe(executors.Progress{History: &item, Activity: &a})
	}
}

// activityOf is what a history item says the agent is doing.
func activityOf(item executors.HistoryItem) executors.Activity {
	switch item.Kind {
	case "tool_call":
		return executors.NewActivity(executors.ActivityTool, item.Name+": "+item.Text)
	case "tool_result":
		if item.IsError {
			return executors.NewActivity(executors.ActivityTool, item.Name+" failed: "+item.Text)
		}
		return executors.NewActivity(executors.ActivityTool, item.Name+" done")
	}
	switch item.Role {
	case "reasoning":
		return executors.NewActivity(executors.ActivityReasoning, item.Text)
	case "error":
		return ErrorActivity(item.Text)
	}
	return executors.NewActivity(executors.ActivityMessage, item.Text)
}

// ErrorActivity is the activity of an error a CLI reports while it goes
// on: an unreachable endpoint, a retry ("Reconnecting... 2/5"), or else
// an error.
func ErrorActivity(msg string) executors.Activity {
	switch lower := strings.ToLower(msg); {
	case IsUnreachable(msg):
		return executors.NewActivity(executors.ActivityUnreachable, msg)
	case strings.Contains(lower, "reconnecting") || strings.Contains(lower, "retrying"):
		return executors.NewActivity(executors.ActivityRetry, msg)
	}
	return executors.NewActivity(executors.ActivityError, msg)
}

// Note records a message of role in the history whose activity is a of
// its own: a CLI's retry or error report, which a parser knows better
// than the text says.
func (r *Recorder) Note(role, text string, a executors.Activity) {
	item := executors.HistoryItem{Kind: "message", Role: role, Text: Truncate(text, maxText)}
	r.mu.Lock()
	r.history = append(r.history, item)
	r.mu.Unlock()
	if r.observe != nil {
		r.observe(executors.Progress{History: &item, Activity: &a})
	}
}

// Activity publishes what the agent is doing when it is not history: a
// turn starting, a CLI's retry.
func (r *Recorder) Activity(a executors.Activity) {
	if r.observe != nil {
		r.observe(executors.Progress{Activity: &a})
	}
}

// heartbeatEvery spaces heartbeats: a CLI that streams a token at a time
// would otherwise publish thousands of them a minute.
const heartbeatEvery = time.Second

// Heartbeat says that output is still streaming (a token, a tool's
// output): progress that is not history. It publishes at most one per
// heartbeatEvery.
func (r *Recorder) Heartbeat() {
	if r.observe == nil {
		return
	}
	now := time.Now()
	r.mu.Lock()
	if now.Sub(r.beat) < heartbeatEvery {
		r.mu.Unlock()
		return
	}
	r.beat = now
	r.mu.Unlock()
	a := executors.Activity{Kind: executors.ActivityStream, At: now}
	r.observe(executors.Progress{Activity: &a})
}

// Message records a message of role.
func (r *Recorder) Message(role, text string) {
	r.Add(executors.HistoryItem{Kind: "message", Role: role, Text: text})
}

// ToolCall records a tool call.
func (r *Recorder) ToolCall(name, input string) {
	r.Add(executors.HistoryItem{Kind: "tool_call", Name: name, Text: input})
}

// ToolResult records a tool's output.
func (r *Recorder) ToolResult(name, output string, isError bool) {
	r.Add(executors.HistoryItem{Kind: "tool_result", Name: name, Text: output, IsError: isError})
}

// SetUsage records the usage so far and publishes it.
func (r *Recorder) SetUsage(u executors.Usage) {
	r.mu.Lock()
	r.usage = u
	r.mu.Unlock()
	if r.observe != nil {
		r.observe(executors.Progress{Usage: &u})
	}
}

// AddUsage adds to the usage so far and publishes the total.
func (r *Recorder) AddUsage(u executors.Usage) {
	r.mu.Lock()
	r.usage = r.usage.Add(u)
	total := r.usage
	r.mu.Unlock()
	if r.observe != nil {
		r.observe(executors.Progress{Usage: &total})
	}
}

// Usage is the usage so far.
func (r *Recorder) Usage() executors.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.usage
}

// History is the history so far.
func (r *Recorder) History() []executors.HistoryItem {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]executors.HistoryItem(nil), r.history...)
}

// Truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
