//go:build integration

package integration

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanJavaStats creates a log table with `table.statistics.columns` and
// appends rows with the official Java client: on Fluss 1.0 the client then
// writes magic-1 batches carrying column statistics (the 1.0 meaning of
// magic 1; in 0.9 magic 1 was the leader-epoch layout).
const scanJavaStats = `
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.types.DataTypes;

public class ScanJavaStats {
    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        TablePath path = TablePath.of(args[1], args[2]);
        try (Connection c = ConnectionFactory.createConnection(conf); Admin admin = c.getAdmin()) {
            Schema s = Schema.newBuilder().column("id", DataTypes.INT()).column("msg", DataTypes.STRING()).build();
            admin.createTable(path, TableDescriptor.builder().schema(s).distributedBy(1)
                    .property("table.statistics.columns", "id,msg").build(), false).get();
            Thread.sleep(2000);
            try (Table t = c.getTable(path)) {
                AppendWriter w = t.newAppend().createWriter();
                for (int i = 0; i < 20; i++) w.append(GenericRow.of(i, BinaryString.fromString("m" + i)));
                w.flush();
            }
        }
    }
}
`

// TestScanStatisticsBatches (Fluss 1.0): a log table whose batches carry
// column statistics (magic 1 in 1.0) is scanned, with and without a
// projection.
func TestScanStatisticsBatches(t *testing.T) {
	if !strings.HasPrefix(os.Getenv("FLUSS_VERSION"), "1.") {
		t.Skip("statistics batches exist from Fluss 1.0 on (FLUSS_VERSION)")
	}
	g := startGateway(t, scanTokenKey)
	db := newDatabase(t, g, "gw_scanstats")
	runJava(t, "ScanJavaStats.java", scanJavaStats, 3*time.Minute, wrBootstrap(t), db, "stats")
	for _, cols := range [][]any{nil, {"msg"}} {
		req := map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": 100}
		if cols != nil {
			req["columns"] = cols
		}
		status, raw := g.raw(http.MethodPost, "/databases/"+db+"/tables/stats/records/scan", req, "")
		require.Equal(t, http.StatusOK, status, "%s", raw)
		a := g.scan(t, db, "stats", req)
		require.Len(t, a.Records, 20, "columns %v", cols)
		assert.Equal(t, "m0", a.Records[0].Row["msg"])
	}
}

// TestScanAllTypesMatchesLookup: a primary-key table of every type, rows
// upserted by the peer client: each changelog record the scan returns renders
// exactly as the gateway's lookup of its key renders the row.
func TestScanAllTypesMatchesLookup(t *testing.T) {
	g := startGateway(t, scanTokenKey)
	db := lkDatabase(t)
	lkCreateTable(t, db, "all_types", lkAllTypes, "--primary-key", "id,k", "--buckets", "3")
	var rows []map[string]any
	for i := range int64(25) {
		js, _ := lkAllTypesRow(i)
		rows = append(rows, js)
	}
	rows = append(rows, map[string]any{"id": 999, "k": "nulls"})
	lkUpsert(t, domainPath(db, "all_types"), rows)

	recs, _ := drain(t, []*gateway{g}, db, "all_types", map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": 10})
	require.Len(t, recs, len(rows))
	var keys []any
	for _, r := range recs {
		assert.Equal(t, "+I", r.ChangeType)
		keys = append(keys, map[string]any{"id": r.Row["id"], "k": r.Row["k"]})
	}
	status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/all_types/records/lookup", map[string]any{"keys": keys})
	require.Equal(t, http.StatusOK, status, "%v", body)
	results := body["results"].([]any)
	require.Len(t, results, len(recs))
	for i, res := range results {
		m := res.(map[string]any)
		require.Equal(t, true, m["found"], "%v", m)
		assert.Equal(t, m["row"], map[string]any(recs[i].Row), "record %d (offset %d)", i, recs[i].Offset)
	}
}
