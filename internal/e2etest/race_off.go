//go:build !race

package e2etest

const RaceEnabled = false
