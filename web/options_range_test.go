package web_test

import (
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/web"
)

// An --agent-timeout-ms (or API agentTimeoutMs) out of range is refused
// with the range, never converted into a duration that overflowed
// (18446744073710 ms became 448 µs).
func TestAgentTimeoutRange(t *testing.T) {
	for _, ms := range []int64{-1, 30*24*3600*1000 + 1, 18446744073710, 1 << 62} {
		opts := engine.DefaultOptions()
		(&web.RunOptions{AgentTimeoutMs: &ms}).Apply(&opts)
		if err := opts.Validate(); err == nil || !strings.Contains(err.Error(), "--agent-timeout-ms must be a number of milliseconds from 1 to 2592000000") {
			t.Errorf("agentTimeoutMs %d: Validate = %v, want the range", ms, err)
		}
	}
	for _, ms := range []int64{0, 1, 30 * 24 * 3600 * 1000} {
		opts := engine.DefaultOptions()
		(&web.RunOptions{AgentTimeoutMs: &ms}).Apply(&opts)
		if err := opts.Validate(); err != nil {
			t.Errorf("agentTimeoutMs %d: %v", ms, err)
		}
	}
}
