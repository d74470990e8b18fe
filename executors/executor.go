// Package executors defines how one agent call becomes a finished result.
//
// An Executor runs something (a CLI child process, or the built-in simulated
// model) for one call and returns its output, normalized usage, the identity
// of the model that answered, a compact history, and on failure an *Error
// whose Class tells the engine whether to retry, pause the run, or give up.
// Executors know nothing of scripts, journals or replay.
package executors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"syscall"
	"time"
)

// Request is one agent call as an executor sees it.
type Request struct {
	RunID string
	// Path is the call's identity in its run, for logs and child names.
	Path   string
	Prompt string
	Model  string
	Effort string
	// AgentType names a custom agent definition, where the executor has them.
	AgentType string
	// Isolation is "" or "worktree". With "worktree", Dir is a git worktree
	// of the call's own (the engine made it and commits what is left in
	// it): an executor that can limit where the agent writes should limit
	// it to Dir.
	Isolation string
	// Permissions is what the agent may change; "" means WorkspaceWrite.
	Permissions Permissions
	// Schema is the JSON Schema the answer must satisfy, or nil for text.
	// The engine always validates; an executor may also pass it to a native
	// structured-output mechanism.
	Schema json.RawMessage
	// Dir is the working directory of the agent.
	Dir string
	// Attempt counts from 1 across retries and schema repairs.
	Attempt int
	// Env is added to the environment of the agent's process, for an
	// executor that starts one: TRACEPARENT, when the run is traced.
	Env []string
}

// Usage is normalized token usage. InputTokens includes CachedInputTokens.
type Usage struct {
	InputTokens       int64   `json:"inputTokens"`
	CachedInputTokens int64   `json:"cachedInputTokens,omitempty"`
	OutputTokens      int64   `json:"outputTokens"`
	CostUSD           float64 `json:"costUsd,omitempty"`
}

// Total is input plus output tokens, what a token budget counts.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + v.InputTokens,
		CachedInputTokens: u.CachedInputTokens + v.CachedInputTokens,
		OutputTokens:      u.OutputTokens + v.OutputTokens,
		CostUSD:           u.CostUSD + v.CostUSD,
	}
}

// HistoryItem is one entry of a compact agent transcript.
type HistoryItem struct {
	// Kind is "message", "tool_call" or "tool_result".
	Kind    string `json:"kind"`
	Role    string `json:"role,omitempty"`
	Name    string `json:"name,omitempty"`
	Text    string `json:"text,omitempty"`
	IsError bool   `json:"isError,omitempty"`
}

// Result is a finished agent call.
type Result struct {
	// Text is the agent's final answer. For a schema call it holds the JSON
	// the agent produced, unless Structured carries it.
	Text string
	// Structured is a structured answer the executor obtained natively.
	Structured json.RawMessage
	Usage      Usage
	Provider   string
	Model      string
	History    []HistoryItem
}

// Progress is a live update from a running call.
type Progress struct {
	History *HistoryItem `json:"history,omitempty"`
	Usage   *Usage       `json:"usage,omitempty"`
	// Activity is what the agent just did, for liveness: every history
	// item comes with one, and so do the CLI's own retries, errors and
	// heartbeats, which are not history.
	Activity *Activity `json:"activity,omitempty"`
}

// Observer receives live updates; it must not block.
type Observer func(Progress)

// Executor runs one agent call. Run must return promptly when ctx is done,
// leaving nothing running.
type Executor interface {
	Name() string
	Run(ctx context.Context, req Request, observe Observer) (Result, error)
}

// Class sorts failures by what the engine should do next.
type Class int

const (
	// Terminal failures are not retried: the call returns null.
	Terminal Class = iota
	// Transient failures are retried with backoff.
	Transient
	// RateLimited failures say the provider's quota is spent: no call of
	// the executor starts until its reset, and the run waits for it
	// paused (see engine/callpolicy).
	RateLimited
	// Unavailable failures say the executor cannot serve any call: its
	// binary is missing, it is not logged in, or the model does not exist.
	// They pause the run (launching more calls would fail the same way)
	// until the user fixes what Fix says and resumes.
	Unavailable
	// Infrastructure failures are ours, not the agent's: the process
	// tree was torn down under it, descriptors, memory or processes ran
	// out, a pipe or a spawn failed, our own helper could not start. The agent's answer was never
	// in question, so the call is never a terminal failure: it runs again
	// once the fault clears, and the run pauses with the reason when it
	// does not.
	Infrastructure
)

func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case RateLimited:
		return "rate-limited"
	case Unavailable:
		return "unavailable"
	case Infrastructure:
		return "infrastructure"
	default:
		return "terminal"
	}
}

// Error is a classified executor failure.
type Error struct {
	Class   Class
	Message string
	// Fix tells the user what to do, for failures they must fix
	// themselves (an Unavailable executor): "run codex login", ...
	Fix string
	// RetryAfter is how long to wait before the next attempt, if known.
	RetryAfter time.Duration
	// Unreachable says the CLI never reached its model endpoint
	// (connection refused, no route, DNS): nothing was sent or paid, and
	// while it lasts no call of the executor can succeed.
	Unreachable bool
	Err         error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// ClassOf classifies any error: an *Error keeps its class, a context
// deadline is transient, a system's shortage of descriptors, memory or
// processes (EMFILE, ENFILE, ENOMEM, EAGAIN, ENOBUFS) is infrastructure,
// anything else is terminal.
func ClassOf(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Transient
	}
	for _, shortage := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EAGAIN, syscall.ENOBUFS} {
		if errors.Is(err, shortage) {
			return Infrastructure
		}
	}
	return Terminal
}

// FixOf is the fix an error carries, or "".
func FixOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Fix
	}
	return ""
}

// Set holds the executors a runtime can use, by name.
type Set struct {
	byName map[string]Executor
}

// NewSet returns a set holding execs.
func NewSet(execs ...Executor) *Set {
	s := &Set{byName: map[string]Executor{}}
	for _, e := range execs {
		s.byName[e.Name()] = e
	}
	return s
}

// Add registers e under its name, replacing any executor of that name.
func (s *Set) Add(e Executor) { s.byName[e.Name()] = e }

// With returns a new set holding s's executors and extra, which replace
// those of the same name.
func (s *Set) With(extra ...Executor) *Set {
	n := &Set{byName: make(map[string]Executor, len(s.byName)+len(extra))}
	for k, v := range s.byName {
		n.byName[k] = v
	}
	for _, e := range extra {
		n.byName[e.Name()] = e
	}
	return n
}

// Get returns the executor called name.
func (s *Set) Get(name string) (Executor, error) {
	if e, ok := s.byName[name]; ok {
		return e, nil
	}
	return nil, fmt.Errorf("%w %q; known executors: %v", ErrUnknownExecutor, name, s.Names())
}

// ErrUnknownExecutor is the error of Get for a name the set does not hold.
var ErrUnknownExecutor = errors.New("unknown executor")

// Names lists the registered executors, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
