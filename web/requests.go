package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// StartRequest is the body of POST /api/runs. Exactly one of Script, Name
// and Path says what to run.
type StartRequest struct {
	// Script is the text of a script; Filename (default
	// "inline.workflow.js") picks its language and names it in errors.
	Script   string `json:"script,omitempty"`
	Filename string `json:"filename,omitempty"`
	// Name is a saved workflow's name.
	Name string `json:"name,omitempty"`
	// Path is a script file, absolute or relative to the project.
	Path string `json:"path,omitempty"`
	// Args are the script's args.
	Args json.RawMessage `json:"args,omitempty"`
	// Options change the defaults of the run's limits.
	Options *RunOptions `json:"options,omitempty"`
	// RequestID makes the start idempotent: a retry with the same id gets
	// the run the first try started.
	RequestID string `json:"requestId,omitempty"`
}

// ResumeRequest is the optional body of POST /api/runs/{id}/resume. A
// script (text or path) edits the run; args and options replace its own.
type ResumeRequest struct {
	Script   string          `json:"script,omitempty"`
	Filename string          `json:"filename,omitempty"`
	Path     string          `json:"path,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	Options  *RunOptions     `json:"options,omitempty"`
}

// RunOptions are the options a request may set; unset ones keep their
// default (the server's: what serve was started with), or on resume the
// run's. They are read under the Node runtime's names too (see
// UnmarshalJSON), so a client written against its README works unchanged.
type RunOptions struct {
	Executor *string `json:"executor,omitempty"`
	// Model is the model of calls on the run's executor that name none.
	Model *string `json:"model,omitempty"`
	// Permissions is the policy of calls that set none: workspace-write,
	// read-only or full-access.
	Permissions    *string `json:"permissions,omitempty"`
	Concurrency    *int    `json:"concurrency,omitempty"`
	MaxAgents      *int    `json:"maxAgents,omitempty"`
	MaxItems       *int    `json:"maxItems,omitempty"`
	AgentRetries   *int    `json:"agentRetries,omitempty"`
	AgentTimeoutMs *int64  `json:"agentTimeoutMs,omitempty"`
	// IdleTimeoutMs stops an attempt that shows no progress for that
	// long; 0 or null turns the idle timeout off.
	IdleTimeoutMs *int64 `json:"idleTimeoutMs,omitempty"`
	TokenBudget   *int64 `json:"tokenBudget,omitempty"`
	// Strict fails the run at the first error the script throws in a
	// parallel() branch or pipeline() item, instead of making it null.
	Strict *bool `json:"strict,omitempty"`
	// MaxCost is the dollar cap (null or 0: none); ConfirmAbove makes a
	// run whose forecast passes it ask before its first agent (a
	// checkpoint at /confirm-cost).
	MaxCost      *float64 `json:"maxCost,omitempty"`
	ConfirmAbove *float64 `json:"confirmAbove,omitempty"`
	// Routes send calls to other models, each "SELECTOR=MODEL" or
	// {match, phase, model, effort, executor}; they replace the run's own
	// routes and come before the project's and the user's.
	Routes []json.RawMessage `json:"routes,omitempty"`
	routes []callpolicy.Route
}

// runOptionNames are the keys of an options object: ours, then the Node
// runtime's where they differ.
var runOptionNames = []string{"executor", "concurrency", "maxAgents", "maxItems", "agentRetries", "agentTimeoutMs", "idleTimeoutMs", "tokenBudget", "model", "permissions", "strict",
	"maxCost", "confirmAbove", "routes", "defaultExecutor", "autoResume"}

// UnmarshalJSON reads an options object. The Node runtime's names are
// accepted: defaultExecutor for executor, and autoResume, which changes
// nothing here (a run paused by a rate limit waits for a resume). null
// for agentTimeoutMs or tokenBudget means none, as there. Any other key is
// an error naming the options, so that a typo is not silently a default.
func (o *RunOptions) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return fmt.Errorf("options must be an object: %w", err)
	}
	var names []string
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(runOptionNames, name) {
			return fmt.Errorf("unknown option %q; the options are %s", name, strings.Join(runOptionNames, ", "))
		}
	}
	*o = RunOptions{}
	decode := func(name string, dst any) error {
		v, ok := fields[name]
		if !ok {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("option %s: %w", name, err)
		}
		return nil
	}
	// none reads an option where null means none: zero, which is none.
	none := func(name string, dst **int64) error {
		if v, ok := fields[name]; ok && string(bytes.TrimSpace(v)) == "null" {
			*dst = new(int64)
			return nil
		}
		return decode(name, dst)
	}
	noneUSD := func(name string, dst **float64) error {
		if v, ok := fields[name]; ok && string(bytes.TrimSpace(v)) == "null" {
			*dst = new(float64)
			return nil
		}
		return decode(name, dst)
	}
	var autoResume *bool
	err := errors.Join(decode("executor", &o.Executor), decode("model", &o.Model), decode("permissions", &o.Permissions), decode("concurrency", &o.Concurrency), decode("maxAgents", &o.MaxAgents),
		decode("maxItems", &o.MaxItems), decode("agentRetries", &o.AgentRetries), none("agentTimeoutMs", &o.AgentTimeoutMs),
		none("idleTimeoutMs", &o.IdleTimeoutMs),
		none("tokenBudget", &o.TokenBudget), decode("strict", &o.Strict), decode("autoResume", &autoResume), noneUSD("maxCost", &o.MaxCost),
		noneUSD("confirmAbove", &o.ConfirmAbove), decode("routes", &o.Routes))
	if err != nil {
		return err
	}
	for i, raw := range o.Routes {
		r, err := callpolicy.ParseRouteJSON(raw)
		if err != nil {
			return fmt.Errorf("option routes[%d]: %w", i, err)
		}
		o.routes = append(o.routes, r)
	}
	var def *string
	if err := decode("defaultExecutor", &def); err != nil {
		return err
	}
	if def != nil {
		if o.Executor != nil && *o.Executor != *def {
			return fmt.Errorf("executor %q and defaultExecutor %q disagree; give one", *o.Executor, *def)
		}
		o.Executor = def
	}
	return nil
}

// Apply writes the options set into opts.
func (o *RunOptions) Apply(opts *engine.Options) {
	if o == nil {
		return
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	if o.Executor != nil {
		opts.Executor, opts.ExecutorSource = *o.Executor, "request"
	}
	if o.Model != nil {
		opts.Model = *o.Model
	}
	if o.Permissions != nil {
		opts.Permissions = executors.Permissions(*o.Permissions)
	}
	set(&opts.Concurrency, o.Concurrency)
	set(&opts.MaxAgents, o.MaxAgents)
	set(&opts.MaxItems, o.MaxItems)
	set(&opts.AgentRetries, o.AgentRetries)
	if o.AgentTimeoutMs != nil {
		// Checked before the conversion, which overflows past 292 years: a
		// value out of range becomes one Options.Validate refuses, with
		// the message that names the flag and the range.
		if ms := *o.AgentTimeoutMs; ms >= 0 && ms <= lang.MaxTimeoutMs {
			opts.AgentTimeout = time.Duration(ms) * time.Millisecond
		} else {
			opts.AgentTimeout = -1
		}
	}
	if o.IdleTimeoutMs != nil {
		switch ms := *o.IdleTimeoutMs; {
		case ms == 0:
			opts.IdleTimeout = -1 // off
		case ms > 0 && ms <= lang.MaxTimeoutMs:
			opts.IdleTimeout = time.Duration(ms) * time.Millisecond
		default:
			// Out of range: a value Options.Validate refuses, naming the flag.
			opts.IdleTimeout = lang.MaxTimeoutMs*time.Millisecond + 1
		}
	}
	if o.TokenBudget != nil {
		opts.TokenBudget = *o.TokenBudget
	}
	if o.Strict != nil {
		opts.Strict = *o.Strict
	}
	if o.MaxCost != nil {
		opts.MaxCostUSD = *o.MaxCost
	}
	if o.ConfirmAbove != nil {
		opts.ConfirmAboveUSD = *o.ConfirmAbove
	}
	if o.Routes != nil {
		routes := o.routes
		if routes == nil {
			// Built here rather than decoded (the CLI's own options).
			for _, raw := range o.Routes {
				if r, err := callpolicy.ParseRouteJSON(raw); err == nil {
					routes = append(routes, r)
				}
			}
		}
		opts.Routes = callpolicy.WithRunRoutes(opts.Routes, routes)
	}
}

// StartResponse answers POST /api/runs and POST /api/runs/{id}/resume.
type StartResponse struct {
	RunID  string `json:"runId"`
	Status string `json:"status"`
	// Sequence is the event sequence just before the run started: stream
	// /api/events?since=<sequence>&runId=<runId> to follow it from its
	// first event.
	Sequence int64 `json:"sequence"`
	// Epoch is the execution started: 0 for a new run, +1 per resume. Its
	// run.status event carries the same epoch.
	Epoch int `json:"epoch"`
}

// ResumeResponse answers POST /api/runs/{id}/resume: the run started,
// and ok and action as the Node runtime's client reads them.
type ResumeResponse struct {
	StartResponse
	OK     bool   `json:"ok"`
	Action string `json:"action"`
}

// ActionResponse answers pause, stop and delete.
type ActionResponse struct {
	OK     bool   `json:"ok"`
	RunID  string `json:"runId"`
	Action string `json:"action"`
}

// RespondRequest is the body of POST /api/checkpoints/{id}/respond.
type RespondRequest struct {
	Value json.RawMessage `json:"value"`
}

// readBody reads a JSON body into v. An empty body leaves v alone when
// optional, and is a 400 otherwise. It returns the raw bytes.
func readBody(c echo.Context, v any, optional bool) ([]byte, error) {
	req := c.Request()
	if ct := req.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, newAPIError(http.StatusUnsupportedMediaType, codeUnsupportedMed, "send the body as application/json, not %q", ct)
		}
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, newAPIError(http.StatusRequestEntityTooLarge, codeTooLarge, "the body is larger than %d bytes", tooBig.Limit)
		}
		return nil, newAPIError(http.StatusBadRequest, codeBadRequest, "reading the body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return body, nil
		}
		return nil, newAPIError(http.StatusBadRequest, codeBadRequest, "the request needs a JSON body")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, newAPIError(http.StatusBadRequest, codeBadRequest, "the body is not valid JSON: %v", err)
		}
		return nil, newAPIError(http.StatusBadRequest, codeBadRequest, "the body does not fit this request: %v", err)
	}
	if dec.More() {
		return nil, newAPIError(http.StatusBadRequest, codeBadRequest, "the body holds more than one JSON value")
	}
	return body, nil
}
