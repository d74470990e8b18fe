//go:build race

package main_test

// raceEnabled makes TestMain build the companion with -race too (the
// prebuild compiled it so), and the binary under test when asked (see
// buildBinary), so that a data race in the product fails the end-to-end
// tests that hit it.
const raceEnabled = true
