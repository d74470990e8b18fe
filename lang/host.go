// Package lang defines the contract between the engine and the script hosts.
//
// A Host turns a source file into a Script: it parses the file, reads its
// meta without running any code, and rejects a bad script before anything
// runs. A Script then runs against an Env, the set of primitives (agent,
// parallel, pipeline, workflow, phase, log, checkpoint, args, budget) that the
// engine provides. A host knows nothing of journals, executors or HTTP, and
// the engine knows nothing of any one language: adding a language means
// writing a Host and registering it by file extension.
//
// Values cross the boundary as JSON (json.RawMessage), so every host sees
// plain data and two hosts never share live objects.
package lang

import (
	"context"
	"encoding/json"
)

// Meta is the static description every workflow declares.
type Meta struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	WhenToUse   string  `json:"whenToUse,omitempty"`
	Phases      []Phase `json:"phases,omitempty"`
	// Model is the model of the script's agent calls that name none and
	// whose phase names none (see ModelFor).
	Model string `json:"model,omitempty"`
	// Strict makes the first error a parallel() branch or pipeline() item
	// throws fail the run, instead of making that branch null as the Node
	// runtime does: meta.strict, as the run option --strict.
	Strict bool `json:"strict,omitempty"`
	// MaxCost is the script's own dollar cap (meta.maxCost), which a run
	// that gives none (--max-cost) takes; 0 for none.
	MaxCost float64 `json:"maxCost,omitempty"`
}

// ModelFor is the model meta routes a call in phase to, "" for none: the
// model of the declared phase titled exactly phase, else meta.model. A
// call outside any phase() is routed by the first declared phase, under
// which it runs. This is the Node runtime's routing (its
// resolveModelForPhase over meta.phases[].model and meta.model); a
// call's own model option beats it, and it beats the run's default.
func (m Meta) ModelFor(phase string) string {
	if phase == "" && len(m.Phases) > 0 {
		phase = m.Phases[0].Title
	}
	for _, p := range m.Phases {
		if p.Model != "" && p.Title == phase {
			return p.Model
		}
	}
	return m.Model
}

// Phase labels a progress group; its Model routes the phase's agent calls
// (see Meta.ModelFor).
type Phase struct {
	Title  string `json:"title"`
	Detail string `json:"detail,omitempty"`
	Model  string `json:"model,omitempty"`
}

// Source is one script file as read from disk (or sent over the API).
type Source struct {
	// Path names the file in error messages and resolves relative loads.
	// A script sent as text uses a synthetic name such as "inline.workflow.js".
	Path string
	Text []byte
	// ReadFile reads the other files the script pulls in (Starlark's
	// load()s); nil reads them from disk. A run on another machine gets
	// them from the script's bundle, so that it runs exactly the files the
	// run was started with.
	ReadFile func(path string) ([]byte, error)
}

// Host loads the scripts of one language.
type Host interface {
	// Language is a short name such as "javascript" or "starlark".
	Language() string
	// Extensions lists the file suffixes the host accepts, such as
	// ".workflow.js" or ".js". The registry prefers the longest match.
	Extensions() []string
	// Load parses src, reads its meta statically and validates the script.
	// It runs no workflow code. Errors are *Error values carrying a position.
	Load(src Source) (Script, error)
}

// Script is a loaded, validated workflow ready to run any number of times.
type Script interface {
	Path() string
	Meta() Meta
	// Text is the main file's source, journaled so a run can resume after the
	// file changed or vanished.
	Text() []byte
	// Hash is the hex SHA-256 over the script and every file it pulled in
	// (Starlark load()s, for example): a changed hash means an edited script.
	Hash() string
	// Files lists every file the script depends on, the main file first,
	// so watch mode can follow them.
	Files() []string
	// Run executes the script against env and returns its result as JSON
	// ("null" for no result). It returns when the script's body has returned
	// and every call it started has settled, when the body has thrown, or
	// when ctx is done; an error thrown by the script is returned as an
	// *Error with a position. Once the body has thrown, what it left
	// running (calls, branches) is abandoned: the caller ends it by
	// cancelling ctx.
	Run(ctx context.Context, env Env) (json.RawMessage, error)
}

// Scope is a node of the run's scope tree. A call's identity is its scope's
// path plus its ordinal within that scope, so a host only has to carry the
// right Scope into each call; the engine does the numbering.
type Scope interface {
	Path() string
}

// Env holds the primitives the engine gives a running script.
//
// Order decides identity: a call's identity is its scope plus its ordinal in
// that scope, so a host must call every Env method on the script's own thread
// in program order. The three calls that take time (Agent, Checkpoint,
// Workflow) therefore return at once, after fixing the call's identity, and
// report their answer through done, which the engine calls exactly once:
// before the method returns when the answer is at hand (a call replayed
// from the journal, a limit), otherwise later from another goroutine (or
// coroutine). A single-threaded host queues the answer for its interpreter
// thread; a host with blocking builtins waits for it. Either way it waits
// through the Env's Scheduler, never on its own.
type Env interface {
	// Args is the run's args as JSON, or nil when the run has none.
	Args() json.RawMessage
	// Root is the scope the script's body runs in.
	Root() Scope
	// Scheduler is how the host waits for answers and runs branches.
	Scheduler() Scheduler
	// Cwd is the run's working directory (the project's), which scripts
	// read as the global cwd, as in the Node runtime.
	Cwd() string

	// Agent starts one agent call. Its answer is a JSON string for text,
	// the validated object for a schema, or null on a terminal failure. An
	// error is one the script should see as a throw: budget exhausted, the
	// agent cap, a schema that never validated, a stopped run.
	Agent(ctx context.Context, s Scope, prompt string, opts AgentOptions, done Done)
	// Checkpoint asks a human (or applies the headless policy); the answer
	// is JSON.
	Checkpoint(ctx context.Context, s Scope, req CheckpointRequest, done Done)
	// Workflow runs a saved workflow (by name) or a script (by path) as a
	// child of s, one level deep; the answer is the child's result.
	Workflow(ctx context.Context, s Scope, ref string, args json.RawMessage, done Done)

	// Parallel opens n branch scopes under s for one parallel() call.
	Parallel(s Scope, n int) ([]Scope, error)
	// Pipeline opens one scope per item under s for one pipeline() call.
	Pipeline(s Scope, items, stages int) ([]Scope, error)
	// Stage returns the scope for stage k of a pipeline item scope.
	Stage(item Scope, k int) Scope
	// BranchFailed reports that a parallel branch or pipeline item threw and
	// became null, so the user can see why.
	BranchFailed(s Scope, err error)

	// Phase sets the progress group for later calls in s.
	Phase(s Scope, title string)
	// Log records a narrator line. Level is "info", "warn" or "error".
	Log(s Scope, level, msg string)
	// Budget is the run's token budget as the script sees it.
	Budget() Budget
}

// Done receives the answer of a call started through Env. It must not block
// and must not call back into Env.
type Done func(answer json.RawMessage, err error)

// Budget is the script-facing view of the run's token budget.
type Budget interface {
	// Total is the budget in tokens; ok is false when the run has none.
	Total() (total int64, ok bool)
	// Spent counts the tokens of every call resolved so far in this
	// execution, replayed calls included, so a resumed script sees the same
	// figures it saw the first time.
	Spent() int64
	// Remaining is max(0, total-spent); ok is false when there is no budget
	// (the script sees Infinity).
	Remaining() (remaining int64, ok bool)
}
