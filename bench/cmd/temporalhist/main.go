// Command temporalhist prints the size of a run's histories on Temporal:
// every execution of the workflow whose id is the run id (its start, each
// resume, each continue-as-new), with its events and bytes, and the
// totals, as one line of key=value pairs (as bench/cmd/measure does),
// followed by one line per execution.
//
//	temporalhist -address HOST:PORT -namespace NS -run RUN_ID [-blobs DIR]
//
// With -blobs it also counts the files and bytes of the blob store.
//
// It also counts the workflow tasks of every execution, and how many a
// worker took up after another worker had taken the one before
// (workflow_task_moves): each such task replays the execution's history
// from its start on a worker that did not have it cached, which is work
// that grows with the run. Tasks that timed out (a sticky worker too busy
// to start one in time) are counted too.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

func main() {
	address := flag.String("address", "127.0.0.1:7233", "Temporal frontend")
	namespace := flag.String("namespace", "default", "namespace")
	runID := flag.String("run", "", "the run's id (its workflow id)")
	blobDir := flag.String("blobs", "", "the blob store's directory, to count")
	flag.Parse()
	if *runID == "" {
		fmt.Fprintln(os.Stderr, "temporalhist: -run is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: *address, Namespace: *namespace})
	if err != nil {
		fail(err)
	}
	defer c.Close()
	type execution struct {
		start    time.Time
		runID    string
		events   int64
		bytes    int64
		tasks    int
		moves    int
		timeouts int
		failures int
		normal   int
	}
	var execs []execution
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: *namespace, Query: fmt.Sprintf("WorkflowId = '%s'", *runID), NextPageToken: token,
		})
		if err != nil {
			fail(err)
		}
		for _, e := range resp.GetExecutions() {
			execs = append(execs, execution{start: e.GetStartTime().AsTime(), runID: e.GetExecution().GetRunId(),
				events: e.GetHistoryLength(), bytes: e.GetHistorySizeBytes()})
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	if len(execs) == 0 {
		fail(fmt.Errorf("no execution of %s", *runID))
	}
	slices.SortFunc(execs, func(a, b execution) int { return a.start.Compare(b.start) })
	for i := range execs {
		e := &execs[i]
		last := ""
		it := c.GetWorkflowHistory(ctx, *runID, e.runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				fail(err)
			}
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
				e.tasks++
				who := ev.GetWorkflowTaskStartedEventAttributes().GetIdentity()
				if last != "" && who != last {
					e.moves++
				}
				last = who
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
				if ev.GetWorkflowTaskScheduledEventAttributes().GetTaskQueue().GetKind() == enumspb.TASK_QUEUE_KIND_NORMAL {
					e.normal++
				}
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
				e.timeouts++
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
				e.failures++
				if os.Getenv("TEMPORALHIST_FAILURES") != "" {
					a := ev.GetWorkflowTaskFailedEventAttributes()
					fmt.Fprintf(os.Stderr, "failed task: %s: %.300s\n", a.GetCause(), a.GetFailure().GetMessage())
				}
			}
		}
	}
	var events, bytes, maxEvents, maxBytes int64
	tasks, moves, timeouts := 0, 0, 0
	for _, e := range execs {
		tasks, moves, timeouts = tasks+e.tasks, moves+e.moves, timeouts+e.timeouts
		events, bytes = events+e.events, bytes+e.bytes
		maxEvents, maxBytes = max(maxEvents, e.events), max(maxBytes, e.bytes)
	}
	line := fmt.Sprintf("executions=%d history_events=%d history_bytes=%d max_execution_events=%d max_execution_bytes=%d workflow_tasks=%d workflow_task_moves=%d workflow_task_timeouts=%d",
		len(execs), events, bytes, maxEvents, maxBytes, tasks, moves, timeouts)
	if *blobDir != "" {
		files, size := 0, int64(0)
		_ = filepath.WalkDir(*blobDir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					files++
					size += fi.Size()
				}
			}
			return nil
		})
		line += fmt.Sprintf(" blob_files=%d blob_bytes=%d", files, size)
	}
	fmt.Println(line)
	for i, e := range execs {
		fmt.Printf("execution=%d events=%d bytes=%d workflow_tasks=%d workflow_task_moves=%d workflow_task_timeouts=%d workflow_task_failures=%d workflow_tasks_on_the_normal_queue=%d\n",
			i, e.events, e.bytes, e.tasks, e.moves, e.timeouts, e.failures, e.normal)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "temporalhist:", err)
	os.Exit(1)
}
