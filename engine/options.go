package engine

import (
	"fmt"
	"math"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Options are the limits and defaults of one run. They are journaled with
// the run, and a resume may change them (raise a budget, say).
type Options struct {
	// Executor runs agent calls that do not name one.
	Executor string `json:"executor"`
	// ExecutorSource says who chose Executor: ExecutorDefault when nobody
	// did (the answers are then simulated without the user having asked
	// for it), else "flag", "request", "project config" or "user config".
	ExecutorSource string `json:"executorSource,omitempty"`
	// Model is the model of the calls on Executor that name none; calls on
	// other executors use their configured model (a model name belongs to
	// one provider). Empty leaves it to the executor's configuration.
	Model string `json:"model,omitempty"`
	// Permissions is the policy of the calls that set none (through their
	// permissions or agentType option); empty leaves it to the executor's
	// configuration, whose own default is workspace-write.
	Permissions executors.Permissions `json:"permissions,omitempty"`
	// Concurrency caps agent calls running at once.
	Concurrency int `json:"concurrency"`
	// MaxAgents caps agent() calls per run, nested workflows included.
	MaxAgents int `json:"maxAgents"`
	// MaxItems caps the items of one parallel() or pipeline() call.
	MaxItems int `json:"maxItems"`
	// TokenBudget is a hard ceiling on input+output tokens; 0 means none.
	TokenBudget int64 `json:"tokenBudget,omitempty"`
	// AgentRetries is how many times a transient failure is retried
	// (callpolicy.DefaultAgentRetries unless set).
	AgentRetries int `json:"agentRetries"`
	// AgentTimeout bounds one attempt of one agent call; 0 means none.
	AgentTimeout time.Duration `json:"agentTimeout,omitempty"`
	// IdleTimeout stops an attempt that makes no progress for that long
	// (callpolicy.DefaultIdleTimeout unless an executor's configuration or
	// the call says otherwise); negative turns it off.
	IdleTimeout time.Duration `json:"idleTimeout,omitempty"`
	// UnreachableFor is how long an executor may fail to reach its model
	// endpoint before the run pauses (callpolicy.DefaultUnreachableFor
	// unless set). Tests shorten it; there is no flag.
	UnreachableFor time.Duration `json:"unreachableFor,omitempty"`
	// SchemaAttempts is how many answers a schema call may give before it
	// throws: the first plus the repairs.
	SchemaAttempts int `json:"schemaAttempts"`
	// RetryBackoff is the first wait before a retry; it doubles per retry
	// (see callpolicy.Backoff).
	RetryBackoff time.Duration `json:"retryBackoff,omitempty"`
	// Strict fails the run at the first error a parallel() branch or
	// pipeline() item throws, instead of making that branch null (see
	// ScriptError); a script's meta.strict does the same.
	Strict bool `json:"strict,omitempty"`
	// MaxCostUSD is a hard ceiling on what the run may cost, in dollars;
	// 0 means none (or the script meta's maxCost). See callpolicy's
	// reserve: a call starts only while what was spent, plus what the
	// calls running are expected to cost, plus its own expected cost,
	// stay within it; otherwise the run pauses.
	MaxCostUSD float64 `json:"maxCostUsd,omitempty"`
	// ConfirmAboveUSD makes a run whose forecast exceeds it ask before its
	// first agent (a checkpoint at ConfirmPath); 0 means never.
	ConfirmAboveUSD float64 `json:"confirmAboveUsd,omitempty"`
	// Routes send calls to other models by label pattern or phase, first
	// match wins: the run's own, then the project's and the user's.
	Routes []callpolicy.Route `json:"routes,omitempty"`
	// Overrides are a fork's changes to single calls.
	Overrides []callpolicy.Override `json:"overrides,omitempty"`
}

// CallLimits are the options the call policy applies to each call.
func (o Options) CallLimits() callpolicy.Limits {
	return callpolicy.Limits{
		Executor: o.Executor, Model: o.Model, Permissions: o.Permissions,
		MaxAgents: o.MaxAgents, MaxItems: o.MaxItems, TokenBudget: o.TokenBudget,
		AgentRetries: o.AgentRetries, AgentTimeout: o.AgentTimeout, SchemaAttempts: o.SchemaAttempts,
		RetryBackoff: o.RetryBackoff, IdleTimeout: o.IdleTimeout, UnreachableFor: o.UnreachableFor,
		MaxCostUSD: o.MaxCostUSD, Routes: o.Routes, Overrides: o.Overrides,
	}
}

// Default limits, as in Claude Code's Workflow tool.
const (
	DefaultMaxAgents      = 1000
	DefaultMaxItems       = 4096
	DefaultSchemaAttempts = 3
	DefaultAgentRetries   = callpolicy.DefaultAgentRetries
	DefaultRetryBackoff   = callpolicy.DefaultRetryBackoff
	maxConcurrency        = 256
)

// DefaultConcurrency is how many agent calls run at once when the run does
// not say. An agent call mostly waits on the network, so the count of CPUs
// is no guide (min(16, CPUs-2) gave 1 on a 2-CPU machine); what bounds it
// is memory. Measured against the fake model server, one call's process
// tree peaks at 180-215 MB for codex (its Node launcher and native
// binary), 180-390 MB for claude (the high end in a tool-using turn) and
// 175-190 MB for pi: 8 at once is 1.5 to 3 GB of RSS, less in fact since
// their code pages are shared, which a developer machine has. The seed's
// runtime uses 8 as well.
const DefaultConcurrency = 8

// ExecutorDefault is the ExecutorSource of a run whose executor nobody
// chose.
const ExecutorDefault = "default"

// DefaultOptions returns the options of a run that sets none.
func DefaultOptions() Options {
	return Options{
		Executor:       "simulate",
		ExecutorSource: ExecutorDefault,
		Concurrency:    DefaultConcurrency,
		MaxAgents:      DefaultMaxAgents,
		MaxItems:       DefaultMaxItems,
		SchemaAttempts: DefaultSchemaAttempts,
		AgentRetries:   DefaultAgentRetries,
		RetryBackoff:   DefaultRetryBackoff,
	}
}

// Validate reports the first option out of range, naming the flag that sets it.
func (o Options) Validate() error {
	switch {
	case o.Executor == "":
		return fmt.Errorf("no executor: pass --executor (simulate, codex, claude-code, pi)")
	case o.Concurrency < 1 || o.Concurrency > maxConcurrency:
		return fmt.Errorf("--concurrency must be between 1 and %d, not %d", maxConcurrency, o.Concurrency)
	case o.MaxAgents < 1:
		return fmt.Errorf("--max-agents must be at least 1, not %d", o.MaxAgents)
	case o.MaxItems < 1:
		return fmt.Errorf("--max-items must be at least 1, not %d", o.MaxItems)
	case o.TokenBudget < 0:
		return fmt.Errorf("--token-budget must be positive (or 0 for none), not %d", o.TokenBudget)
	case o.AgentRetries < 0 || o.AgentRetries > 10:
		return fmt.Errorf("--agent-retries must be between 0 and 10, not %d", o.AgentRetries)
	case o.AgentTimeout < 0 || o.AgentTimeout > lang.MaxTimeoutMs*time.Millisecond:
		return fmt.Errorf("--agent-timeout-ms must be a number of milliseconds from 1 to %d (30 days), or 0 for none", int64(lang.MaxTimeoutMs))
	case o.IdleTimeout > lang.MaxTimeoutMs*time.Millisecond:
		return fmt.Errorf("--idle-timeout must be at most 30 days (or 0 for none), not %s", o.IdleTimeout)
	case o.UnreachableFor < 0:
		return fmt.Errorf("the unreachable limit must not be negative")
	case o.SchemaAttempts < 1 || o.SchemaAttempts > 10:
		return fmt.Errorf("schema attempts must be between 1 and 10, not %d", o.SchemaAttempts)
	case o.RetryBackoff < 0:
		return fmt.Errorf("retry backoff must not be negative")
	case !(o.MaxCostUSD >= 0) || math.IsInf(o.MaxCostUSD, 0):
		return fmt.Errorf("--max-cost must be a number of dollars, 0 or more (0: none), not %v", o.MaxCostUSD)
	case !(o.ConfirmAboveUSD >= 0) || math.IsInf(o.ConfirmAboveUSD, 0):
		return fmt.Errorf("--confirm-above must be a number of dollars, 0 or more (0: never ask), not %v", o.ConfirmAboveUSD)
	}
	for _, r := range o.Routes {
		if err := r.Check(); err != nil {
			return fmt.Errorf("--route: %w", err)
		}
	}
	for _, ov := range o.Overrides {
		if err := ov.Check(); err != nil {
			return err
		}
	}
	if _, err := executors.ParsePermissions(string(o.Permissions)); err != nil {
		return fmt.Errorf("--permissions: %w", err)
	}
	return nil
}

// SimulatedByDefault reports a run whose answers are simulated although
// nobody asked for the simulated executor by name: worth saying on every
// screen that shows the run.
func (o Options) SimulatedByDefault() bool {
	return o.Executor == "simulate" && o.ExecutorSource == ExecutorDefault
}
