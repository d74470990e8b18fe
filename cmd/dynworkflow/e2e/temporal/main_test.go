// Package temporal_test runs the dynworkflow binary end to end with
// --backend temporal: the default build handing over to its companion
// (dynworkflow-temporal), workers as separate processes, a real Temporal
// server, schedules, and tracing through a real collector.
package temporal_test

import (
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

func TestMain(m *testing.M) { e2etest.MainWithCompanion(m) }
