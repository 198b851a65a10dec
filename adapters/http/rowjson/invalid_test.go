package rowjson

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The body: 4 entries, 3 invalid (a bad value, an unknown column, a
// missing primary-key column), in several error paths of the decoder.
const fourEntries = `{"entries":[
 {"id":"a","upsert":{"id":1,"region":"eu","age":1}},
 {"id":"b","upsert":{"id":"x","region":"eu","age":1}},
 {"upsert":{"id":3,"region":"eu","age":1,"nope":{"deep":[1,2]}},"id":"c"},
 {"id":"d","upsert":{"region":"eu","age":1}}]}`

func TestDecodeWriteNamesEveryInvalidEntry(t *testing.T) {
	t.Parallel()
	_, _, err := pkCodec(t).DecodeWrite([]byte(fourEntries), Limits{})
	msg := errMessage(t, err, domain.KindInvalidArgument)
	assert.True(t, strings.HasPrefix(msg, "3 of 4 entries are invalid: "), msg)
	for _, want := range []string{"entry `b`: column `id`", "entry `c`: column `nope`", "entry `d`: column `id`"} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, "entry `a`")

	// More than MaxNamedInvalid: the rest are counted.
	var b strings.Builder
	b.WriteString(`{"entries":[`)
	for i := range 150 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"e%d","upsert":{"id":"bad","region":"eu","age":1}}`, i)
	}
	b.WriteString(`]}`)
	_, _, err = pkCodec(t).DecodeWrite([]byte(b.String()), Limits{})
	msg = errMessage(t, err, domain.KindInvalidArgument)
	assert.True(t, strings.HasPrefix(msg, "150 of 150 entries are invalid: "), msg[:80])
	assert.Contains(t, msg, "entry `e99`:")
	assert.NotContains(t, msg, "entry `e100`:")
	assert.True(t, strings.HasSuffix(msg, "; and 50 more"), msg[len(msg)-40:])

	// Malformed JSON anywhere still wins.
	_, _, err = pkCodec(t).DecodeWrite([]byte(fourEntries[:len(fourEntries)-2]), Limits{})
	assert.Contains(t, errMessage(t, err, domain.KindInvalidArgument), "invalid JSON")
}

func TestDecodeWriteReport(t *testing.T) {
	t.Parallel()
	batch, ids, rejected, err := pkCodec(t).DecodeWriteReport(nil, []byte(fourEntries), Limits{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, ids)
	require.Len(t, batch.Entries, 1)
	assert.EqualValues(t, 1, batch.Entries[0].Row[0].I64)
	require.Len(t, rejected, 3)
	for i, want := range []struct {
		index int
		id    string
	}{{1, "b"}, {2, "c"}, {3, "d"}} {
		assert.Equal(t, want.index, rejected[i].Index)
		assert.Equal(t, want.id, rejected[i].ID)
		assert.Contains(t, rejected[i].Message, "entry `"+want.id+"`")
	}

	// Entries not objects and entries after them.
	batch, ids, rejected, err = pkCodec(t).DecodeWriteReport(nil, []byte(`{"entries":[
	 {"id":"x","upsert":{"id":1,"region":"eu","age":1},"delete":{"id":1,"region":"eu"}},
	 {"id":"y","upsert":{"id":2,"region":"eu","age":1}}]}`), Limits{})
	require.NoError(t, err)
	assert.Equal(t, []string{"y"}, ids)
	assert.Len(t, batch.Entries, 1)
	require.Len(t, rejected, 1)
	assert.Equal(t, "x", rejected[0].ID)

	// An invalid entry without a usable id (or with a duplicate one) cannot
	// get a verdict: the whole body is refused, every problem named.
	for _, body := range []string{
		`{"entries":[{"id":"a","upsert":{"id":1,"region":"eu","age":1}},{"upsert":{"id":"x","region":"eu","age":1}}]}`,
		`{"entries":[{"id":"a","upsert":{"id":1,"region":"eu","age":1}},7]}`,
		`{"entries":[{"id":"a","upsert":{"id":1,"region":"eu","age":1}},{"id":"a","upsert":{"id":2,"region":"eu","age":1}}]}`,
	} {
		_, _, _, err = pkCodec(t).DecodeWriteReport(nil, []byte(body), Limits{})
		assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err), "%s: %v", body, err)
	}

	// Every entry invalid: an empty batch and every verdict.
	batch, ids, rejected, err = pkCodec(t).DecodeWriteReport(nil, []byte(`{"entries":[{"id":"a","upsert":{"id":"q","region":"eu","age":1}}]}`), Limits{})
	require.NoError(t, err)
	assert.Empty(t, batch.Entries)
	assert.Empty(t, ids)
	assert.Len(t, rejected, 1)
}

func TestDecodeWriteDeferredPartialAfterInvalidEntry(t *testing.T) {
	t.Parallel()
	body := `{"entries":[{"id":"bad","upsert":{"id":"x"}},{"id":"ok","upsert":{"id":1,"a":"s","b":2}}],"partial_update_columns":["id","a"]}`
	_, _, err := partialCodec(t).DecodeWrite([]byte(body), Limits{})
	msg := errMessage(t, err, domain.KindInvalidArgument)
	assert.Contains(t, msg, "entry `ok`: column `b`: not in partial_update_columns", msg)
}
