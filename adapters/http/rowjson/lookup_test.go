package rowjson

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestDecodeKeys(t *testing.T) {
	t.Parallel()
	c := pkCodec(t) // primary key (region, id)
	keys, err := c.DecodeKeys([]byte(`{"keys":[{"id":1,"region":"eu"},{"region":"us","id":"2"}]}`), Limits{})
	require.NoError(t, err)
	require.Len(t, keys, 2)
	require.Len(t, keys[0], 2)
	assert.Equal(t, "eu", string(keys[0][0].Bytes), "primary-key order")
	assert.Equal(t, int64(1), keys[0][1].I64)
	assert.Equal(t, "us", string(keys[1][0].Bytes))
	assert.Equal(t, int64(2), keys[1][1].I64)

	for _, tc := range []struct {
		body string
		lim  Limits
		kind domain.Kind
		want string
	}{
		{`{"keys":[{"id":1,"region":"eu"},{"id":2}]}`, Limits{}, 0, "keys[1]: column `region`: missing primary-key column"},
		{`{"keys":[{"id":1,"region":"eu","name":"x"}]}`, Limits{}, 0, "keys[0]: column `name`: not a primary-key column"},
		{`{"keys":[{"id":1,"region":"eu","zz":1}]}`, Limits{}, 0, "keys[0]: column `zz`: no such column"},
		{`{"keys":[{"id":null,"region":"eu"}]}`, Limits{}, 0, "keys[0]: column `id`: must not be null (BIGINT NOT NULL)"},
		{`{"keys":[{"id":1.5,"region":"eu"}]}`, Limits{}, 0, "keys[0]: column `id`: BIGINT value 1.5 is not a whole number"},
		{`{"keys":[{"id":1,"region":"eu","id":2}]}`, Limits{}, 0, "keys[0]: column `id`: duplicate key"},
		{`{"keys":[7]}`, Limits{}, 0, "keys[0]: a key must be a JSON object, got a number"},
		{`{"keys":[]}`, Limits{}, 0, "keys: must contain at least one element"},
		{`{"keys":{}}`, Limits{}, 0, "keys: must be a JSON array, got an object"},
		{`{}`, Limits{}, 0, "missing `keys`"},
		{`{"keys":[{"id":1,"region":"eu"}],"x":1}`, Limits{}, 0, "unknown field `x` in the request body (expected `keys`)"},
		{`{"keys":[{"id":1,"region":"a"},{"id":1,"region":"b"}]}`, Limits{MaxEntries: 1}, domain.KindLimitExceeded, "keys: more than 1 elements"},
	} {
		_, err := c.DecodeKeys([]byte(tc.body), tc.lim)
		kind := tc.kind
		if kind == 0 {
			kind = domain.KindInvalidArgument
		}
		assert.Equal(t, tc.want, errMessage(t, err, kind), tc.body)
	}

	_, err = logCodec(t).DecodeKeys([]byte(`{"keys":[{"ts":1}]}`), Limits{})
	assert.Equal(t, "lookups need a primary-key table", errMessage(t, err, domain.KindInvalidArgument))
}

func TestDecodePrefixes(t *testing.T) {
	t.Parallel()
	c := pkCodec(t)
	for _, body := range []string{
		`{"prefix_columns":["region"],"prefixes":[{"region":"eu"},{"region":"us"}]}`,
		`{"prefixes":[{"region":"eu"},{"region":"us"}],"prefix_columns":["region"]}`,
	} {
		cols, prefixes, err := c.DecodePrefixes([]byte(body), Limits{})
		require.NoError(t, err, body)
		assert.Equal(t, []string{"region"}, cols)
		require.Len(t, prefixes, 2)
		assert.Equal(t, "us", string(prefixes[1][0].Bytes))
	}
	cols, prefixes, err := c.DecodePrefixes([]byte(`{"prefix_columns":["id","region"],"prefixes":[{"region":"eu","id":4}]}`), Limits{})
	require.NoError(t, err)
	assert.Equal(t, []string{"id", "region"}, cols)
	assert.Equal(t, int64(4), prefixes[0][0].I64, "prefix_columns order")
	assert.Equal(t, "eu", string(prefixes[0][1].Bytes))

	for _, tc := range []struct{ body, want string }{
		{`{"prefix_columns":["region"],"prefixes":[{"region":"eu","id":1}]}`, "prefixes[0]: column `id`: not a prefix column"},
		{`{"prefixes":[{"region":"eu","id":1}],"prefix_columns":["region"]}`, "prefixes[0]: column `id`: not a prefix column"},
		{`{"prefix_columns":["region","id"],"prefixes":[{"region":"eu"}]}`, "prefixes[0]: column `id`: missing prefix column"},
		{`{"prefix_columns":["region"],"prefixes":[{"region":null}]}`, "prefixes[0]: column `region`: must not be null (STRING NOT NULL)"},
		{`{"prefix_columns":["zz"],"prefixes":[]}`, "prefix_columns[0]: no such column `zz`"},
		{`{"prefix_columns":["id","id"],"prefixes":[]}`, "prefix_columns[1]: column `id` listed twice"},
		{`{"prefix_columns":[],"prefixes":[]}`, "prefix_columns: must name at least one column"},
		{`{"prefix_columns":["id"]}`, "missing `prefixes`"},
		{`{"prefixes":[{"id":1}]}`, "missing `prefix_columns`"},
		{`{"prefix_columns":["id"],"prefixes":[]}`, "prefixes: must contain at least one element"},
	} {
		_, _, err := c.DecodePrefixes([]byte(tc.body), Limits{})
		assert.Equal(t, tc.want, errMessage(t, err, domain.KindInvalidArgument), tc.body)
	}
}
