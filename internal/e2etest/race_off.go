//go:build !race

package e2etest

// RaceEnabled: see race_on.go.
const RaceEnabled = false
