//go:build !race

package http

// raceEnabled: see race_on_test.go.
const raceEnabled = false
