package devbuild

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

// Without the built program, a test is skipped with one line that says how
// to build it, and nothing is built; under CI=true it fails instead.
func TestRequireWithoutProgram(t *testing.T) {
	p := Program{Module: "temporaldev", Title: "dev thing", Prebuild: "./internal/thingtest/prebuild", Cold: "an age cold", Tests: "thing"}
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			t.Setenv("CI", ci)
			r := &recorder{TB: t}
			if bin := p.Require(r); bin != "" {
				t.Fatalf("got a program at %s", bin)
			}
			said := r.skipped
			if ci == "true" {
				said = r.failed
				if r.skipped != "" {
					t.Errorf("skipped under CI=true: %s", r.skipped)
				}
				if !strings.Contains(said, "the thing tests are required") {
					t.Errorf("the failure does not say which tests need the program: %q", said)
				}
			} else if r.failed != "" {
				t.Errorf("failed without CI: %s", r.failed)
			}
			if !strings.Contains(said, "go run ./internal/thingtest/prebuild") || strings.Contains(said, "\n") {
				t.Errorf("want one line that says how to build the program, got %q", said)
			}
			if b, err := p.Builder(); err != nil || b.Built() {
				t.Errorf("Require built the program (%v)", err)
			}
		})
	}
}
