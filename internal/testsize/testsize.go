// Package testsize sizes the heaviest torture tests (kill loops, corruption
// sweeps): a smaller sample by default, so that `go test -race ./...` on a
// small or busy machine stays well inside go test's timeout, and the full
// size under DYNWORKFLOW_TEST_SIZE=full, which .ci/run sets for a second
// pass over these tests alone, with a longer timeout. A test keeps every
// check on its sample, which is drawn afresh each run and can still fail.
// CI=true does not imply the full size: beside the rest of the suite it
// took the CLI package past the 10-minute timeout on 2 CPUs.
package testsize

import "os"

// Full reports whether tests run at full size.
func Full() bool {
	return os.Getenv("DYNWORKFLOW_TEST_SIZE") == "full"
}

// Of returns full at full size, else sample.
func Of(full, sample int) int {
	if Full() {
		return full
	}
	return sample
}
