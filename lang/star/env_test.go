package star

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dynworkflow/dynworkflow/lang"
)

// The fake env is the JavaScript host's (jsvm/env_test.go): both hosts must
// make the same calls through the same contract.

// fakeScope names scopes so that assertions read well: the root is "/",
// the second branch of the first parallel() in it is "/par.0/1", and stage 2
// of item 0 of a pipeline is "/pipe.0/0/stage.2".
type fakeScope struct {
	path string

	mu      sync.Mutex
	fanouts int // parallel() and pipeline() calls opened in this scope so far
}

func (s *fakeScope) Path() string { return s.path }

func (s *fakeScope) child(name string) *fakeScope {
	return &fakeScope{path: strings.TrimSuffix(s.path, "/") + "/" + name}
}

func (s *fakeScope) nextFanout(kind string) *fakeScope {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.fanouts
	s.fanouts++
	return s.child(fmt.Sprintf("%s.%d", kind, n))
}

// fakeCall is one call the script made through the env.
type fakeCall struct {
	kind   string // agent, checkpoint, workflow
	path   string
	prompt string // the prompt, the checkpoint prompt or the workflow ref
	opts   lang.AgentOptions
	args   string
}

// fakeEnv records what a script does. Calls answer on their own goroutine,
// as the engine's do; by default an agent answers "echo: <prompt>".
type fakeEnv struct {
	args     json.RawMessage
	root     *fakeScope
	budget   *fakeBudget
	maxItems int

	// answer, when set, gives the answer of a call; it may block on ctx.
	answer func(ctx context.Context, c fakeCall) (json.RawMessage, error)

	// The engine's methods must be called on the script's thread, one at a
	// time; overlaps counts the calls that came while another was running.
	thread   sync.Mutex
	overlaps atomic.Int32

	mu       sync.Mutex
	calls    []fakeCall
	logs     []string
	failures []string
	phases   []string
	answered int
}

func newFakeEnv() *fakeEnv {
	return &fakeEnv{root: &fakeScope{path: "/"}, maxItems: 4096}
}

// onThread marks a method call as running on the script's thread.
func (e *fakeEnv) onThread() func() {
	if !e.thread.TryLock() {
		e.overlaps.Add(1)
		return func() {}
	}
	return e.thread.Unlock
}

func (e *fakeEnv) Args() json.RawMessage { return e.args }
func (e *fakeEnv) Root() lang.Scope      { return e.root }

func (e *fakeEnv) Agent(ctx context.Context, s lang.Scope, prompt string, opts lang.AgentOptions, done lang.Done) {
	defer e.onThread()()
	e.start(ctx, fakeCall{kind: "agent", path: s.Path(), prompt: prompt, opts: opts}, done)
}

func (e *fakeEnv) Checkpoint(ctx context.Context, s lang.Scope, req lang.CheckpointRequest, done lang.Done) {
	defer e.onThread()()
	e.start(ctx, fakeCall{kind: "checkpoint", path: s.Path(), prompt: req.Prompt}, done)
}

func (e *fakeEnv) Workflow(ctx context.Context, s lang.Scope, ref string, args json.RawMessage, done lang.Done) {
	defer e.onThread()()
	c := fakeCall{kind: "workflow", path: s.Path(), prompt: ref, args: string(args)}
	if args == nil {
		c.args = "null"
	}
	e.start(ctx, c, done)
}

func (e *fakeEnv) start(ctx context.Context, c fakeCall, done lang.Done) {
	e.mu.Lock()
	e.calls = append(e.calls, c)
	e.mu.Unlock()
	go func() {
		var res json.RawMessage
		var err error
		if e.answer != nil {
			res, err = e.answer(ctx, c)
		} else {
			res, _ = json.Marshal("echo: " + c.prompt)
		}
		e.mu.Lock()
		e.answered++
		e.mu.Unlock()
		done(res, err)
	}()
}

func (e *fakeEnv) Parallel(s lang.Scope, n int) ([]lang.Scope, error) {
	defer e.onThread()()
	if n > e.maxItems {
		return nil, fmt.Errorf("parallel() takes at most %d items, not %d", e.maxItems, n)
	}
	fan := s.(*fakeScope).nextFanout("par")
	out := make([]lang.Scope, n)
	for i := range out {
		out[i] = fan.child(fmt.Sprint(i))
	}
	return out, nil
}

func (e *fakeEnv) Pipeline(s lang.Scope, items, stages int) ([]lang.Scope, error) {
	defer e.onThread()()
	if items > e.maxItems {
		return nil, fmt.Errorf("pipeline() takes at most %d items, not %d", e.maxItems, items)
	}
	fan := s.(*fakeScope).nextFanout("pipe")
	out := make([]lang.Scope, items)
	for i := range out {
		out[i] = fan.child(fmt.Sprint(i))
	}
	return out, nil
}

func (e *fakeEnv) Stage(item lang.Scope, k int) lang.Scope {
	defer e.onThread()()
	return item.(*fakeScope).child(fmt.Sprintf("stage.%d", k))
}

func (e *fakeEnv) BranchFailed(s lang.Scope, err error) {
	defer e.onThread()()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failures = append(e.failures, s.Path()+" "+err.Error())
}

func (e *fakeEnv) Phase(s lang.Scope, title string) {
	defer e.onThread()()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.phases = append(e.phases, s.Path()+" "+title)
}

func (e *fakeEnv) Log(s lang.Scope, level, msg string) {
	defer e.onThread()()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.logs = append(e.logs, level+" "+s.Path()+" "+msg)
}

func (e *fakeEnv) Budget() lang.Budget {
	if e.budget == nil {
		return &fakeBudget{}
	}
	return e.budget
}

// callList returns "path prompt" for every call, sorted, since branches
// call in whatever order their answers arrive.
func (e *fakeEnv) callList() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, c := range e.calls {
		out = append(out, c.path+" "+c.prompt)
	}
	sort.Strings(out)
	return out
}

type fakeBudget struct {
	total    int64
	hasTotal bool
	spent    int64
}

func (b *fakeBudget) Total() (int64, bool) { return b.total, b.hasTotal }
func (b *fakeBudget) Spent() int64         { return b.spent }
func (b *fakeBudget) Remaining() (int64, bool) {
	if !b.hasTotal {
		return 0, false
	}
	return max(0, b.total-b.spent), true
}
