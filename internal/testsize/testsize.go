// Package testsize sizes the heaviest torture tests (kill loops, corruption
// sweeps): full size under CI=true, where .ci/run runs every test, and a
// smaller sample otherwise, so that `go test -race ./...` on a small or
// busy machine stays well inside go test's timeout. A test keeps every
// check on its sample, which is drawn afresh each run and can still fail;
// DYNWORKFLOW_TEST_SIZE=full asks for the full size anywhere.
package testsize

import "os"

// Full reports whether tests run at full size.
func Full() bool {
	return os.Getenv("CI") == "true" || os.Getenv("DYNWORKFLOW_TEST_SIZE") == "full"
}

// Of returns full at full size, else sample.
func Of(full, sample int) int {
	if Full() {
		return full
	}
	return sample
}
