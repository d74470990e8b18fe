package collectortest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a test that records how Require ended it.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skip(args ...any) { r.skipped = fmt.Sprint(args...) }

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// Without a built collector, a test is skipped with one line that says how
// to build it, and nothing is built; under CI=true it fails instead.
func TestRequireWithoutCollector(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			t.Setenv("CI", ci)
			r := &recorder{TB: t}
			if bin := Require(r); bin != "" {
				t.Fatalf("got a collector at %s", bin)
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
			if !strings.Contains(said, "go run ./internal/collectortest/prebuild") || strings.Contains(said, "\n") {
				t.Errorf("want one line that says how to build the collector, got %q", said)
			}
			if b, err := collector(); err != nil || b.Built() {
				t.Errorf("Require built the collector (%v)", err)
			}
		})
	}
}
