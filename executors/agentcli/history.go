package agentcli

import (
	"sync"
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
		r.observe(executors.Progress{History: &item})
	}
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
