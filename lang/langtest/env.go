package langtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/dynworkflow/dynworkflow/lang"
)

// A Call is one call the script made through the env.
type Call struct {
	Kind   string // agent, checkpoint or workflow
	Path   string // the path of the call's scope
	Prompt string // the prompt, the checkpoint prompt or the workflow ref
	Opts   lang.AgentOptions
	Args   string // a workflow call's args as JSON; "null" when it had none
}

// An Env records what a script does. Calls answer on their own goroutine,
// as the engine's do.
//
// Configure an Env before the run starts; read what it recorded after the
// run returns (or, for a test that watches a run in progress, at any time:
// the accessors lock).
type Env struct {
	// Answer, when set, gives the answer of a call; it may block on ctx.
	// By default an agent answers "echo: <prompt>".
	Answer func(ctx context.Context, c Call) (json.RawMessage, error)
	// MaxItems is the most items parallel() and pipeline() accept.
	MaxItems int
	// Refuse, when set, is asked about every agent call, numbered from 1 in
	// the order they were made; an error answers the call at once, inside
	// the call, as the engine answers a call over the agent cap.
	Refuse func(n int, c Call) error

	args   json.RawMessage
	cwd    string
	root   *Scope
	budget lang.Budget

	// The engine's methods must be called on the script's thread, one at a
	// time; overlaps counts the calls that came while another was running.
	thread   sync.Mutex
	overlaps atomic.Int32

	// stepper is the scheduler of a Lockstep run, nil otherwise.
	stepper *stepper

	mu       sync.Mutex
	calls    []Call
	agents   int
	waiting  []waitingCall // the calls of a Lockstep run, unanswered
	logs     []string
	failures []string
	phases   []string
}

// NewEnv returns an env with no args, no budget total, and a limit of 4096
// items per parallel() or pipeline().
func NewEnv() *Env {
	return &Env{root: &Scope{path: "/"}, MaxItems: 4096, budget: &Budget{}}
}

// SetArgs sets the run's args, as JSON.
func (e *Env) SetArgs(args json.RawMessage) { e.args = args }

// SetBudget sets the budget the script sees.
func (e *Env) SetBudget(b lang.Budget) { e.budget = b }

// onThread marks a method call as running on the script's thread.
func (e *Env) onThread() func() {
	if !e.thread.TryLock() {
		e.overlaps.Add(1)
		return func() {}
	}
	return e.thread.Unlock
}

func (e *Env) Args() json.RawMessage { return e.args }
func (e *Env) Root() lang.Scope      { return e.root }
func (e *Env) Budget() lang.Budget   { return e.budget }

// Scheduler runs branches on goroutines, as a local run does.
func (e *Env) Scheduler() lang.Scheduler {
	if e.stepper != nil {
		return e.stepper
	}
	return lang.Goroutines{}
}

// Cwd is the working directory SetCwd set, else "/project".
func (e *Env) Cwd() string {
	if e.cwd == "" {
		return "/project"
	}
	return e.cwd
}

// SetCwd sets the working directory the script sees.
func (e *Env) SetCwd(dir string) { e.cwd = dir }

func (e *Env) Agent(ctx context.Context, s lang.Scope, prompt string, opts lang.AgentOptions, done lang.Done) {
	defer e.onThread()()
	e.start(ctx, Call{Kind: "agent", Path: s.Path(), Prompt: prompt, Opts: opts}, done)
}

func (e *Env) Checkpoint(ctx context.Context, s lang.Scope, req lang.CheckpointRequest, done lang.Done) {
	defer e.onThread()()
	e.start(ctx, Call{Kind: "checkpoint", Path: s.Path(), Prompt: req.Prompt}, done)
}

func (e *Env) Workflow(ctx context.Context, s lang.Scope, ref string, args json.RawMessage, done lang.Done) {
	defer e.onThread()()
	c := Call{Kind: "workflow", Path: s.Path(), Prompt: ref, Args: string(args)}
	if args == nil {
		c.Args = "null"
	}
	e.start(ctx, c, done)
}

func (e *Env) start(ctx context.Context, c Call, done lang.Done) {
	e.mu.Lock()
	e.calls = append(e.calls, c)
	n := 0
	if c.Kind == "agent" {
		e.agents++
		n = e.agents
	}
	e.mu.Unlock()
	if e.Refuse != nil && n > 0 {
		if err := e.Refuse(n, c); err != nil {
			done(nil, err)
			return
		}
	}
	if e.stepper != nil {
		e.mu.Lock()
		e.waiting = append(e.waiting, waitingCall{c, done})
		e.mu.Unlock()
		return
	}
	go func() { done(e.answer(ctx, c)) }()
}

func (e *Env) Parallel(s lang.Scope, n int) ([]lang.Scope, error) {
	defer e.onThread()()
	if n > e.MaxItems {
		return nil, fmt.Errorf("parallel() takes at most %d items, not %d", e.MaxItems, n)
	}
	return s.(*Scope).nextFanout("par").children(n), nil
}

func (e *Env) Pipeline(s lang.Scope, items, stages int) ([]lang.Scope, error) {
	defer e.onThread()()
	if items > e.MaxItems {
		return nil, fmt.Errorf("pipeline() takes at most %d items, not %d", e.MaxItems, items)
	}
	return s.(*Scope).nextFanout("pipe").children(items), nil
}

func (e *Env) Stage(item lang.Scope, k int) lang.Scope {
	defer e.onThread()()
	return item.(*Scope).child(fmt.Sprintf("stage.%d", k))
}

func (e *Env) BranchFailed(s lang.Scope, err error) {
	defer e.onThread()()
	e.record(&e.failures, s.Path()+" "+err.Error())
}

func (e *Env) Phase(s lang.Scope, title string) {
	defer e.onThread()()
	e.record(&e.phases, s.Path()+" "+title)
}

func (e *Env) Log(s lang.Scope, level, msg string) {
	defer e.onThread()()
	e.record(&e.logs, level+" "+s.Path()+" "+msg)
}

func (e *Env) record(list *[]string, line string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	*list = append(*list, line)
}

// Calls returns every call, in the order they were made.
func (e *Env) Calls() []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

// CallList returns "path prompt" for every call, sorted, since branches
// call in whatever order their answers arrive.
func (e *Env) CallList() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, c := range e.calls {
		out = append(out, c.Path+" "+c.Prompt)
	}
	sort.Strings(out)
	return out
}

// PathOf returns the scope path of the call with the given prompt.
func (e *Env) PathOf(prompt string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.calls {
		if c.Prompt == prompt {
			return c.Path
		}
	}
	return "(no call " + prompt + ")"
}

// Logs returns "level path message" for every line logged, in order.
func (e *Env) Logs() []string { return e.recorded(&e.logs) }

// Phases returns "path title" for every phase() call, in order.
func (e *Env) Phases() []string { return e.recorded(&e.phases) }

// Failures returns "path error" for every branch that failed, in the order
// the host reported them.
func (e *Env) Failures() []string { return e.recorded(&e.failures) }

func (e *Env) recorded(list *[]string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(*list)
}

// Overlaps returns how many calls into the env came while another was
// running: a host must call the engine from one thread at a time.
func (e *Env) Overlaps() int { return int(e.overlaps.Load()) }
