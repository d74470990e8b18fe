package temporal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
)

// slowAttempts is an executor whose every attempt uses 95% of the time
// the call allows (its context's deadline), then fails transiently
// (attempt 1), breaks the schema (attempts 2 and 3) or answers (attempt
// 4 on). It counts its invocations by attempt: what was paid for.
type slowAttempts struct {
	mu    sync.Mutex
	calls map[int]int
}

func (s *slowAttempts) Name() string { return "slow" }

func (s *slowAttempts) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	s.mu.Lock()
	s.calls[req.Attempt]++
	s.mu.Unlock()
	deadline, ok := ctx.Deadline()
	if !ok {
		return executors.Result{}, errors.New("slow: the attempt has no deadline")
	}
	// The attempt's context ends at the call's timeout: use 95% of it.
	left := time.Until(deadline)
	select {
	case <-time.After(left - left/20):
	case <-ctx.Done():
		return executors.Result{}, ctx.Err()
	}
	usage := executors.Usage{InputTokens: 10, OutputTokens: 5}
	switch {
	case req.Attempt == 1:
		return executors.Result{Usage: usage}, &executors.Error{Class: executors.Transient, Message: "503 upstream busy"}
	case req.Attempt <= 3:
		return executors.Result{Text: `{"n": "not a number"}`, Usage: usage}, nil
	}
	return executors.Result{Text: `{"n": 4}`, Usage: usage}, nil
}

// TestAttemptsFitTheirTimeout runs a call whose every attempt takes 95% of
// its timeoutMs: a transient failure, two answers that break the schema,
// then a good one. Each attempt is an activity of its own whose timeout
// covers that one attempt, so none is cut off and run again from the
// start: the executor runs each attempt once, and Temporal never retries
// one.
func TestAttemptsFitTheirTimeout(t *testing.T) {
	c := newClient(t)
	slow := &slowAttempts{calls: map[int]int{}}
	startWorker(t, c, "w1", executors.NewSet(slow))
	const timeoutMs = 1500
	path := writeScript(t, "slow.workflow.js", fmt.Sprintf(`export const meta = { name: 'slow', description: 'slow attempts' }
return await agent('count', { executor: 'slow', timeoutMs: %d, schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } })
`, timeoutMs))
	opts := engine.DefaultOptions()
	opts.RetryBackoff = time.Millisecond
	in := startFile(t, c, path, "", opts, false)
	st := wait(t, c, in.RunID)
	if st.Status != engine.StatusCompleted || string(st.Result) != `{"n":4}` {
		t.Fatalf("%s %s %s", st.Status, st.Result, st.Error)
	}

	slow.mu.Lock()
	defer slow.mu.Unlock()
	paid := 0
	for attempt, n := range slow.calls {
		paid += n
		if n != 1 {
			t.Errorf("attempt %d ran %d times", attempt, n)
		}
	}
	// A machine stalled past an attempt's last 5% makes it time out and
	// retry as a new attempt: never a repeat of one, and never fewer
	// than the four the executor scripts.
	if paid < 4 {
		t.Errorf("the executor ran %d attempts, want at least 4: %v", paid, slow.calls)
	}

	// One activity per attempt, each started once.
	activities, restarts := 0, 0
	it := c.sdk.GetWorkflowHistory(context.Background(), in.RunID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			activities++
			if a.GetAttempt() > 1 {
				restarts++
			}
		}
	}
	if activities != paid || restarts != 0 {
		t.Errorf("%d activities (%d of them restarted by Temporal) for %d attempts", activities, restarts, paid)
	}
	if st.Stats.Retried != paid-1 {
		t.Errorf("%d retries counted for %d attempts", st.Stats.Retried, paid)
	}
	replay(t, c, in.RunID)
}
