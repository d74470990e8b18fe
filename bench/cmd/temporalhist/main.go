// Command temporalhist prints the size of a run's histories on Temporal:
// every execution of the workflow whose id is the run id (its start, each
// resume, each continue-as-new), with its events and bytes, and the
// totals, as one line of key=value pairs (as bench/cmd/measure does),
// followed by one line per execution.
//
//	temporalhist -address HOST:PORT -namespace NS -run RUN_ID [-blobs DIR]
//
// With -blobs it also counts the files and bytes of the blob store.
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
		start  time.Time
		events int64
		bytes  int64
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
			execs = append(execs, execution{start: e.GetStartTime().AsTime(), events: e.GetHistoryLength(), bytes: e.GetHistorySizeBytes()})
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	if len(execs) == 0 {
		fail(fmt.Errorf("no execution of %s", *runID))
	}
	slices.SortFunc(execs, func(a, b execution) int { return a.start.Compare(b.start) })
	var events, bytes, maxEvents, maxBytes int64
	for _, e := range execs {
		events, bytes = events+e.events, bytes+e.bytes
		maxEvents, maxBytes = max(maxEvents, e.events), max(maxBytes, e.bytes)
	}
	line := fmt.Sprintf("executions=%d history_events=%d history_bytes=%d max_execution_events=%d max_execution_bytes=%d",
		len(execs), events, bytes, maxEvents, maxBytes)
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
		fmt.Printf("execution=%d events=%d bytes=%d\n", i, e.events, e.bytes)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "temporalhist:", err)
	os.Exit(1)
}
