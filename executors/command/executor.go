package command

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/proc"
)

// Executor runs a command template per call. It is safe for concurrent use.
type Executor struct {
	agentcli.Base
	spec Spec
}

var _ executors.Executor = (*Executor)(nil)

// Kind is the kind of every command executor's definition.
const Kind = "command"

// New returns the executor of spec; cfg.Binary and cfg.Args are taken
// from the template.
func New(spec Spec, cfg agentcli.Config) *Executor {
	cfg.Binary, cfg.Args = spec.Words[0], nil
	fixes := agentcli.Fixes{
		Install: fmt.Sprintf("install %s, or fix the template of command executor %q (--command-executor, or commands in .dynworkflow/executors.json)", spec.Words[0], spec.Name),
		Login:   fmt.Sprintf("log %s in, or give it the key it needs (executors.%s.env in .dynworkflow/executors.json)", spec.Words[0], spec.Name),
		Model:   fmt.Sprintf("pick a model %s knows: agent({model}), --model, or executors.%s.model", spec.Words[0], spec.Name),
	}
	return &Executor{Base: agentcli.NewBase(spec.Name, Kind, spec.Words[0], fixes, cfg), spec: spec}
}

// Describe is the executor's definition, its template included, so that
// a resumed run can rebuild it.
func (e *Executor) Describe() executors.Definition {
	d := e.Base.Describe()
	d.Binary, d.Command = "", e.spec.Words
	return d
}

// Run runs the template for one call.
func (e *Executor) Run(ctx context.Context, req executors.Request, observe executors.Observer) (executors.Result, error) {
	req = e.WithDefaults(req)
	vals := map[string]string{"prompt": req.Prompt, "model": req.Model, "effort": req.Effort,
		"schema": string(req.Schema), "dir": req.Dir, "schema_file": "",
		"permissions": string(req.Permissions.Or(executors.WorkspaceWrite))}
	if e.spec.uses("{schema_file}") && len(req.Schema) > 0 {
		path, cleanup, err := agentcli.SchemaFile(req.Schema)
		if err != nil {
			return executors.Result{}, &executors.Error{Class: executors.Terminal, Message: e.Name(), Err: err}
		}
		defer cleanup()
		vals["schema_file"] = path
	}
	if e.spec.uses("{prompt_file}") {
		// A file only we can read, unlike an argument (see PromptInArgs).
		path, cleanup, err := agentcli.PrivateFile("prompt.txt", []byte(req.Prompt))
		if err != nil {
			return executors.Result{}, &executors.Error{Class: executors.Infrastructure, Message: e.Name(), Err: err}
		}
		defer cleanup()
		vals["prompt_file"] = path
	}
	args, err := e.spec.Args(vals)
	if err != nil {
		return executors.Result{}, &executors.Error{Class: executors.Terminal, Message: e.Name(), Err: err}
	}
	call := agentcli.Call{Args: args, Dir: req.Dir}
	if !e.spec.uses("{prompt}") && !e.spec.uses("{prompt_file}") {
		call.Stdin = []byte(req.Prompt)
	}
	return e.Base.Run(ctx, req, call, &parser{name: e.Name(), req: req, rec: agentcli.NewRecorder(observe)})
}

// maxOutput bounds the standard output kept as the answer.
const maxOutput = 16 << 20

type parser struct {
	name string
	req  executors.Request
	rec  *agentcli.Recorder
	out  strings.Builder
}

func (p *parser) Line(line []byte) {
	// Every line the command prints shows it is alive; what it prints is
	// its answer, not history.
	p.rec.Heartbeat()
	if p.out.Len()+len(line) > maxOutput {
		return
	}
	if p.out.Len() > 0 {
		p.out.WriteByte('\n')
	}
	p.out.Write(line)
}

func (p *parser) Partial() executors.Result {
	return executors.Result{Model: p.req.Model, Provider: p.name, History: p.rec.History(), Usage: p.rec.Usage()}
}

// output is the JSON form of an answer.
type output struct {
	Text       *string         `json:"text"`
	Structured json.RawMessage `json:"structured"`
	Model      string          `json:"model"`
	Provider   string          `json:"provider"`
	Usage      *struct {
		InputTokens       int64   `json:"input_tokens"`
		CachedInputTokens int64   `json:"cached_input_tokens"`
		OutputTokens      int64   `json:"output_tokens"`
		CostUSD           float64 `json:"cost_usd"`
	} `json:"usage"`
	Error *struct {
		Class   string `json:"class"`
		Message string `json:"message"`
		// RetryAfterMs is, for a rate limit, how long until the quota
		// resets.
		RetryAfterMs int64 `json:"retry_after_ms"`
	} `json:"error"`
}

// exTempFail is sysexits' EX_TEMPFAIL: try again later.
const exTempFail = 75

func (p *parser) Finish(ex proc.Exit) (executors.Result, error) {
	res := p.Partial()
	text := strings.TrimSpace(p.out.String())
	var o output
	isJSON := strings.HasPrefix(text, "{") && json.Unmarshal([]byte(text), &o) == nil &&
		(o.Text != nil || o.Structured != nil || o.Usage != nil || o.Error != nil)
	if isJSON {
		if o.Usage != nil {
			p.rec.SetUsage(executors.Usage{InputTokens: o.Usage.InputTokens, CachedInputTokens: o.Usage.CachedInputTokens,
				OutputTokens: o.Usage.OutputTokens, CostUSD: o.Usage.CostUSD})
			res.Usage = p.rec.Usage()
		}
		if o.Model != "" {
			res.Model = o.Model
		}
		if o.Provider != "" {
			res.Provider = o.Provider
		}
		if o.Error != nil {
			return res, &executors.Error{Class: classOf(o.Error.Class), Message: p.name + ": " + o.Error.Message,
				RetryAfter: time.Duration(max(0, o.Error.RetryAfterMs)) * time.Millisecond}
		}
	}
	switch {
	case ex.Code == exTempFail:
		e := agentcli.ExitError(p.name, ex).(*executors.Error)
		e.Class = executors.Transient
		return res, e
	case !ex.Success():
		e := agentcli.ExitError(p.name, ex).(*executors.Error)
		e.Class = executors.Terminal
		return res, e
	}
	if isJSON {
		if o.Text != nil {
			text = *o.Text
		}
		if len(o.Structured) > 0 && string(o.Structured) != "null" {
			res.Structured = o.Structured
		}
	}
	res.Text = text
	p.rec.Message("assistant", text)
	res.History = p.rec.History()
	return res, nil
}

func classOf(s string) executors.Class {
	switch s {
	case "transient":
		return executors.Transient
	case "rate-limited", "rate_limited", "ratelimited":
		return executors.RateLimited
	}
	return executors.Terminal
}
