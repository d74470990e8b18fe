// Package node_test runs the dynworkflow binary end to end beside the seed's
// Node runtime: both on one state directory, and each one's CLI against the
// other's serve.
package node_test

import (
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

func TestMain(m *testing.M) { e2etest.Main(m) }
