package star

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.starlark.net/starlark"

	"github.com/dynworkflow/dynworkflow/lang"
)

// The keys of the thread-local values a run puts on its threads.
const (
	scopeKey = "dynworkflow.scope" // the lang.Scope calls made on the thread belong to
	fileKey  = "dynworkflow.file"  // the file whose top level the thread executes
	ctxKey   = "dynworkflow.ctx"   // the context of the goroutine the thread runs on
)

// A run is one execution of a script. Every Starlark value of the run, and
// every call into env, is touched only by the goroutine that holds the
// run's turn.
type run struct {
	ctx    context.Context
	script *Script
	env    lang.Env

	// turn is the run's interpreter lock. It is held while Starlark code
	// runs and passed on, in a fixed order, while a builtin waits for the
	// engine, so branches take turns, and env sees one call at a time in
	// each scope's program order.
	turn turns

	threads threadSet
	// ended is set once main has returned. A branch a failed fan-out left
	// running may still get an answer, but it must not run on, or tell the
	// engine anything, once the run is over.
	ended       atomic.Bool
	predeclared starlark.StringDict
	modules     map[string]*module // each file's globals, executed once per run
}

// A module is a file's top level, executed: its frozen globals, or why it
// failed.
type module struct {
	globals starlark.StringDict
	err     error
}

func newRun(ctx context.Context, s *Script, env lang.Env) *run {
	r := &run{ctx: ctx, script: s, env: env, modules: map[string]*module{}}
	r.turn.sched = env.Scheduler()
	return r
}

// run executes the main file's top level, then main(args), and returns
// main's result as JSON.
func (r *run) run() (json.RawMessage, error) {
	if r.ctx.Err() != nil {
		return nil, r.stopped()
	}
	// The engine stops a run (to pause it, or for good) by cancelling ctx.
	// Thread.Cancel is safe from any goroutine and breaks even a thread in
	// a loop that never calls a builtin.
	defer context.AfterFunc(r.ctx, func() { r.threads.cancelAll("the run was stopped") })()

	r.turn.take(r.ctx)
	defer r.turn.pass()
	defer r.end()
	r.predeclared = r.builtins()
	globals, err := r.exec(r.script.path)
	if err != nil {
		return nil, r.fail(err)
	}
	main, ok := globals["main"].(starlark.Callable)
	if !ok {
		return nil, &lang.Error{File: r.script.path, Message: fmt.Sprintf("main must be a function, not %s", typeOf(globals["main"])),
			Hint: "define def main(args): and return the workflow's result from it"}
	}
	args, err := fromJSON(r.env.Args())
	if err != nil {
		return nil, &lang.Error{File: r.script.path, Message: "the run's args are not valid JSON: " + err.Error()}
	}
	th, release := r.newThread(r.ctx, "main", r.env.Root())
	defer release()
	result, err := starlark.Call(th, main, fit(main, args), nil)
	if err != nil {
		return nil, r.fail(err)
	}
	out, notes, err := toJSON(result, r.script.maxNesting)
	var deep *lang.NestingError
	switch {
	case errors.As(err, &deep):
		deep.What = "the workflow's result"
		return nil, &lang.Error{File: r.script.path, Message: deep.Error(), Err: deep}
	case err != nil:
		return nil, &lang.Error{File: r.script.path, Message: "the workflow's result cannot be turned into JSON: " + err.Error(),
			Hint: "return plain data: dicts, lists, strings, numbers, booleans and None"}
	}
	if len(notes) > 0 {
		r.env.Log(r.env.Root(), "warn", lang.NonFiniteNote(notes))
	}
	return out, nil
}

// end ends the branches a failed fan-out left running: each stops at its
// next step, whenever it gets the turn again.
func (r *run) end() {
	r.ended.Store(true)
	r.threads.cancelAll("the workflow has ended")
}

// exec executes the top level of the file at path, once per run, and
// freezes its globals: whatever a module defines is shared by every
// branch, so nothing in it may change once it is loaded.
func (r *run) exec(path string) (starlark.StringDict, error) {
	if m, ok := r.modules[path]; ok {
		return m.globals, m.err
	}
	th, release := r.newThread(r.ctx, "load "+path, nil)
	th.SetLocal(fileKey, path)
	globals, err := r.script.files[path].prog.Init(th, r.predeclared)
	release()
	globals.Freeze()
	r.modules[path] = &module{globals, err}
	return globals, err
}

// load implements load() for a thread executing a file's top level. The
// targets were resolved, read and compiled when the script was loaded.
func (r *run) load(th *starlark.Thread, name string) (starlark.StringDict, error) {
	from, _ := th.Local(fileKey).(string)
	f := r.script.files[from]
	if f == nil || f.loads[name] == "" {
		return nil, fmt.Errorf("load(%q) outside a file's top level", name)
	}
	globals, err := r.exec(f.loads[name])
	if err != nil {
		// Starlark reports a failed load at the load statement; keep the
		// position in the loaded file, which is where the fix goes.
		return nil, loadFailure{r.scriptError(err)}
	}
	return globals, nil
}

// newThread makes a thread for calls in scope (nil while a file's top
// level runs) and registers it for cancellation; release unregisters it.
// ctx is the context of the goroutine the thread runs on, as the
// Scheduler gave it: the thread's waits go through it.
func (r *run) newThread(ctx context.Context, name string, scope lang.Scope) (th *starlark.Thread, release func()) {
	th = &starlark.Thread{Name: name, Load: r.load, Print: r.print}
	th.SetMaxExecutionSteps(r.script.maxSteps)
	th.OnMaxSteps = func(th *starlark.Thread) { th.Cancel(stepLimitReason(r.script.maxSteps)) }
	th.SetLocal(scopeKey, scope)
	th.SetLocal(ctxKey, ctx)
	r.threads.add(th)
	return th, func() { r.threads.remove(th) }
}

// scopeOf returns the scope of the calls made on th. On a thread that runs
// a file's top level there is none: the work belongs in main.
func scopeOf(th *starlark.Thread, fn string) (lang.Scope, error) {
	if s, ok := th.Local(scopeKey).(lang.Scope); ok && s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("%s() can only be called once main(args) runs, not while a file loads", fn)
}

// answer is what the engine reported through a lang.Done.
type answer struct {
	res json.RawMessage
	err error
}

// await starts a call through the engine and waits for its answer. The
// call's identity is fixed by start, on this thread, in program order. The
// thread then gives up its turn and queues for it again once the answer is
// in, so other branches run meanwhile, in the order turns explains; a
// replayed call's answer is in at once, and the thread queues behind the
// threads already waiting.
func (r *run) await(th *starlark.Thread, start func(ctx context.Context, done lang.Done)) (json.RawMessage, error) {
	ctx := ctxOf(th, r.ctx)
	w := r.turn.waiter()
	var a answer
	start(ctx, func(res json.RawMessage, err error) {
		a = answer{res, err}
		w.wake()
	})
	r.turn.pass()
	if err := w.waitOrStop(ctx); err != nil {
		// The answer may never come now; the thread still needs the
		// turn to unwind through Starlark code.
		w.wake()
		w.wait(ctx)
		return nil, r.stopped()
	}
	return a.res, a.err
}

// ctxOf returns the context of the goroutine th runs on, or def.
func ctxOf(th *starlark.Thread, def context.Context) context.Context {
	if ctx, ok := th.Local(ctxKey).(context.Context); ok {
		return ctx
	}
	return def
}

// print sends Starlark's print() to the run's log.
func (r *run) print(th *starlark.Thread, msg string) {
	scope, err := scopeOf(th, "print")
	if err != nil {
		scope = r.env.Root()
	}
	r.env.Log(scope, "info", msg)
}

// stopped is the error of a run whose ctx is done. It wraps both the cause
// the engine gave (pause, stop) and ctx.Err(), for errors.Is.
func (r *run) stopped() error {
	cause, err := context.Cause(r.ctx), r.ctx.Err()
	if cause == nil || cause == err {
		return fmt.Errorf("workflow script stopped: %w", err)
	}
	return fmt.Errorf("workflow script stopped: %w (%w)", cause, err)
}

// fail turns an error that ended main (or a file's top level) into the
// error Run returns.
func (r *run) fail(err error) error {
	if r.ctx.Err() != nil {
		return r.stopped()
	}
	return r.scriptError(err)
}

// threadSet holds the run's live threads, so that a stop can cancel each.
type threadSet struct {
	mu     sync.Mutex
	live   map[*starlark.Thread]struct{}
	reason string // set once the run is stopping
}

func (s *threadSet) add(th *starlark.Thread) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason != "" {
		th.Cancel(s.reason)
	}
	if s.live == nil {
		s.live = map[*starlark.Thread]struct{}{}
	}
	s.live[th] = struct{}{}
}

func (s *threadSet) remove(th *starlark.Thread) {
	s.mu.Lock()
	delete(s.live, th)
	s.mu.Unlock()
}

func (s *threadSet) cancelAll(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reason = reason
	for th := range s.live {
		th.Cancel(reason)
	}
}
