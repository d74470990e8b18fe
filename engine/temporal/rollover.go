package temporal

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/executors"
)

// A run of any size on histories of bounded size.
//
// Temporal bounds a history (51,200 events, 50 MB) and warns well before.
// An execution whose history grows past defaultRollEvents events, or whose
// server suggests it, continues as new: it starts no new call, waits for
// the calls started to end, every attempt of theirs (what they paid for
// stays theirs: a call cut between two attempts would pay its first ones
// again), has a worker write its
// page to the blob store (the seal activity: its calls from its history),
// and continues as a new execution of the run that replays them by the
// crash rule. The continuation goes on as if nothing had ended: the calls
// that gave up give the script the same null or error rather than run
// again, the budget keeps what it counted, the stats count the chain's
// answers as live, child workflows run the files they ran, and a pause
// that came while it ended pauses the continuation.
//
// Answers and pages too large for a history are in the blob store. The
// workflow reads them by key: a key always gives the same bytes, so the
// read is deterministic; a store that cannot give them fails the workflow
// task (a panic), which Temporal retries, rather than the run.

// defaultRollEvents is the history length at which an execution continues
// as new: Temporal warns at 10,240 events.
const defaultRollEvents = 10000

// rollBytes is the history size at which an execution continues as new:
// Temporal warns at 10 MB.
const rollBytes = 10 << 20

// StatusContinued is the status of an execution that continued as new.
const StatusContinued engine.Status = "continued"

// errRollover ends an execution that continues as new.
var errRollover = errors.New("the execution continues as new")

// blobRef is an answer the ledger holds by its key in the blob store.
type blobRef string

// blobFault is what a workflow panics with when the blob store cannot give
// a value it names: the workflow task fails and Temporal retries it, until
// the store is back. It is not an error, so that a script host passes it
// on rather than turn it into the script's exception.
type blobFault struct{ err error }

func (f blobFault) String() string { return "dynworkflow: " + f.err.Error() }

// blob reads a value from the blob store, in workflow code.
func (x *execution) blob(key string) []byte {
	b, err := x.blobs.Get(key)
	if err != nil {
		panic(blobFault{err})
	}
	return b
}

// loadLedger reads the pages of the earlier executions into a ledger, for
// the call policy to replay from. An execution that continues a chain
// takes the budget the chain counted (RunInput.Carry) rather than count
// the answers it replays again, and settles the chain's calls that gave up.
func (x *execution) loadLedger() *callpolicy.Ledger {
	ledger := callpolicy.NewLedger()
	continued := x.in.Epoch > x.in.Chain
	for _, key := range x.in.Ledger {
		var p Page
		if err := json.Unmarshal(x.blob(key), &p); err != nil {
			panic(blobFault{fmt.Errorf("ledger page %s: %w", key, err)})
		}
		x.usage = x.usage.Add(p.Usage)
		for _, r := range p.Runs {
			ledger.Ran(r)
		}
		for _, r := range p.Records {
			a := ledger.Note(r.Record)
			if a == nil {
				continue
			}
			if r.Blob != "" {
				a.Kept = blobRef(r.Blob)
			}
			if continued {
				a.Usage = executors.Usage{}
			}
		}
		for _, g := range p.GaveUp {
			if g.Epoch >= x.in.Chain {
				x.settled[g.Path] = g
			}
		}
	}
	return ledger
}

// answerOf is the value of an earlier answer a call replays, read from the
// blob store when the page holds its key.
func (x *execution) answerOf(a *callpolicy.Answer) json.RawMessage {
	if ref, ok := a.Kept.(blobRef); ok {
		return x.blob(string(ref))
	}
	return a.Result
}

// settle gives the script what a call of the chain that gave up gave it,
// if c is that call; it reports whether it did.
func (x *execution) settle(c *callpolicy.Call, done func(json.RawMessage, error)) bool {
	g, ok := x.settled[c.Path]
	if !ok || g.FP != c.FP {
		return false
	}
	delete(x.settled, c.Path)
	x.gaveUp = append(x.gaveUp, g)
	x.policy.Counts.Failed.Add(1)
	if g.Code == "" {
		done(json.RawMessage("null"), nil)
		return true
	}
	sentinel := callpolicy.ErrRequiredFailed
	if g.Code == callpolicy.CodeSchema {
		sentinel = callpolicy.ErrSchemaInvalid
	}
	done(nil, &callpolicy.Error{Code: g.Code, Message: g.Message, Err: sentinel})
	return true
}

// gaveUpWith records a call that ended without an answer, and what the
// script got from it, for a continuation.
func (x *execution) gaveUpWith(c *callpolicy.Call, err error) {
	g := GaveUp{Path: c.Path, FP: c.FP, Epoch: x.in.Epoch}
	var pe *callpolicy.Error
	if errors.As(err, &pe) {
		g.Code, g.Message = pe.Code, pe.Message
	}
	x.gaveUp = append(x.gaveUp, g)
}

// historyFull reports whether the history is long enough to continue as
// new.
func (x *execution) historyFull() bool {
	info := workflow.GetInfo(x.host)
	limit := x.in.RollEvents
	if limit <= 0 {
		limit = defaultRollEvents
	}
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= limit || info.GetCurrentHistorySize() >= rollBytes
}

// maybeRoll begins to continue as new when the history is full: no new
// call starts, and once those started have ended, the script and its
// waits are cancelled, and finish continues as new.
func (x *execution) maybeRoll() {
	if x.rolling || x.cause != nil || x.scriptEnded || !x.historyFull() {
		return
	}
	x.rolling = true
	workflow.Go(x.host, func(wc workflow.Context) {
		_ = workflow.Await(wc, func() bool { return x.active == 0 || x.cause != nil })
		if x.cause == nil {
			x.end(errRollover)
		}
	})
}

// continueAsNew has a worker write the execution's page and returns the
// error that continues the run as a new execution that replays it, or nil
// when the execution was stopped meanwhile.
func (x *execution) continueAsNew() error {
	st := x.snapshot()
	st.Status, st.EndedAt = StatusContinued, x.now().UTC()
	info := workflow.GetInfo(x.wf)
	sctx := workflow.WithActivityOptions(x.wf, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
	})
	var key string
	in := SealInput{RunID: x.in.RunID, Execution: info.WorkflowExecution.RunID, State: st, GaveUp: x.gaveUp}
	if err := workflow.ExecuteActivity(sctx, SealActivity, in).Get(sctx, &key); err != nil {
		return nil // only a stop ends the seal's retries
	}
	next := x.in
	// The rule stays the chain's: the replay decisions are the ledger's,
	// and the log says how the chain began.
	next.Epoch++
	next.Previous = append(append([]string(nil), x.in.Previous...), info.WorkflowExecution.RunID)
	next.Ledger = append(append([]string(nil), x.in.Ledger...), key)
	next.Carry = &Carry{Retried: st.Stats.Retried, Spent: x.policy.Spent(), Usage: x.state.Usage,
		StartedAt: x.state.StartedAt, Phase: x.state.Phase, Logs: x.state.Logs}
	next.Children = maps.Clone(x.in.Children)
	if next.Children == nil {
		next.Children = map[string]Bundle{}
	}
	maps.Copy(next.Children, x.children)
	next.PauseReason = ""
	var p *pauseCause
	if errors.As(x.pauseNext, &p) {
		next.PauseReason = p.reason
	}
	return workflow.NewContinueAsNewError(x.wf, WorkflowName, next)
}
