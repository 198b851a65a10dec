package writer

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine the writer started
// outlives them: every test closes its Writer, and Close waits for the
// sender, the sends, and the writer-id and leader requests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
