package collectortest

import (
	"strings"
	"testing"
)

// Without a built collector, Binary says in one line how to build it, and
// builds nothing (devbuild tests how Require turns that into a skip).
func TestBinaryWithoutCollector(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	_, err := Binary()
	if err == nil || !strings.Contains(err.Error(), "go run ./internal/collectortest/prebuild") || strings.Contains(err.Error(), "\n") {
		t.Errorf("want one line that says how to build the collector, got %v", err)
	}
	if b, err := program.Builder(); err != nil || b.Built() {
		t.Errorf("Binary built the collector (%v)", err)
	}
}
