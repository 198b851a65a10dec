package benchrows

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArrowStreamMatchesEntries: the Arrow stream carries, row by row, the
// values of the JSON entries, in batches of per rows.
func TestArrowStreamMatchesEntries(t *testing.T) {
	body, err := ArrowStream(5, 2)
	require.NoError(t, err)
	r, err := ipc.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	defer r.Release()
	assert.True(t, r.Schema().Equal(Schema))
	row, sizes := 0, []int64{}
	for r.Next() {
		rec := r.RecordBatch()
		sizes = append(sizes, rec.NumRows())
		for i := 0; i < int(rec.NumRows()); i++ {
			var e struct {
				ID     string
				Append map[string]any
			}
			require.NoError(t, json.Unmarshal([]byte(Entry(row)), &e))
			a := e.Append
			assert.EqualValues(t, a["id"], rec.Column(0).(*array.Int64).Value(i))
			assert.Equal(t, a["name"], rec.Column(1).(*array.String).Value(i))
			assert.Equal(t, a["city"], rec.Column(2).(*array.String).Value(i))
			assert.EqualValues(t, a["age"], rec.Column(3).(*array.Int32).Value(i))
			assert.Equal(t, a["score"], rec.Column(4).(*array.Float64).Value(i))
			assert.Equal(t, a["amount"], rec.Column(5).(*array.Decimal128).Value(i).ToString(2))
			ts, err := time.Parse(time.RFC3339, a["ts"].(string))
			require.NoError(t, err)
			assert.Equal(t, arrow.Timestamp(ts.UnixMilli()), rec.Column(6).(*array.Timestamp).Value(i))
			assert.Equal(t, a["flag"], rec.Column(7).(*array.Boolean).Value(i))
			p, err := base64.StdEncoding.DecodeString(a["payload"].(string))
			require.NoError(t, err)
			assert.Equal(t, p, rec.Column(8).(*array.Binary).Value(i))
			assert.EqualValues(t, a["n"], rec.Column(9).(*array.Int64).Value(i))
			row++
		}
	}
	require.NoError(t, r.Err())
	assert.Equal(t, []int64{2, 2, 1}, sizes)
	assert.Equal(t, 5, row)
}
