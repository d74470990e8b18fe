package engine_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test leaves no goroutine behind: a run that settled, a stream that
// ended or a script that returned must not keep one.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
