//go:build race

package writer

// raceEnabled: the race detector slows everything ~10×; timing assertions
// are skipped.
const raceEnabled = true
