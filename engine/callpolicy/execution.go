package callpolicy

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Limits are the options of a run that decide what its calls do.
type Limits struct {
	// Executor runs the calls that name none; Model is the model of the
	// calls on it that name none; Permissions is the policy of the calls
	// that set none.
	Executor    string
	Model       string
	Permissions executors.Permissions
	// MaxAgents caps agent() calls per execution, nested workflows
	// included; MaxItems the items of one parallel() or pipeline().
	MaxAgents int
	MaxItems  int
	// TokenBudget is a ceiling on input+output tokens; 0 means none.
	TokenBudget int64
	// AgentRetries is how many times a transient failure is retried.
	AgentRetries int
	// AgentTimeout bounds one attempt of a call; 0 means none.
	AgentTimeout time.Duration
	// IdleTimeout stops an attempt that makes no progress for that long
	// (see liveness.go); 0 leaves it to the executor's configuration and
	// DefaultIdleTimeout, and a negative one turns it off.
	IdleTimeout time.Duration
	// UnreachableFor is how long an executor may fail to reach its model
	// endpoint before the run pauses; 0 means DefaultUnreachableFor.
	UnreachableFor time.Duration
	// SchemaAttempts is how many answers a schema call may give.
	SchemaAttempts int
	// RetryBackoff is the first wait before a retry (see Backoff).
	RetryBackoff time.Duration
	// MaxCostUSD is the dollar cap; 0 means none (see reserve).
	MaxCostUSD float64
	// Cost prices calls: the price table, and what calls are expected to
	// use. nil prices nothing, and the cap then sees only the dollars CLIs
	// report.
	Cost *cost.Model
	// Routes send calls to other models (see Route), first match wins.
	Routes []Route
	// Overrides change single calls of a fork (see Override).
	Overrides []Override
}

func (l Limits) unreachableFor() time.Duration {
	if l.UnreachableFor > 0 {
		return l.UnreachableFor
	}
	return DefaultUnreachableFor
}

// Schema is a compiled JSON Schema of an agent() call.
type Schema interface {
	// Canonical is the schema with sorted keys, as fingerprints hash it.
	Canonical() []byte
	// Validate parses an answer as JSON and checks it against the schema.
	Validate(answer string) (json.RawMessage, error)
}

// Host is what the policy asks of the backend that runs an execution: the
// things that are the backend's own.
type Host interface {
	// Defaults is the configuration of the executor called name, which
	// fills what a call and its run leave unset.
	Defaults(executor string) executors.Defaults
	// Schema compiles an agent() call's schema; nil for none.
	Schema(raw json.RawMessage) (Schema, error)
	// LimitHit tells the user the run ran into a limit: "agents",
	// "items" or "budget".
	LimitHit(limit, msg string)
	// Warn tells the user something about a call of scope sc.
	Warn(sc *Scope, msg string)
}

// Counts are an execution's calls so far, as the run's stats show them.
type Counts struct {
	// Replayed calls were answered from an earlier execution.
	Replayed atomic.Int64
	// Live calls ran and finished; a backend counts one once its answer
	// is durable.
	Live atomic.Int64
	// Failed calls ended without an answer.
	Failed atomic.Int64
	// Retried counts the attempts that ran again after a failure: a
	// transient one, a fault of ours, an answer that broke its schema.
	Retried atomic.Int64
}

// Execution is the call policy of one execution of a run: every call of
// the execution, on either backend, goes through it.
type Execution struct {
	runID  string
	epoch  int
	limits Limits
	ledger *Ledger
	host   Host

	agents  atomic.Int64 // agent() calls made, for the cap
	spent   atomic.Int64 // tokens as the budget sees them
	ignored sync.Map     // agent() option keys warned about

	// The dollar cap's account (spend.go).
	costMu    sync.Mutex
	spentUSD  float64 // what the run has cost, earlier executions included
	heldUSD   float64 // what the calls running now are expected to cost
	holding   int     // the calls running now
	capReason string  // why the cap refused a call, once it has

	// Counts are the execution's calls so far.
	Counts Counts
}

// NewExecution returns the policy of execution epoch of run runID. ledger
// holds what the earlier executions did; nil for the first.
func NewExecution(runID string, epoch int, limits Limits, ledger *Ledger, host Host) *Execution {
	if ledger == nil {
		ledger = NewLedger()
	}
	return &Execution{runID: runID, epoch: epoch, limits: limits, ledger: ledger, host: host}
}

// Limits are the run's options the execution applies.
func (x *Execution) Limits() Limits { return x.limits }

// Ledger is what the earlier executions did.
func (x *Execution) Ledger() *Ledger { return x.ledger }

// Agents is how many agent() calls the execution made, those over the cap
// included.
func (x *Execution) Agents() int64 { return x.agents.Load() }

// SpendTokens counts tokens against the budget that no call of this
// execution spent: on Temporal, what the executions an execution
// continues counted.
func (x *Execution) SpendTokens(tokens int64) { x.spent.Add(tokens) }

// Spent is the tokens the budget counts so far: what the execution's live
// attempts cost, and what its replayed answers cost when they were made.
func (x *Execution) Spent() int64 { return x.spent.Load() }

// Open opens the n scopes of one parallel() (kind "par") or pipeline()
// ("pipe") call under sc, or refuses more items than the cap. fn names
// the primitive for the error.
func (x *Execution) Open(sc *Scope, kind, fn string, n int) ([]*Scope, error) {
	base := sc.prefix + "/" + sc.Next(kind)
	if limit := x.limits.MaxItems; n > limit {
		x.host.LimitHit("items", fmt.Sprintf("%s got %d items, over the cap of %d per call", fn, n, limit))
		return nil, ItemLimitError(fn, n, limit)
	}
	return sc.open(base, n), nil
}

// checkBudget refuses a live call once the budget is spent.
func (x *Execution) checkBudget() error {
	budget := x.limits.TokenBudget
	if budget <= 0 {
		return nil
	}
	if spent := x.spent.Load(); spent >= budget {
		x.host.LimitHit("budget", fmt.Sprintf("%d of %d tokens spent", spent, budget))
		return BudgetError(spent, budget)
	}
	return nil
}

// Budget is the script's budget object.
func (x *Execution) Budget() lang.Budget { return budgetView{x} }

type budgetView struct{ x *Execution }

func (b budgetView) Total() (int64, bool) {
	return b.x.limits.TokenBudget, b.x.limits.TokenBudget > 0
}

func (b budgetView) Spent() int64 { return b.x.spent.Load() }

func (b budgetView) Remaining() (int64, bool) {
	total, ok := b.Total()
	if !ok {
		return 0, false
	}
	return max(0, total-b.Spent()), true
}

// CheckpointCall is a checkpoint() call as the policy fixed it.
type CheckpointCall struct {
	Path, FP string
	// Prior is the answer of an earlier execution it replays, if any.
	Prior *Answer
	// Given is the answer a fork's override gives it instead of asking.
	Given json.RawMessage
}

// Checkpoint fixes a checkpoint() call: its path and fingerprint, and the
// answer of an earlier execution it replays, or that an override gives it,
// if any. It fails only when ctx has ended, or for a given answer the
// checkpoint does not take.
func (x *Execution) Checkpoint(ctx context.Context, sc *Scope, req lang.CheckpointRequest) (CheckpointCall, error) {
	cc := CheckpointCall{Path: sc.CallPath("checkpoint")}
	if ctx.Err() != nil {
		return cc, context.Cause(ctx)
	}
	cc.FP = CheckpointFingerprint(req)
	ov := x.override(cc.Path)
	cc.Prior = overridden(ov, x.ledger.reuse(sc, cc.Path, cc.FP, x.epoch))
	if cc.Prior == nil && ov != nil && ov.Answer != nil {
		if err := req.Validate(ov.Answer); err != nil {
			return cc, fmt.Errorf("the answer given to %s does not answer %q: %w", cc.Path, req.Prompt, err)
		}
		cc.Given = ov.Answer
	}
	return cc, nil
}

// Headless is a checkpoint's answer when no human gives one: its declared
// default, or, with headless: 'abort' or no default, an error that stops
// the run. why says why nobody answered, where how someone could have.
func Headless(req lang.CheckpointRequest, why, where string) (json.RawMessage, error) {
	if req.Headless == "default" {
		return req.Default, nil
	}
	return nil, CheckpointAbortError(req, why, where)
}
