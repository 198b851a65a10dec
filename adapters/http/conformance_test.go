package http

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/tests/conformance"
)

// TestConformanceOverTheMemoryBackend runs the official-contract scenario
// (tests/conformance) against the in-process gateway over the memory catalog
// and the fake writer: every request in the official shapes, every answer
// validated against the served OpenAPI document.
func TestConformanceOverTheMemoryBackend(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	res := conformance.Run(t, conformance.Target{
		Base:     "http://gateway.test",
		Do:       func(r *http.Request) (*http.Response, error) { return g.app.Test(r, -1) },
		Cluster:  "default",
		Database: "conformance",
		Records:  true,
	})
	t.Logf("conformance: %d cases over %d operations (%d skipped): %v", res.Cases, len(res.Operations), res.Skipped, res.Operations)
	assert.Len(t, res.Operations, len(officialOperations), "every official operation is exercised")
}
