package web_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test leaves no goroutine behind: a run that settled, a stream that
// ended or a script that returned must not keep one. The binary is also the
// other user's server of TestConnectRefusesAnotherUsersServer.
func TestMain(m *testing.M) {
	runForeignServerIfAsked()
	goleak.VerifyTestMain(m)
}
