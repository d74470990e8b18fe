package engine_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test leaves no goroutine behind: a run that settled, a stream that
// ended or a script that returned must not keep one. The threads that fork
// agent processes (tests of isolation run the command executor), and the
// one that drops the signals go test was started ignoring, live as long as
// the process by design.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/dynworkflow/dynworkflow/executors/proc.spawnLoop"),
		goleak.IgnoreTopFunction("github.com/dynworkflow/dynworkflow/executors/proc.sinkIgnoredSignals.func1"))
}
