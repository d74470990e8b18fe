package temporaltest

import (
	"strings"
	"testing"
)

// Without a built dev server, Shared.Get says in one line how to build it,
// and builds nothing (devbuild tests how that becomes a skip, or a failure
// under CI=true).
func TestSharedWithoutServer(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("DYNWORKFLOW_TEMPORALDEV", "")
	t.Setenv("CI", "")
	var sh Shared
	t.Run("get", func(t *testing.T) {
		if srv := sh.Get(t); srv != nil {
			t.Errorf("got a server at %s", srv.Address)
		}
	})
	if sh.err == nil || !strings.Contains(sh.err.Error(), "go run ./internal/temporaltest/prebuild") || strings.Contains(sh.err.Error(), "\n") {
		t.Errorf("want one line that says how to build the server, got %v", sh.err)
	}
	if b, err := program.Builder(); err != nil || b.Built() {
		t.Errorf("Get built the server (%v)", err)
	}
}
