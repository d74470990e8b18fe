package engine

import (
	"encoding/json"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
)

// Journal record types. A record is one JSON line; the journal is
// append-only, so a later record for the same call path supersedes an
// earlier one.
const (
	recRun      = "run"           // the run was created: script, args, options
	recResume   = "resume"        // a new execution began, and by which rule
	recScript   = "script"        // a child workflow's script, by frame path
	recStarted  = "call.started"  // a call was launched on an executor
	recFinished = "call.finished" // a call's answer, durable before the script sees it
	recFailed   = "call.failed"   // a call ended without an answer
	recRetry    = "call.retry"    // an attempt failed and will be retried
	// recWorktree says what became of an isolated call's worktree: kept
	// (with its branch, head and diff stat) or removed. It is durable
	// before a removal starts.
	recWorktree = "call.worktree"
	recLog      = "log"
	recPhase    = "phase"
	// recScriptError is a parallel() branch or pipeline() item that threw
	// and became null (see ScriptError).
	recScriptError = "script.error"
	recEnd         = "end" // the execution ended: status, result, error
)

// record is the union of every journal record; unused fields are omitted.
type record struct {
	Seq   int64  `json:"seq"`
	Type  string `json:"type"`
	Time  int64  `json:"t"` // unix milliseconds
	Epoch int    `json:"epoch,omitempty"`

	Run    *runHeader    `json:"run,omitempty"`
	Resume *resumeHeader `json:"resume,omitempty"`
	Script *scriptRecord `json:"script,omitempty"`

	Path        string           `json:"path,omitempty"`
	Kind        string           `json:"kind,omitempty"` // agent or checkpoint
	Fingerprint string           `json:"fp,omitempty"`
	Call        *callInfo        `json:"call,omitempty"`
	Result      json.RawMessage  `json:"result,omitempty"`
	Usage       *executors.Usage `json:"usage,omitempty"`
	Answer      *answerInfo      `json:"answer,omitempty"`
	Error       *errorInfo       `json:"error,omitempty"`
	// Worktree is on call.started (the worktree an isolated call runs in)
	// and call.worktree records.
	Worktree *Worktree `json:"worktree,omitempty"`

	Level   string `json:"level,omitempty"`
	Message string `json:"message,omitempty"`
	// Position is where a script error was thrown: file:line:col.
	Position string `json:"pos,omitempty"`

	End *endInfo `json:"end,omitempty"`
}

type runHeader struct {
	RunID       string          `json:"runId"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Phases      []string        `json:"phases,omitempty"`
	ScriptPath  string          `json:"scriptPath"`
	ScriptHash  string          `json:"scriptHash"`
	ScriptText  string          `json:"scriptText"`
	Args        json.RawMessage `json:"args,omitempty"`
	Options     Options         `json:"options"`
	Cwd         string          `json:"cwd"`
	// Fork is, for a run made by Fork, the run and call it was forked
	// from.
	Fork *ForkInfo `json:"fork,omitempty"`
	// Executors are the definitions of the executors the run could use.
	Executors []executors.Definition `json:"executors,omitempty"`
	// Trace is the first execution's trace, when it was traced.
	Trace *TraceContext `json:"trace,omitempty"`
}

type resumeHeader struct {
	// Rule is "crash" (same script and args: replay every finished call) or
	// "edit" (prefix rule per scope).
	Rule       string          `json:"rule"`
	OldHash    string          `json:"oldHash"`
	NewHash    string          `json:"newHash"`
	ScriptPath string          `json:"scriptPath,omitempty"`
	ScriptText string          `json:"scriptText,omitempty"` // only when it changed
	Args       json.RawMessage `json:"args,omitempty"`
	Options    Options         `json:"options"`
	// Executors are the definitions of the executors this execution could
	// use: those of the run record, and any configured since.
	Executors []executors.Definition `json:"executors,omitempty"`
	// Trace is this execution's trace, when it was traced.
	Trace *TraceContext `json:"trace,omitempty"`
}

type scriptRecord struct {
	Frame string          `json:"frame"` // the scope path of the workflow() call
	Name  string          `json:"name"`
	Path  string          `json:"path"`
	Hash  string          `json:"hash"`
	Text  string          `json:"text"`
	Args  json.RawMessage `json:"args,omitempty"`
}

type callInfo struct {
	Label    string `json:"label,omitempty"`
	Phase    string `json:"phase,omitempty"`
	Prompt   string `json:"prompt"`
	Executor string `json:"executor,omitempty"`
	// Model, Effort and Permissions are what the call ran with, resolved
	// from its options, the run's and the executor's configuration.
	Model       string                `json:"model,omitempty"`
	Effort      string                `json:"effort,omitempty"`
	Permissions executors.Permissions `json:"permissions,omitempty"`
	Schema      json.RawMessage       `json:"schema,omitempty"`
	// Route is the route (--route, routes.json) that set the call's
	// model, effort or executor, as --route writes it.
	Route string `json:"route,omitempty"`
}

type answerInfo struct {
	Source   string                  `json:"source"` // live, headless-default, human
	Provider string                  `json:"provider,omitempty"`
	Model    string                  `json:"model,omitempty"`
	Attempts int                     `json:"attempts,omitempty"`
	DurMs    int64                   `json:"durMs"`
	History  []executors.HistoryItem `json:"history,omitempty"`
}

type errorInfo struct {
	Class   string `json:"class,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

type endInfo struct {
	Status      string `json:"status"`
	PauseReason string `json:"pauseReason,omitempty"`
	Error       string `json:"error,omitempty"`
	// ErrorCode is the stable code of Error, when it has one, so that the
	// journal tells it as the snapshot does.
	ErrorCode string          `json:"errorCode,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Replayed  int             `json:"replayed"`
	Live      int             `json:"live"`
	Failed    int             `json:"failed"`
	Retried   int             `json:"retried,omitempty"`
	// ResumeAt is when a run parked by a rate limit may go on.
	ResumeAt *time.Time `json:"resumeAt,omitempty"`
	// ScriptErrors counts the branches the execution's script errors made
	// null.
	ScriptErrors int `json:"scriptErrors,omitempty"`
}
