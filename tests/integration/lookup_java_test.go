//go:build integration

package integration

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// lkJavaUpsert is a Java single-file program that upserts rows (id, name,
// v) with the official Java client: name is "n\u00e4m\u00e9-<id>", v is
// "v<id>". Unicode escapes keep the source ASCII.
const lkJavaUpsert = `
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;

public class LookupJavaUpsert {
    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        try (Connection c = ConnectionFactory.createConnection(conf);
             Table t = c.getTable(TablePath.of(args[1], args[2]))) {
            UpsertWriter w = t.newUpsert().createWriter();
            for (int i = 3; i < args.length; i++) {
                int k = Integer.parseInt(args[i]);
                w.upsert(GenericRow.of(k, BinaryString.fromString("n\u00e4m\u00e9-" + k),
                        BinaryString.fromString("v" + k)));
            }
            w.flush();
        }
    }
}
`

// TestLookupRowsWrittenByJavaClient looks up rows the official Java client
// wrote, with keys whose encoded bytes end in bytes >= 0x80 (ints >= 128,
// negative ints, non-ASCII strings). The Rust-based peer hashes such bytes
// differently from Java, so this is the check that the adapter routes them
// to the buckets the Java client uses.
func TestLookupRowsWrittenByJavaClient(t *testing.T) {
	db := lkDatabase(t)
	path := lkCreateTable(t, db, "javarows", [][2]string{{"id", "int NOT NULL"}, {"name", "string NOT NULL"}, {"v", "string"}},
		"--primary-key", "id,name", "--buckets", "16")
	ids := []int64{0, 1, 127, 128, 150, 200, 255, 300, 1000, 16383, 16384, 65535, 1 << 20, -1, -200,
		math.MaxInt32, math.MinInt32}
	for k := int64(400); k < 400+60*991; k += 991 {
		ids = append(ids, k)
	}
	args := []string{wrBootstrap(t), path.Database, path.Table}
	for _, k := range ids {
		args = append(args, strconv.FormatInt(k, 10))
	}
	runJava(t, "LookupJavaUpsert.java", lkJavaUpsert, 3*time.Minute, args...)

	e := lkNewEnv(t)
	ctx := lkCtx(t, 60*time.Second)
	keys := make([][]domain.Datum, 0, len(ids)+2)
	for _, k := range ids {
		keys = append(keys, []domain.Datum{{I64: k}, {Bytes: []byte(fmt.Sprintf("nämé-%d", k))}})
	}
	keys = append(keys, []domain.Datum{{I64: 128}, {Bytes: []byte("name-128")}}, []domain.Datum{{I64: 129}, {Bytes: []byte("nämé-129")}})
	resp, err := e.lk.Lookup(ctx, &domain.LookupRequest{Table: path, Keys: keys})
	require.NoError(t, err)
	for i, k := range ids {
		r := resp.Results[i]
		require.Nil(t, r.Err, "id %d: %v", k, r.Err)
		if assert.NotNil(t, r.Row, "id %d written by the Java client must be found", k) {
			assert.Equal(t, fmt.Sprint("v", k), string(r.Row[2].Bytes), "id %d", k)
		}
	}
	for _, r := range resp.Results[len(ids):] {
		require.Nil(t, r.Err)
		assert.Nil(t, r.Row)
	}
}
