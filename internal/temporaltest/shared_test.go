package temporaltest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a test that records how Get ended it.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skip(args ...any) { r.skipped = fmt.Sprint(args...) }

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// Without a built dev server, a test is skipped with one line that says how
// to build it, and nothing is built; under CI=true it fails instead.
func TestSharedWithoutServer(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			cache := t.TempDir()
			t.Setenv("XDG_CACHE_HOME", cache)
			t.Setenv("CI", ci)
			var sh Shared
			r := &recorder{TB: t}
			if srv := sh.Get(r); srv != nil {
				t.Fatalf("got a server at %s", srv.Address)
			}
			said := r.skipped
			if ci == "true" {
				said = r.failed
				if r.skipped != "" {
					t.Errorf("skipped under CI=true: %s", r.skipped)
				}
			} else if r.failed != "" {
				t.Errorf("failed without CI: %s", r.failed)
			}
			if !strings.Contains(said, "go run ./internal/temporaltest/prebuild") || strings.Contains(said, "\n") {
				t.Errorf("want one line that says how to build the server, got %q", said)
			}
			if b, err := devServer(); err != nil || b.Built() {
				t.Errorf("Get built the server (%v)", err)
			}
		})
	}
}
