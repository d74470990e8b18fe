package jsvm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dop251/goja"

	"github.com/dynworkflow/dynworkflow/lang"
)

// maxCallStackSize bounds the script's call depth, so that runaway
// recursion ends in an error rather than in a goroutine that eats memory.
const maxCallStackSize = 10000

// A run is one execution of a script: a goja.Runtime and the event loop
// that owns it. Every field is touched only by the loop's goroutine, except
// inbox, through which the engine hands back the answers of calls.
type run struct {
	ctx    context.Context
	script *Script
	env    lang.Env
	vm     *goja.Runtime
	scopes scopes

	// inflight counts the calls started and not yet answered.
	inflight int
	inbox    *inbox

	// builtins are read before the script runs, so a script that
	// redefines JSON or Promise cannot break the host.
	builtins builtins

	// engineErrors maps the JS errors made from the engine's Go errors back
	// to them, so that errors.Is still finds them once the script rethrows.
	engineErrors map[*goja.Object]engineError

	// pending holds the calls in flight, by their promises.
	pending map[*goja.Object]*pending

	// batches holds the lang.Batch of the scopes of fan-out branches in
	// flight: a call made in one of them carries it (see fanout).
	batches map[lang.Scope]*lang.Batch

	// busy times the script's stretches of computing (see busy.go).
	busy busyClock

	// throws are the last values the script threw, and where (throws.go).
	throws []throwSite

	// enc encodes values for the engine (values.go), made at first use.
	enc *encoder
	// rangeErrorCtor is the script's RangeError, read before the script
	// runs: the script may replace the global one.
	rangeErrorCtor *goja.Object
}

func newRun(ctx context.Context, s *Script, env lang.Env) *run {
	return &run{
		ctx:          ctx,
		script:       s,
		env:          env,
		inbox:        newInbox(env.Scheduler().NewWake()),
		engineErrors: map[*goja.Object]engineError{},
		pending:      map[*goja.Object]*pending{},
		batches:      map[lang.Scope]*lang.Batch{},
	}
}

// run executes the script and waits for it: until its body has settled and
// no call it started is still in flight, or until ctx is done.
func (r *run) run() (json.RawMessage, error) {
	if r.ctx.Err() != nil {
		return nil, r.stopped()
	}
	r.vm = goja.New()
	r.vm.SetMaxCallStackSize(maxCallStackSize)
	// The engine stops a run (to pause it, or for good) by cancelling ctx.
	// Interrupt is the one Runtime method that is safe from another
	// goroutine; it breaks even a script stuck in while (true) {}.
	defer context.AfterFunc(r.ctx, func() { r.vm.Interrupt(context.Cause(r.ctx)) })()
	done := make(chan struct{})
	defer close(done)
	r.busy.running()
	go r.busy.watch(r.script.busyLimit, func(err error) { r.vm.Interrupt(err) }, done)

	if err := r.setup(); err != nil {
		return nil, r.fatal(err)
	}
	fn, err := r.vm.RunProgram(r.script.code)
	if err != nil {
		return nil, r.fatal(err)
	}
	body, _ := goja.AssertFunction(fn)
	r.scopes.reset(r.env.Root())
	v, err := body(goja.Undefined())
	if err != nil {
		return nil, r.fatal(err)
	}
	p, _ := v.Export().(*goja.Promise)
	if err := r.loop(p); err != nil {
		return nil, err
	}
	if p.State() == goja.PromiseStateRejected {
		return nil, r.thrown(p.Result())
	}
	out, notes, err := r.resultJSON(p.Result())
	var deep *lang.NestingError
	switch {
	case errors.As(err, &deep):
		deep.What = "the workflow's result"
		return nil, &lang.Error{File: r.script.src.path, Message: deep.Error(), Err: deep}
	case err != nil:
		return nil, &lang.Error{File: r.script.src.path, Message: "the workflow's result cannot be turned into JSON: " + r.describeThrownError(err),
			Hint: "return plain data: objects, arrays, strings, numbers, booleans and null"}
	}
	if len(notes) > 0 {
		r.env.Log(r.env.Root(), "warn", lang.NonFiniteNote(notes))
	}
	return out, nil
}

// loop hands the answers of calls to the script, in the order they came,
// until the body has settled and nothing is in flight. Settling a promise
// from outside JavaScript runs goja's job queue, so each answer runs every
// continuation it unblocks before the next one is handed over.
//
// A body that threw ends the script at once, whatever is still in flight:
// the run has failed. The engine lets the calls already under way finish
// and keeps their answers, and cancels those not yet started (see
// callpolicy.FinishesCallsUnderWay); the Node runtime aborts them all.
func (r *run) loop(body *goja.Promise) error {
	for body.State() == goja.PromiseStatePending || (r.inflight > 0 && body.State() != goja.PromiseStateRejected) {
		if r.inflight == 0 {
			return &lang.Error{File: r.script.src.path,
				Message: "the script is waiting for a promise that nothing will ever settle",
				Hint:    "await only promises made by agent(), parallel(), pipeline(), workflow() and checkpoint(); there are no timers"}
		}
		r.busy.idle()
		if err := r.inbox.wake.Wait(r.ctx); err != nil {
			return r.stopped()
		}
		r.busy.running()
		for _, settle := range r.inbox.take() {
			if r.ctx.Err() != nil {
				return r.stopped()
			}
			if body.State() == goja.PromiseStateRejected {
				return nil
			}
			if err := settle(); err != nil {
				return r.fatal(err)
			}
		}
	}
	return nil
}

// start starts a call through the engine, on the loop so that the engine
// numbers calls in program order, and returns a promise of its answer. The
// engine answers from another goroutine; the answer waits in the inbox
// until the loop settles the promise with it.
func (r *run) start(site []goja.StackFrame, call func(done lang.Done)) goja.Value {
	p, resolve, reject := r.vm.NewPromise()
	obj := r.vm.ToValue(p).(*goja.Object)
	c := &pending{}
	r.pending[obj] = c
	r.inflight++
	var once sync.Once
	call(func(res json.RawMessage, err error) {
		once.Do(func() {
			r.inbox.post(func() error {
				r.inflight--
				delete(r.pending, obj)
				if err == nil {
					v, jerr := r.fromJSON(res)
					if jerr == nil {
						return c.settle(resolve, v, true)
					}
					err = fmt.Errorf("the engine answered with invalid JSON: %s", r.describeThrownError(jerr))
				}
				return c.settle(reject, r.engineError(err, site), false)
			})
		})
	})
	return obj
}

// pending is a call in flight. parallel() and pipeline() wait for the
// promises their branches return; when a branch returns a call's own
// promise, as in () => agent(...), they watch the call here instead of
// through promise reactions, which saves most of the host's cost per call.
type pending struct {
	watchers []watcher
}

type watcher struct{ fulfilled, rejected func(goja.Value) }

// settle settles the call's promise with v, then tells the watchers.
// Watchers run on the loop, outside any JavaScript frame, so an
// uncatchable error they raise (an interrupt) is caught here and returned.
func (c *pending) settle(settle func(any) error, v goja.Value, ok bool) (err error) {
	if err := settle(v); err != nil {
		return err
	}
	defer func() {
		if x := recover(); x != nil {
			e, isErr := x.(error)
			if !isErr {
				panic(x)
			}
			err = e
		}
	}()
	for _, w := range c.watchers {
		if ok {
			w.fulfilled(v)
		} else {
			w.rejected(v)
		}
	}
	return nil
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
