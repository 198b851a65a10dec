package rowjson

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestReadOptions(t *testing.T) {
	t.Parallel()
	c := pkCodec(t)
	keys, ro, err := c.DecodeKeysWith([]byte(`{"columns":["name","id"],"keys":[{"region":"eu","id":1}]}`), Limits{})
	require.NoError(t, err)
	assert.Len(t, keys, 1)
	assert.Equal(t, []int{2, 0}, ro.Columns)

	_, ro, err = c.DecodeKeysWith([]byte(`{"keys":[{"region":"eu","id":1}]}`), Limits{})
	require.NoError(t, err)
	assert.Nil(t, ro.Columns, "no projection")

	cols, prefixes, ro, err := c.DecodePrefixesWith([]byte(`{"prefix_columns":["region"],"prefixes":[{"region":"eu"}],"page_token":"3.x","columns":["age"]}`), Limits{})
	require.NoError(t, err)
	assert.Equal(t, []string{"region"}, cols)
	assert.Len(t, prefixes, 1)
	assert.Equal(t, "3.x", ro.PageToken)
	assert.Equal(t, []int{3}, ro.Columns)

	for body, want := range map[string]string{
		`{"columns":["nope"],"keys":[{"region":"eu","id":1}]}`:                "columns[0]: no such column `nope`",
		`{"columns":["id","id"],"keys":[{"region":"eu","id":1}]}`:             "columns[1]: column `id` listed twice",
		`{"columns":[],"keys":[{"region":"eu","id":1}]}`:                      "columns: must name at least one column",
		`{"columns":"id","keys":[{"region":"eu","id":1}]}`:                    "columns: must be a JSON array of column names, got a string",
		`{"page_token":"1.x","keys":[{"region":"eu","id":1}]}`:                "unknown field `page_token` in the request body (expected `keys`)",
		`{"columns":["id"],"columns":["id"],"keys":[{"region":"eu","id":1}]}`: "duplicate",
	} {
		_, _, err := c.DecodeKeysWith([]byte(body), Limits{})
		assert.Contains(t, errMessage(t, err, domain.KindInvalidArgument), want, body)
	}
	// Without the extension entry points the fields stay unknown.
	_, err = c.DecodeKeys([]byte(`{"columns":["id"],"keys":[{"region":"eu","id":1}]}`), Limits{})
	assert.Contains(t, errMessage(t, err, domain.KindInvalidArgument), "unknown field `columns`")
}

func TestEpochMillisStringMessage(t *testing.T) {
	t.Parallel()
	c := mustCodec(t, TableSpec{Columns: []domain.Column{
		col("id", notNull(typ_(domain.TypeBigInt))), col("ts", precT(domain.TypeTimestampLTZ, 3)),
	}, PrimaryKey: []string{"id"}})
	_, _, err := c.DecodeWrite([]byte(`{"entries":[{"id":"a","upsert":{"id":1,"ts":"1764576000000"}}]}`), Limits{})
	msg := errMessage(t, err, domain.KindInvalidArgument)
	assert.Contains(t, msg, "entry `a`: column `ts`")
	assert.Contains(t, msg, "ISO-8601")
	assert.Contains(t, msg, "epoch milliseconds as a JSON number")
	_, _, err = c.DecodeWrite([]byte(`{"entries":[{"id":"a","upsert":{"id":1,"ts":1764576000000}}]}`), Limits{})
	assert.NoError(t, err, "a JSON number is epoch milliseconds")
}

// TestTimestampPrecisionRuleAsDocumented pins the README's rule: for
// TIMESTAMP_LTZ(3), Python's microsecond spelling is accepted when the
// sub-millisecond digits are zeros and refused otherwise (no truncation);
// milliseconds and epoch milliseconds pass.
func TestTimestampPrecisionRuleAsDocumented(t *testing.T) {
	t.Parallel()
	c := mustCodec(t, TableSpec{Columns: []domain.Column{
		col("id", notNull(typ_(domain.TypeBigInt))), col("ts", precT(domain.TypeTimestampLTZ, 3)),
	}, PrimaryKey: []string{"id"}})
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{`"2026-12-01T08:00:00.123Z"`, true},
		{`"2026-12-01T08:00:00.123000Z"`, true},
		{`"2026-12-01T08:00:00.123000+00:00"`, true},
		{`"2026-12-01T08:00:00.123456+00:00"`, false},
		{`1764576000123`, true},
	} {
		_, _, err := c.DecodeWrite([]byte(`{"entries":[{"id":"a","upsert":{"id":1,"ts":`+tc.value+`}}]}`), Limits{})
		if tc.ok {
			assert.NoError(t, err, tc.value)
			continue
		}
		assert.Contains(t, errMessage(t, err, domain.KindInvalidArgument), "more fraction digits than precision 3", tc.value)
	}
}
