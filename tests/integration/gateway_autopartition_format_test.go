//go:build integration

package integration

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// formatTable creates a primary-key table (id BIGINT, dt keyType, v STRING)
// partitioned by dt with the given table options.
func formatTable(t *testing.T, g *gateway, db, table, keyType string, configs map[string]string) {
	t.Helper()
	status, body := g.do(http.MethodPost, "/databases/"+db+"/tables", map[string]any{
		"table_name": table,
		"columns": []any{
			map[string]any{"name": "id", "data_type": map[string]any{"type": "BIGINT"}},
			map[string]any{"name": "dt", "data_type": map[string]any{"type": keyType}},
			map[string]any{"name": "v", "data_type": map[string]any{"type": "STRING"}},
		},
		"primary_key": []any{"id", "dt"}, "partitioned_by": []any{"dt"},
		"configs": configs,
	})
	require.Equal(t, http.StatusCreated, status, "%v", body)
}

// TestGatewayAutoPartitionTimeFormat: Fluss 1.0's
// table.auto-partition.time-format (apache/fluss PR #3558; 0.9.1 refuses the
// option) names a table's partitions with its own pattern, and the gateway
// checks partition time values against that pattern instead of the time
// unit's default one. On each auto-partitioned table the partition Fluss
// itself creates for now is named as the gateway renders it.
//   - a DAY table with `yyyy-MM-dd` (STRING key): today's ISO date lands,
//     Fluss's default form `yyyyMMdd` and an ISO date older than the
//     retention are refused (invalid_argument, applied "no"), a delete in an
//     old missing partition succeeds; POST .../partitions creates a later
//     ISO day and refuses the default form with 400;
//   - a DAY table with a DATE key (1.0 requires `yyyy-MM-dd` for it): rows
//     of today land in the partition Fluss itself created;
//   - an HOUR table with `yyyyMMdd-HH`: the current hour lands;
//   - a table with auto-partitioning off but a time format (Fluss keeps
//     checking the format of partitions created by name): a value in the
//     format lands, one in another form is refused.
//
// Every landed row is read back with the peer client.
func TestGatewayAutoPartitionTimeFormat(t *testing.T) {
	if !fluss10() {
		t.Skip("table.auto-partition.time-format exists from Fluss 1.0 on (FLUSS_VERSION=" + flussVersion() + ")")
	}
	g := startGateway(t, "FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE=0s")
	db := gwName("gw_autofmt")
	createDatabase(t, g, db)
	write := func(table string, entries ...any) map[string]any {
		t.Helper()
		status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/"+table+"/records", map[string]any{"entries": entries})
		require.Equal(t, http.StatusOK, status, "%v", body)
		t.Logf("%s: %v", table, body)
		return body
	}
	found := func(table, key string) {
		t.Helper()
		got := peerCmd(t, "lookup", db, table, "--key", key)
		assert.Equal(t, true, got["found"], "%s %s: %v", table, key, got)
	}
	// flussCreated: Fluss's auto-partitioning itself created the partition
	// of now, named as the gateway renders it (domain.AutoPartition.Value,
	// the derivation of PartitionUtils#generateAutoPartitionTime).
	flussCreated := func(table string, props map[string]string) string {
		t.Helper()
		ap := domain.AutoPartitionOf(domain.TableDescriptor{PartitionKeys: []string{"dt"}, Properties: props})
		require.True(t, ap.Checked())
		var names []string
		var want string
		require.Eventually(t, func() bool {
			names, want = partitionNames(t, g, db, table), ap.Value(time.Now(), 0)
			return slices.Contains(names, want)
		}, 20*time.Second, 200*time.Millisecond, "Fluss's partitions %v lack the gateway's %q", names, want)
		return want
	}
	refused := func(f map[string]map[string]any, id, quoted, format string) {
		t.Helper()
		require.Contains(t, f, id)
		assert.Equal(t, "invalid_argument", f[id]["error_code"], "%v", f[id])
		assert.Equal(t, "no", f[id]["applied"], "%v", f[id])
		assert.Contains(t, f[id]["message"], "`"+quoted+"`")
		assert.Contains(t, f[id]["message"], format)
	}

	t.Run("day yyyy-MM-dd", func(t *testing.T) {
		props := autoFormatProps("DAY", "yyyy-MM-dd", 30)
		formatTable(t, g, db, "iso", "STRING", props)
		today := flussCreated("iso", props)
		compact := strings.ReplaceAll(today, "-", "")
		body := write("iso",
			map[string]any{"id": "today", "upsert": map[string]any{"id": 1, "dt": today, "v": "kept"}},
			map[string]any{"id": "compact", "upsert": map[string]any{"id": 2, "dt": compact, "v": "other form"}},
			map[string]any{"id": "old", "upsert": map[string]any{"id": 3, "dt": "2025-01-01", "v": "gone"}},
			map[string]any{"id": "old-delete", "delete": map[string]any{"id": 4, "dt": "2025-01-01"}},
		)
		assert.EqualValues(t, 2, body["success_count"], "%v", body)
		f := failuresByID(body)
		refused(f, "compact", compact, "yyyy-MM-dd")
		refused(f, "old", "2025-01-01", "num-retention 30")
		assert.NotContains(t, f, "old-delete")

		// Partitions by name follow the same format.
		status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/iso/partitions",
			map[string]any{"partition": map[string]any{"dt": compact}})
		require.Equal(t, http.StatusBadRequest, status, "%v", body)
		assert.Contains(t, body["error"].(map[string]any)["message"], "yyyy-MM-dd", "%v", body)
		later := time.Now().UTC().AddDate(0, 0, 5).Format("2006-01-02")
		status, body = g.do(http.MethodPost, "/databases/"+db+"/tables/iso/partitions",
			map[string]any{"partition": map[string]any{"dt": later}})
		require.Equal(t, http.StatusCreated, status, "%v", body)

		names := partitionNames(t, g, db, "iso")
		assert.Contains(t, names, later)
		assert.NotContains(t, names, compact)
		assert.NotContains(t, names, "2025-01-01")
		found("iso", `{"id":1,"dt":"`+today+`"}`)
	})

	t.Run("day DATE key", func(t *testing.T) {
		props := autoFormatProps("DAY", "yyyy-MM-dd", 30)
		formatTable(t, g, db, "dates", "DATE", props)
		today := flussCreated("dates", props)
		body := write("dates",
			map[string]any{"id": "today", "upsert": map[string]any{"id": 1, "dt": today, "v": "kept"}},
			map[string]any{"id": "old", "upsert": map[string]any{"id": 2, "dt": "2025-01-01", "v": "gone"}},
		)
		assert.EqualValues(t, 1, body["success_count"], "%v", body)
		refused(failuresByID(body), "old", "2025-01-01", "num-retention 30")
		found("dates", `{"id":1,"dt":"`+today+`"}`)
	})

	t.Run("hour yyyyMMdd-HH", func(t *testing.T) {
		props := autoFormatProps("HOUR", "yyyyMMdd-HH", 2)
		formatTable(t, g, db, "hours", "STRING", props)
		// Should the hour change before the write, this one is still retained.
		hour := flussCreated("hours", props)
		defaultForm := strings.ReplaceAll(hour, "-", "")
		body := write("hours",
			map[string]any{"id": "now", "upsert": map[string]any{"id": 1, "dt": hour, "v": "kept"}},
			map[string]any{"id": "default-form", "upsert": map[string]any{"id": 2, "dt": defaultForm, "v": "x"}},
		)
		assert.EqualValues(t, 1, body["success_count"], "%v", body)
		refused(failuresByID(body), "default-form", defaultForm, "yyyyMMdd-HH")
		found("hours", `{"id":1,"dt":"`+hour+`"}`)
	})

	t.Run("format without auto-partitioning", func(t *testing.T) {
		formatTable(t, g, db, "manual", "STRING", map[string]string{"table.auto-partition.enabled": "false",
			"table.auto-partition.time-unit": "MONTH", "table.auto-partition.time-format": "yyyy_MM"})
		body := write("manual",
			map[string]any{"id": "in-format", "upsert": map[string]any{"id": 1, "dt": "2020_01", "v": "kept"}},
			map[string]any{"id": "other-form", "upsert": map[string]any{"id": 2, "dt": "202001", "v": "x"}},
		)
		assert.EqualValues(t, 1, body["success_count"], "%v", body)
		refused(failuresByID(body), "other-form", "202001", "yyyy_MM")
		names := partitionNames(t, g, db, "manual")
		assert.Contains(t, names, "2020_01", "no retention without auto-partitioning")
		assert.NotContains(t, names, "202001")
		found("manual", `{"id":1,"dt":"2020_01"}`)
	})
}

// autoFormatProps are the properties of a table auto-partitioned by unit
// in the UTC time zone, naming its partitions with format and keeping
// retention of them.
func autoFormatProps(unit, format string, retention int) map[string]string {
	return map[string]string{"table.auto-partition.enabled": "true",
		"table.auto-partition.time-unit": unit, "table.auto-partition.time-format": format,
		"table.auto-partition.num-retention": strconv.Itoa(retention), "table.auto-partition.time-zone": "UTC"}
}
