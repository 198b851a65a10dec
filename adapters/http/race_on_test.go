//go:build race

package http

// raceEnabled: the race detector changes allocation counts (sync.Pool drops
// a share of what is put back), so allocation assertions are skipped.
const raceEnabled = true
