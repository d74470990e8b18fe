package jsvm

import (
	"encoding/json"
	"errors"

	"github.com/dop251/goja"

	"github.com/dynworkflow/dynworkflow/lang"
)

// The primitives that take time. Each checks its arguments, where a mistake
// throws at the line that made it, and starts its call through the engine
// at once, on the loop, in program order: the engine fixes the call's
// identity then. The answer comes later, through run.start.

// agent(prompt, opts?) runs one agent and returns a promise of its result.
func (r *run) agent(call goja.FunctionCall) goja.Value {
	prompt := call.Argument(0)
	if !goja.IsString(prompt) {
		r.typeError("agent(): the prompt must be a string, not %s", kind(prompt))
	}
	opts, err := lang.DecodeAgentOptions(r.optionsJSON("agent()", call.Argument(1)))
	if err != nil {
		r.throw(err)
	}
	scope, text := r.scopes.current, prompt.String()
	ctx := r.ctx
	if b := r.batches[scope]; b != nil {
		ctx = lang.WithBatch(ctx, b)
	}
	return r.start(r.site(), func(done lang.Done) { r.env.Agent(ctx, scope, text, opts, done) })
}

// checkpoint(prompt, opts?) asks a human and returns a promise of the answer.
func (r *run) checkpoint(call goja.FunctionCall) goja.Value {
	prompt := call.Argument(0)
	if !goja.IsString(prompt) {
		r.typeError("checkpoint(): the prompt must be a string, not %s", kind(prompt))
	}
	req, err := lang.DecodeCheckpoint(prompt.String(), r.optionsJSON("checkpoint()", call.Argument(1)))
	if err != nil {
		r.throw(err)
	}
	scope := r.scopes.current
	return r.start(r.site(), func(done lang.Done) { r.env.Checkpoint(r.ctx, scope, req, done) })
}

// workflow(nameOrPath, args?) runs another workflow as a child and returns
// a promise of its result. Claude Code also accepts { scriptPath }, and
// { name }, so those are read too.
func (r *run) workflow(call goja.FunctionCall) goja.Value {
	ref := call.Argument(0)
	if obj, ok := ref.(*goja.Object); ok && kind(ref) == "an object" {
		for _, key := range []string{"scriptPath", "name"} {
			if v := obj.Get(key); v != nil && goja.IsString(v) {
				ref = v
				break
			}
		}
	}
	if !goja.IsString(ref) || ref.String() == "" {
		r.typeError("workflow(): the first argument must be a workflow name or a script path, not %s", kind(ref))
	}
	var args json.RawMessage
	if a := call.Argument(1); !goja.IsUndefined(a) {
		raw, err := r.toJSON(a)
		var deep *lang.NestingError
		if errors.As(err, &deep) {
			deep.What = "workflow(): the args"
			r.throwNesting(deep)
		}
		if err != nil {
			r.typeError("workflow(): the args cannot be turned into JSON: %s", r.describeThrownError(err))
		}
		args = raw
	}
	scope, name := r.scopes.current, ref.String()
	return r.start(r.site(), func(done lang.Done) { r.env.Workflow(r.ctx, scope, name, args, done) })
}
