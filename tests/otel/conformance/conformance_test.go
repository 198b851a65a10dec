//go:build otel

// Package conformance checks at compile time that the telemetry adapter
// implements the hook interfaces of the Fluss packages, which it does
// structurally (adapters do not import each other). It is a package of its
// own so that a change of those interfaces breaks this check and not the
// end-to-end test next to it.
package conformance

import (
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/telemetry"
)

var (
	_ rpc.ConnectHook    = (*telemetry.FlussHooks)(nil)
	_ rpc.DisconnectHook = (*telemetry.FlussHooks)(nil)
	_ rpc.RequestHook    = (*telemetry.FlussHooks)(nil)
	_ writer.Metrics     = (*telemetry.WriterHooks)(nil)
)

func TestHooksConform(t *testing.T) {
	// The assertions above are the test; this keeps `go test` reporting it.
	hooks := []any{(*telemetry.FlussHooks)(nil)}
	for _, h := range hooks {
		if _, ok := h.(rpc.RequestHook); !ok {
			t.Fatal("FlussHooks is not an rpc.RequestHook")
		}
	}
}
