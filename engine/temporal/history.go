package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/engine/temporal/blobs"
	"github.com/dynworkflow/dynworkflow/executors"
)

// execHistory is one execution of a run, folded from its Temporal history:
// its input, its agent calls and, once it has ended, its State.
type execHistory struct {
	runID     string // Temporal's run id of the execution
	input     RunInput
	startedAt time.Time
	calls     []*agentRecord // in the order they were scheduled
	// state is the execution's result; nil while it runs or when it ended
	// without one (terminated from outside, say).
	state  *State
	closed bool
	// closedAs says how it ended when it ended without a State.
	closedAs string
	// sealed is, for an execution that continued as new, its state when
	// it did (the input of its seal activity).
	sealed *State
}

// agentRecord is one attempt of an agent call, as the history has it.
type agentRecord struct {
	input     AgentInput
	status    string // running, done, failed, cancelled
	output    AgentOutput
	failure   AgentFailure
	errKind   string
	errMsg    string
	scheduled time.Time
	ended     time.Time
}

// readExecution folds the history of one execution.
func (c *Client) readExecution(ctx context.Context, runID, temporalRunID string) (*execHistory, error) {
	e := &execHistory{runID: temporalRunID}
	bySchedule := map[int64]*agentRecord{}
	it := c.sdk.GetWorkflowHistory(ctx, runID, temporalRunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("read the history of %s: %w", runID, err)
		}
		if err := e.apply(ev, bySchedule, c.dc); err != nil {
			return nil, fmt.Errorf("read the history of %s: event %d: %w", runID, ev.GetEventId(), err)
		}
	}
	if e.input.RunID == "" {
		return nil, fmt.Errorf("%s: the Temporal workflow is not a dynworkflow run", runID)
	}
	return e, nil
}

func (e *execHistory) apply(ev *historypb.HistoryEvent, bySchedule map[int64]*agentRecord, dataConverter converter.DataConverter) error {
	at := ev.GetEventTime().AsTime()
	switch ev.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
		e.startedAt = at
		return dataConverter.FromPayloads(ev.GetWorkflowExecutionStartedEventAttributes().GetInput(), &e.input)
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		a := ev.GetActivityTaskScheduledEventAttributes()
		switch a.GetActivityType().GetName() {
		case SealActivity:
			var in SealInput
			if err := dataConverter.FromPayloads(a.GetInput(), &in); err != nil {
				return err
			}
			e.sealed = &in.State
			return nil
		case AgentActivity:
		default:
			return nil
		}
		r := &agentRecord{status: "running", scheduled: at}
		if err := dataConverter.FromPayloads(a.GetInput(), &r.input); err != nil {
			return err
		}
		bySchedule[ev.GetEventId()] = r
		e.calls = append(e.calls, r)
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
		a := ev.GetActivityTaskCompletedEventAttributes()
		if r := bySchedule[a.GetScheduledEventId()]; r != nil {
			r.status, r.ended = "done", at
			return dataConverter.FromPayloads(a.GetResult(), &r.output)
		}
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
		a := ev.GetActivityTaskFailedEventAttributes()
		if r := bySchedule[a.GetScheduledEventId()]; r != nil {
			r.status, r.ended = "failed", at
			f := a.GetFailure()
			r.errKind, r.errMsg = errTerminal, f.GetMessage()
			if info := f.GetApplicationFailureInfo(); info != nil {
				r.errKind = info.GetType()
				if info.GetDetails() != nil {
					_ = dataConverter.FromPayloads(info.GetDetails(), &r.failure)
				}
			}
		}
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
		a := ev.GetActivityTaskTimedOutEventAttributes()
		if r := bySchedule[a.GetScheduledEventId()]; r != nil {
			r.status, r.ended, r.errKind = "failed", at, errTerminal
			r.errMsg = "the call was lost: " + a.GetFailure().GetMessage()
		}
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
		a := ev.GetActivityTaskCanceledEventAttributes()
		if r := bySchedule[a.GetScheduledEventId()]; r != nil {
			r.status, r.ended = "cancelled", at
		}
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
		e.closed = true
		e.state = &State{}
		return dataConverter.FromPayloads(ev.GetWorkflowExecutionCompletedEventAttributes().GetResult(), e.state)
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
		e.closed = true
		f := ev.GetWorkflowExecutionFailedEventAttributes().GetFailure()
		if info := f.GetApplicationFailureInfo(); info != nil && info.GetType() == scriptFailed && info.GetDetails() != nil {
			e.state = &State{}
			return dataConverter.FromPayloads(info.GetDetails(), e.state)
		}
		e.closedAs = "failed in Temporal: " + f.GetMessage()
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
		e.closed = true
		if d := ev.GetWorkflowExecutionCanceledEventAttributes().GetDetails(); d != nil {
			e.state = &State{}
			return dataConverter.FromPayloads(d, e.state)
		}
		e.closedAs = "cancelled in Temporal"
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
		e.closed = true
		e.closedAs = "terminated in Temporal: " + ev.GetWorkflowExecutionTerminatedEventAttributes().GetReason()
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
		e.closed = true
		e.closedAs = "timed out in Temporal"
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		e.closed = true
		e.state = e.sealed
		if e.state == nil {
			e.closedAs = "continued as new in Temporal"
		}
	}
	return nil
}

// priced is the attempt's usage with its cost, the CLI's or the table's
// for the model that answered (else the model asked for).
func (r *agentRecord) priced(prices *cost.Table) executors.Usage {
	u := r.usage()
	if prices == nil || u.CostUSD > 0 {
		return u
	}
	model := prices.ModelOf(r.input.Executor, r.input.Model)
	if _, _, ok := prices.Lookup(r.output.Model); ok {
		model = r.output.Model
	}
	return prices.Priced(model, u)
}

// usage is what the attempt cost, whether it answered or not.
func (r *agentRecord) usage() executors.Usage {
	if r.status == "done" {
		return r.output.Usage
	}
	return r.failure.Usage
}

// readRun reads every execution of a run, oldest first.
func (c *Client) readRun(ctx context.Context, runID string) ([]*execHistory, error) {
	desc, err := c.describe(ctx, runID)
	if err != nil {
		return nil, notFound(runID, err)
	}
	latest, err := c.readExecution(ctx, runID, desc.GetWorkflowExecutionInfo().GetExecution().GetRunId())
	if err != nil {
		return nil, err
	}
	out := make([]*execHistory, 0, len(latest.input.Previous)+1)
	for _, rid := range latest.input.Previous {
		e, err := c.readExecution(ctx, runID, rid)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return append(out, latest), nil
}

// pageOf is what an execution did with the run's calls, for the call
// policy of a later one to replay from by the same rules as a local run's
// journal (callpolicy.Ledger): what it ran (its script and args, and its
// children's), then each call it started, each answer, and the checkpoints
// its state lists. gaveUp are its calls that ended without an answer, for
// an execution that continues as new. What the calls cost is priced with
// prices where their CLI did not say (the dollar cap counts it).
func pageOf(e *execHistory, gaveUp []GaveUp, prices *cost.Table) *Page {
	epoch := e.input.Epoch
	p := &Page{Epoch: epoch, GaveUp: gaveUp}
	p.Runs = append(p.Runs, callpolicy.Run{Epoch: epoch, Identity: callpolicy.IdentityOf(e.input.ScriptHash, e.input.Args)})
	if e.state != nil {
		for _, ch := range e.state.Children {
			p.Runs = append(p.Runs, callpolicy.Run{Frame: ch.Frame, Epoch: epoch, Identity: callpolicy.IdentityOf(ch.Hash, ch.Args)})
		}
	}
	// spent is what each call's attempts cost so far in the execution: an
	// answer's cost, which its replay counts against the budget, is every
	// attempt's, as a local journal records it.
	spent := map[string]executors.Usage{}
	for _, r := range e.calls {
		p.Usage = p.Usage.Add(r.priced(prices))
		in := r.input
		spent[in.Path] = spent[in.Path].Add(r.usage())
		if in.Attempt <= 1 {
			// The call's later attempts in this execution add nothing.
			p.Records = append(p.Records, PageRecord{Record: callpolicy.Record{Epoch: epoch, Path: in.Path, FP: in.Fingerprint, Kind: callpolicy.Started}})
		}
		if r.status == "done" {
			p.Records = append(p.Records, PageRecord{Record: callpolicy.Record{Epoch: epoch, Path: in.Path, FP: in.Fingerprint, Kind: callpolicy.Finished,
				Result: r.output.Value, Usage: spent[in.Path]}, Blob: r.output.ValueBlob})
		}
	}
	if e.state == nil {
		return p
	}
	for _, cp := range e.state.Checkpoints {
		if cp.Source == "journal" {
			continue // replayed: the earlier execution's record stands
		}
		p.Records = append(p.Records, PageRecord{Record: callpolicy.Record{Epoch: epoch, Path: cp.Path, FP: cp.Fingerprint, Kind: callpolicy.Started}})
		if cp.Source != "" {
			p.Records = append(p.Records, PageRecord{Record: callpolicy.Record{Epoch: epoch, Path: cp.Path, FP: cp.Fingerprint, Kind: callpolicy.Finished,
				Result: cp.Answer}})
		}
	}
	return p
}

// putPage stores a page in the blob store and returns its key.
func putPage(store *blobs.Store, p *Page) (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	return store.Put(b)
}

// notFound wraps engine.ErrNotFound for a run Temporal does not know.
func notFound(runID string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("%w: %s is not a workflow on the Temporal server (%v)", engine.ErrNotFound, runID, err)
	}
	return fmt.Errorf("describe %s on Temporal: %w", runID, err)
}

// describe asks Temporal about the run's latest execution.
func (c *Client) describe(ctx context.Context, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	d, err := c.sdk.DescribeWorkflow(ctx, runID, "")
	if err != nil {
		return nil, err
	}
	return d.RawResponse, nil
}
