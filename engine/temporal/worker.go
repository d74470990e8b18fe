package temporal

import (
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// activityPollers is how many requests for agent calls a worker keeps
// open with the server.
const activityPollers = 32

// WorkerOptions configures a worker process.
type WorkerOptions struct {
	// TaskQueue is the queue the worker polls; runs started on it come here.
	TaskQueue string
	// Concurrency caps the agents this worker runs at once; 0 leaves
	// Temporal's default.
	Concurrency int
	// Identity names the worker in Temporal and in the answers it gives.
	Identity string
}

// NewWorker returns a worker that runs both the workflows (the script
// hosts) and the activities (the agents) of the runs on its task queue,
// with c's connection and blob store.
func NewWorker(c *Client, acts *Activities, o WorkerOptions) worker.Worker {
	if o.TaskQueue == "" {
		o.TaskQueue = DefaultTaskQueue
	}
	acts.client = c
	if acts.Logger == nil {
		acts.Logger = slog.New(slog.DiscardHandler)
	}
	w := worker.New(c.sdk, o.TaskQueue, worker.Options{
		MaxConcurrentActivityExecutionSize: o.Concurrency,
		// A fan-out schedules its agents all at once, and each poller
		// fetches one task per round trip: Temporal's default of two
		// pollers spends seconds just handing a few hundred agents out.
		MaxConcurrentActivityTaskPollers: activityPollers,
		Identity:                         o.Identity,
		// A script's orchestration code runs between two waits without
		// yielding; a big fan-out or a busy machine can take more than the
		// SDK's default second for that without being stuck.
		DeadlockDetectionTimeout: 10 * time.Second,
	})
	wf := &workflows{hosts: acts.Hosts, blobs: c.blobs}
	w.RegisterWorkflowWithOptions(wf.run, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterWorkflowWithOptions(wf.scheduled, workflow.RegisterOptions{Name: ScheduledWorkflowName})
	w.RegisterActivityWithOptions(acts.Agent, activity.RegisterOptions{Name: AgentActivity})
	w.RegisterActivityWithOptions(acts.ResolveWorkflow, activity.RegisterOptions{Name: ResolveActivity})
	w.RegisterActivityWithOptions(acts.Seal, activity.RegisterOptions{Name: SealActivity})
	return w
}
