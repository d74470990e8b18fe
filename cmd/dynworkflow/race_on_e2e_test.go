//go:build race

package main_test

// raceEnabled makes TestMain build the binary under test with -race too, so
// that a data race in the product fails the end-to-end tests that hit it.
const raceEnabled = true
