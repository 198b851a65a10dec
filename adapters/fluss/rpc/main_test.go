package rpc_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every
// test closes what it opened, and Close waits for the goroutines it started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
