package http

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEveryRouteIsClassified keeps the authorization policy complete: a new
// authenticated route that is neither in accessByOperation nor explicitly
// open would bypass the policy (the scan routes once did).
func TestEveryRouteIsClassified(t *testing.T) {
	for _, r := range allRoutes() {
		if r.open || r.public {
			continue
		}
		_, classified := accessByOperation[r.operationID]
		assert.True(t, classified || openOperations[r.operationID],
			"route %s %s (%s) is not in accessByOperation", r.method, r.path, r.operationID)
	}
}
