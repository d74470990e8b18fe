package main_test

import (
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// The end-to-end tests of the CLI: the Temporal backend's are in
// e2e/temporal, and those beside the Node runtime in e2e/node, each
// package a test binary of its own, within go test's timeout on its own.
func TestMain(m *testing.M) { e2etest.MainWithCompanion(m) }
