package proc

import (
	"os"
	"testing"
)

// TestMain lets the test binary be its own agent supervisor, as the
// dynworkflow binary is, and a fake runtime for the kill tests.
func TestMain(m *testing.M) {
	RunSupervisorIfAsked()
	runFakeRuntimeIfAsked()
	os.Exit(m.Run())
}
