//go:build integration

package integration

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayAutoCreatePartitions: with
// gateway.cluster.<id>.write.auto-create-partitions false, a row for a
// missing partition fails per entry with partition_not_found while a row
// for an existing partition lands; with the default (true) the write creates
// the partition.
func TestGatewayAutoCreatePartitions(t *testing.T) {
	cases := []struct {
		name       string
		env        []string
		wantCreate bool
	}{
		{name: "disabled", env: []string{"FLUSS_GATEWAY__CLUSTER__DEFAULT__WRITE__AUTO_CREATE_PARTITIONS=false"}},
		{name: "default", wantCreate: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// No readiness grace: the cleanup stop need not wait for probes.
			g := startGateway(t, append(tc.env, "FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE=0s")...)
			db := newDatabase(t, g, "gw_autopart")
			createTable(t, g.base, db, "events", columns("id BIGINT", "region STRING"),
				map[string]any{"primary_key": []any{"id", "region"}, "partitioned_by": []any{"region"}})
			status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/events/partitions",
				map[string]any{"partition": map[string]any{"region": "eu"}})
			require.Equal(t, http.StatusCreated, status, "%v", body)

			status, body = g.do(http.MethodPost, "/databases/"+db+"/tables/events/records", map[string]any{"entries": []any{
				map[string]any{"id": "existing", "upsert": map[string]any{"id": 1, "region": "eu"}},
				map[string]any{"id": "missing", "upsert": map[string]any{"id": 2, "region": "us"}},
			}})
			require.Equal(t, http.StatusOK, status, "%v", body)
			if tc.wantCreate {
				assert.EqualValues(t, 2, body["success_count"], "%v", body)
				return
			}
			assert.EqualValues(t, 1, body["success_count"], "%v", body)
			failures := body["failures"].([]any)
			require.Len(t, failures, 1, "%v", body)
			f := failures[0].(map[string]any)
			assert.Equal(t, "missing", f["id"])
			assert.Equal(t, "partition_not_found", f["error_code"])
		})
	}
}
