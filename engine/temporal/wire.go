package temporal

import (
	"encoding/json"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal/index"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// The names this package registers with Temporal. They are part of the
// protocol between clients and workers of different builds: keep them.
const (
	WorkflowName        = "dynworkflow.Run"
	AgentActivity       = "dynworkflow.Agent"
	ResolveActivity     = "dynworkflow.ResolveWorkflow"
	SealActivity        = "dynworkflow.Seal"
	StateQuery          = "dynworkflow.state"
	RespondUpdate       = "dynworkflow.respond"
	PauseSignal         = "dynworkflow.pause"
	CallSignal          = "dynworkflow.call"
	DefaultTaskQueue    = index.DefaultTaskQueue
	DefaultNamespace    = index.DefaultNamespace
	DefaultHeartbeat    = index.DefaultHeartbeat
	defaultAgentTimeout = 24 * time.Hour
	ruleStop            = "stop"
)

// RunInput starts one execution of a run.
type RunInput struct {
	RunID string `json:"runId"`
	// Epoch is 0 for the first execution and grows by one per resume.
	Epoch int `json:"epoch"`
	// Rule is how this execution replays: fresh, crash or edit; or
	// "stop", an execution that runs nothing and ends stopped, which marks
	// a run that had ended as one that cannot be resumed.
	Rule    string          `json:"rule"`
	Script  Bundle          `json:"script"`
	Args    json.RawMessage `json:"args,omitempty"`
	Options engine.Options  `json:"options"`
	// Cwd is the project directory: agents work there and child workflows
	// are looked up under it, so workers must see the project at this path.
	Cwd string `json:"cwd"`
	// Human says somebody can answer checkpoints (with respond); without
	// one they follow their headless policy at once, as in a local run.
	Human bool `json:"human"`
	// Heartbeat is how long a worker may stay silent while it runs an agent
	// before the call is given to another worker.
	Heartbeat time.Duration `json:"heartbeat"`
	// Defaults is the configuration of the executors, by name, on the
	// machine that started or resumed the run: calls resolve their model,
	// effort, permissions and timeout against it in the workflow, exactly
	// as a local run does, so that their fingerprints are the same.
	Defaults map[string]executors.Defaults `json:"defaults,omitempty"`
	// Ledger lists the pages (Page) of every earlier execution, oldest
	// first, by their keys in the blob store: what this one replays from.
	// No payload ever holds every answer of a run.
	Ledger []string `json:"ledger,omitempty"`
	// Chain is the epoch of the start or resume that this execution
	// continues: an execution continues as new when its history grows
	// long (see rollover.go), and the ones that continue it go on as if it
	// had not ended. Chain equals Epoch for a start or a resume.
	Chain int `json:"chain,omitempty"`
	// Carry is, for an execution that continues another, what the chain
	// did so far.
	Carry *Carry `json:"carry,omitempty"`
	// Children are the child workflows' scripts the chain found so far,
	// by the path of their workflow() call, so that a continuation runs
	// the same files.
	Children map[string]Bundle `json:"children,omitempty"`
	// PauseReason is a pause that reached the execution this one
	// continues as it was ending: this one pauses at once.
	PauseReason string `json:"pauseReason,omitempty"`
	// RollEvents is how many history events an execution may have before
	// it continues as new; 0 means defaultRollEvents. Temporal's own
	// suggestion to continue (at 4K events or 4 MB by default) also does.
	RollEvents int `json:"rollEvents,omitempty"`
	// Cost prices the calls (the price table of the machine that started
	// or resumed the run) and says what they are expected to cost, for the
	// dollar cap; nil prices nothing.
	Cost *cost.Model `json:"cost,omitempty"`
	// Ended is, for a stop execution, the state of the execution it
	// follows, whose figures the run keeps.
	Ended *State `json:"ended,omitempty"`

	// What show needs to tell the whole run from its latest execution.
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	ScriptHash  string    `json:"scriptHash"`
	CreatedAt   time.Time `json:"createdAt"`
	// Previous are the Temporal run ids of the earlier executions, oldest
	// first.
	Previous []string `json:"previous,omitempty"`
}

// Page is what one execution did with the run's calls, as the local
// engine reads it from its journal, for the call policy of a later
// execution to replay from by the same rules (callpolicy.Ledger). Each
// execution's page is written once, to the blob store, when the next
// execution starts; an execution's input names the pages of all before it.
type Page struct {
	Epoch int `json:"epoch"`
	// Runs say which script and args each frame ran.
	Runs []callpolicy.Run `json:"runs,omitempty"`
	// Records are the calls' starts and answers, in order.
	Records []PageRecord `json:"records,omitempty"`
	// Usage is what every attempt of the execution cost.
	Usage executors.Usage `json:"usage"`
	// GaveUp are the calls that ended without an answer, for an execution
	// that continued as new: the one that continues it gives the script
	// the same null or error, where a resume runs them again.
	GaveUp []GaveUp `json:"gaveUp,omitempty"`
}

// PageRecord is a record of a call; an answer too large to keep in the
// page is in the blob store, under Blob.
type PageRecord struct {
	callpolicy.Record
	Blob string `json:"blob,omitempty"`
}

// GaveUp is a call that ended without an answer: the script got null, or
// the error of Code and Message.
type GaveUp struct {
	Path    string `json:"path"`
	FP      string `json:"fp"`
	Epoch   int    `json:"epoch"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// Carry is what the executions of a chain did before the one that goes on
// with it (RunInput.Chain).
type Carry struct {
	// Retried counts their retries.
	Retried int `json:"retried,omitempty"`
	// Spent is the tokens the budget counted.
	Spent int64 `json:"spent,omitempty"`
	// Usage is what their live attempts cost.
	Usage executors.Usage `json:"usage"`
	// StartedAt is when the chain started; Phase and Logs are where it
	// was and what it said.
	StartedAt time.Time        `json:"startedAt"`
	Phase     string           `json:"phase,omitempty"`
	Logs      []engine.LogLine `json:"logs,omitempty"`
}

// SealInput asks a worker to write the page of an execution about to
// continue as new: its calls from its history, the rest from its state.
type SealInput struct {
	RunID string `json:"runId"`
	// Execution is the Temporal run id of the execution.
	Execution string   `json:"execution"`
	State     State    `json:"state"`
	GaveUp    []GaveUp `json:"gaveUp,omitempty"`
}

// AgentInput is one attempt of an agent call, as its activity gets it. It
// also carries what `show` prints of the call, since the call's history
// events are where show reads it.
type AgentInput struct {
	// The run's id is the workflow's, which the activity knows.
	Path        string `json:"path"`
	Fingerprint string `json:"fp"`
	Prompt      string `json:"prompt"`
	// Ask is what this attempt asks when it is not Prompt: the repair of
	// an answer that broke the schema. Prompt stays the call's, which is
	// what show prints.
	Ask      string `json:"ask,omitempty"`
	Label    string `json:"label,omitempty"`
	Phase    string `json:"phase,omitempty"`
	Executor string `json:"executor"`
	Model    string `json:"model,omitempty"`
	Effort   string `json:"effort,omitempty"`
	// Permissions is the policy the call asked for, or its run; "" lets
	// the worker's executor configuration decide.
	Permissions executors.Permissions `json:"permissions,omitempty"`
	AgentType   string                `json:"agentType,omitempty"`
	Isolation   string                `json:"isolation,omitempty"`
	Schema      json.RawMessage       `json:"schema,omitempty"`
	Cwd         string                `json:"cwd"`
	// Attempt counts the call's attempts across retries and schema
	// repairs, from 1: one activity runs one attempt, so each fits its
	// timeout.
	Attempt int `json:"attempt"`
	// TimeoutMs bounds the executor's run; 0 means none.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// IdleTimeoutMs and UnreachableMs are the attempt's liveness bounds
	// (callpolicy.Bounds); 0 means none.
	IdleTimeoutMs int64 `json:"idleTimeoutMs,omitempty"`
	UnreachableMs int64 `json:"unreachableMs,omitempty"`
}

// AgentOutput is the answer of an agent call. An answer or a transcript
// over inlineLimit is in the blob store, under ValueBlob or HistoryBlob.
type AgentOutput struct {
	Value       json.RawMessage         `json:"value,omitempty"`
	ValueBlob   string                  `json:"valueBlob,omitempty"`
	HistoryBlob string                  `json:"historyBlob,omitempty"`
	Usage       executors.Usage         `json:"usage"`
	Provider    string                  `json:"provider,omitempty"`
	Model       string                  `json:"model,omitempty"`
	DurMs       int64                   `json:"durMs"`
	History     []executors.HistoryItem `json:"history,omitempty"`
	// Worktree is, for an isolated call, what became of the attempt's
	// worktree, and Earlier what became of those that earlier attempts,
	// lost with their workers, left.
	Worktree *engine.Worktree  `json:"worktree,omitempty"`
	Earlier  []engine.Worktree `json:"earlier,omitempty"`
}

// The types of the errors an agent activity fails with: the executor's
// failure class (executors.Class), or errSchema for an answer that broke
// the call's schema. Each one is non-retryable for Temporal: what to do
// next is the call policy's decision, in the workflow.
const (
	errTerminal       = "terminal"
	errTransient      = "transient"
	errRateLimited    = "rate-limited"
	errUnavailable    = "unavailable"
	errInfrastructure = "infrastructure"
	errSchema         = "schema"
	// errIsolation is an isolated call whose worker can make no worktree
	// in the project: the run pauses (callpolicy.ErrIsolationUnavailable).
	errIsolation = "isolation"
)

// AgentFailure is the detail of an agent activity's failure.
type AgentFailure struct {
	Usage      executors.Usage `json:"usage"`
	RetryAfter time.Duration   `json:"retryAfter,omitempty"`
	// TimedOut says the attempt ran out of its time.
	TimedOut bool `json:"timedOut,omitempty"`
	// Reason is, for a schema failure, why the answer failed it.
	Reason string `json:"reason,omitempty"`
	// Fix is what the user must do, for an unavailable executor.
	Fix string `json:"fix,omitempty"`
	// Message is the executor's own words, without the class.
	Message string `json:"message,omitempty"`
	// Unreachable says the executor never reached its model endpoint.
	Unreachable bool `json:"unreachable,omitempty"`
	// DurMs is how long the attempt ran.
	DurMs int64 `json:"durMs,omitempty"`
	// Worktree and Earlier are as in AgentOutput.
	Worktree *engine.Worktree  `json:"worktree,omitempty"`
	Earlier  []engine.Worktree `json:"earlier,omitempty"`
}

// ResolveInput asks a worker to find a child workflow's script.
type ResolveInput struct {
	Ref string `json:"ref"`
	// Dir is the parent script's directory: a relative path starts there.
	Dir string `json:"dir"`
	Cwd string `json:"cwd"`
}

// State is what a running execution reports through its query, and what it
// returns once it has ended.
type State struct {
	RunID       string          `json:"runId"`
	Name        string          `json:"name"`
	Epoch       int             `json:"epoch"`
	Status      engine.Status   `json:"status"`
	PauseReason string          `json:"pauseReason,omitempty"`
	Error       string          `json:"error,omitempty"`
	Phase       string          `json:"phase,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	Stats       store.Stats     `json:"stats"`
	// Calls counts the agent() calls made so far, those waiting for a
	// concurrency slot included: what a progress bar can show.
	Calls int `json:"calls"`
	// Usage is what this execution's live calls cost.
	Usage executors.Usage  `json:"usage"`
	Logs  []engine.LogLine `json:"logs,omitempty"`
	// ScriptErrors are the errors the script threw in fan-out branches
	// that became null, by cause (see engine.ScriptError).
	ScriptErrors []engine.ScriptErrorGroup `json:"scriptErrors,omitempty"`
	Checkpoints  []Checkpoint              `json:"checkpoints,omitempty"`
	Children     []ChildInfo               `json:"children,omitempty"`
	StartedAt    time.Time                 `json:"startedAt"`
	EndedAt      time.Time                 `json:"endedAt,omitzero"`
}

// Checkpoint is a checkpoint() call of an execution: waiting for an
// answer, or answered.
type Checkpoint struct {
	Path        string                 `json:"path"`
	Fingerprint string                 `json:"fp"`
	Phase       string                 `json:"phase,omitempty"`
	Request     lang.CheckpointRequest `json:"request"`
	Pending     bool                   `json:"pending,omitempty"`
	Answer      json.RawMessage        `json:"answer,omitempty"`
	Source      string                 `json:"source,omitempty"` // human, headless-default, timeout-default
	AskedAt     time.Time              `json:"askedAt"`
	AnsweredAt  time.Time              `json:"answeredAt,omitzero"`
}

// Response answers a pending checkpoint.
type Response struct {
	Path   string          `json:"path"`
	Answer json.RawMessage `json:"answer"`
}

// CallAction asks an execution to stop or restart one of its running
// agent calls (see engine.Run.StopCall).
type CallAction struct {
	Path string `json:"path"`
	// Action is "stop" or "restart".
	Action string `json:"action"`
}

// Pause asks an execution to pause.
type Pause struct {
	Reason string `json:"reason"`
}
