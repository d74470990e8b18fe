//go:build race

package e2etest

// RaceEnabled makes Main build the companion with -race too (the
// prebuild compiled it so), and the binary under test when asked (see
// BuildBinary), so that a data race in the product fails the end-to-end
// tests that hit it.
const RaceEnabled = true
