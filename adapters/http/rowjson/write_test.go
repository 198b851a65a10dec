package rowjson

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// pkCodec: id BIGINT NOT NULL, region STRING NOT NULL (primary key: region,
// id), name STRING, age INTEGER NOT NULL, tags ARRAY<STRING>.
func pkCodec(t testing.TB) *Codec {
	return mustCodec(t, TableSpec{
		Columns: []domain.Column{
			col("id", notNull(typ_(domain.TypeBigInt))),
			col("region", notNull(typ_(domain.TypeString))),
			col("name", typ_(domain.TypeString)),
			col("age", notNull(typ_(domain.TypeInteger))),
			col("tags", arrayT(typ_(domain.TypeString))),
		},
		PrimaryKey: []string{"region", "id"},
	})
}

// partialCodec: id BIGINT NOT NULL (primary key), a STRING, b INTEGER, c DOUBLE.
func partialCodec(t testing.TB) *Codec {
	return mustCodec(t, TableSpec{
		Columns: []domain.Column{
			col("id", notNull(typ_(domain.TypeBigInt))),
			col("a", typ_(domain.TypeString)),
			col("b", typ_(domain.TypeInteger)),
			col("c", typ_(domain.TypeDouble)),
		},
		PrimaryKey: []string{"id"},
	})
}

// logCodec: ts TIMESTAMP(3) NOT NULL, msg STRING.
func logCodec(t testing.TB) *Codec {
	return mustCodec(t, TableSpec{
		Columns: []domain.Column{
			col("ts", notNull(precT(domain.TypeTimestampNTZ, 3))),
			col("msg", typ_(domain.TypeString)),
		},
	})
}

func TestDecodeWriteValid(t *testing.T) {
	t.Parallel()
	c := pkCodec(t)
	body := []byte(`{"entries":[
		{"id":"e1","upsert":{"id":1,"region":"eu","name":"Ann","age":30,"tags":["a","b"]}},
		{"upsert":{"age":31,"region":"us","id":"2"},"id":"e2"},
		{"id":"e3","delete":{"region":"eu","id":1}}
	]}`)
	b, ids, err := c.DecodeWrite(body, Limits{})
	require.NoError(t, err)
	assert.Equal(t, []string{"e1", "e2", "e3"}, ids)
	assert.Nil(t, b.PartialUpdateColumns)
	require.Len(t, b.Entries, 3)

	e := b.Entries[0]
	assert.Equal(t, domain.OpUpsert, e.Op)
	require.Len(t, e.Row, 5)
	assert.Equal(t, int64(1), e.Row[0].I64)
	assert.Equal(t, "eu", string(e.Row[1].Bytes))
	assert.Equal(t, "Ann", string(e.Row[2].Bytes))
	assert.Equal(t, int64(30), e.Row[3].I64)
	require.Len(t, e.Row[4].Elems, 2)
	assert.Equal(t, "b", string(e.Row[4].Elems[1].Bytes))

	e = b.Entries[1]
	assert.Equal(t, domain.OpUpsert, e.Op)
	assert.Equal(t, int64(2), e.Row[0].I64)
	assert.True(t, e.Row[2].Null, "omitted nullable column is null")
	assert.True(t, e.Row[4].Null)
	assert.False(t, e.Row[3].Null)

	e = b.Entries[2]
	assert.Equal(t, domain.OpDelete, e.Op)
	require.Len(t, e.Row, 5)
	assert.Equal(t, "eu", string(e.Row[1].Bytes))
	assert.True(t, e.Row[2].Null && e.Row[3].Null && e.Row[4].Null, "non-key columns of a delete are null")

	// Decoded bytes are copies: the body may be reused.
	for i := range body {
		body[i] = 'x'
	}
	assert.Equal(t, "Ann", string(b.Entries[0].Row[2].Bytes))
	assert.Equal(t, "e1", ids[0])
}

func TestDecodeWriteLogTable(t *testing.T) {
	t.Parallel()
	b, ids, err := logCodec(t).DecodeWrite([]byte(`{"entries":[{"id":"x","append":{"ts":0,"msg":"hi"}},{"id":"y","append":{"ts":"1970-01-01T00:00:01"}}]}`), Limits{})
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "y"}, ids)
	assert.Equal(t, domain.OpAppend, b.Entries[1].Op)
	assert.Equal(t, int64(1000), b.Entries[1].Row[0].I64)
	assert.True(t, b.Entries[1].Row[1].Null)
}

func TestDecodeWriteErrors(t *testing.T) {
	t.Parallel()
	const row = `{"id":1,"region":"eu","age":3}`
	cases := []struct {
		name  string
		codec func(testing.TB) *Codec
		body  string
		lim   Limits
		kind  domain.Kind
		want  string
	}{
		{"two operations", pkCodec, `{"entries":[{"id":"e1","upsert":` + row + `,"delete":{"id":1,"region":"eu"}}]}`, Limits{}, 0,
			"entry `e1`: more than one operation (`upsert` and `delete`)"},
		{"no operation", pkCodec, `{"entries":[{"id":"e1"}]}`, Limits{}, 0,
			"entry `e1`: no operation: expected one of `upsert`, `delete`, `append`"},
		{"missing id", pkCodec, `{"entries":[{"upsert":` + row + `}]}`, Limits{}, 0,
			"entries[0]: missing `id`"},
		{"empty id", pkCodec, `{"entries":[{"id":"e0","upsert":` + row + `},{"id":"","upsert":` + row + `}]}`, Limits{}, 0,
			"entries[1]: `id` must be a non-empty string"},
		{"numeric id", pkCodec, `{"entries":[{"id":5,"upsert":` + row + `}]}`, Limits{}, 0,
			"entries[0]: `id` must be a non-empty string"},
		{"duplicate id", pkCodec, `{"entries":[{"id":"a","upsert":` + row + `},{"id":"b","upsert":` + row + `},{"id":"a","upsert":` + row + `}]}`, Limits{}, 0,
			"entry `a`: duplicate id (also entries[0])"},
		{"escaped duplicate id", pkCodec, `{"entries":[{"id":"a","upsert":` + row + `},{"id":"\u0061","upsert":` + row + `}]}`, Limits{}, 0,
			"entry `a`: duplicate id (also entries[0])"},
		{"append on pk table", pkCodec, `{"entries":[{"id":"e1","append":` + row + `}]}`, Limits{}, 0,
			"entry `e1`: `append` is not allowed on a primary-key table (use `upsert`)"},
		{"upsert on log table", logCodec, `{"entries":[{"id":"e1","upsert":{"ts":0}}]}`, Limits{}, 0,
			"entry `e1`: `upsert` is not allowed on a log table (use `append`)"},
		{"delete on log table", logCodec, `{"entries":[{"id":"e1","delete":{"ts":0}}]}`, Limits{}, 0,
			"entry `e1`: `delete` is not allowed on a log table (use `append`)"},
		{"unknown entry field", pkCodec, `{"entries":[{"id":"e1","upsert":` + row + `,"ttl":5}]}`, Limits{}, 0,
			"entry `e1`: unknown field `ttl` (an entry has `id` and one of `upsert`, `delete`, `append`)"},
		{"unknown top-level field", pkCodec, `{"entries":[{"id":"e1","upsert":` + row + `}],"mode":"x"}`, Limits{}, 0,
			"unknown field `mode` in the request body (expected `entries` and optionally `partial_update_columns`)"},
		{"unknown column", pkCodec, `{"entries":[{"id":"e1","upsert":{"id":1,"region":"eu","age":3,"nope":1}}]}`, Limits{}, 0,
			"entry `e1`: column `nope`: no such column"},
		{"missing primary-key column", pkCodec, `{"entries":[{"id":"e1","upsert":{"id":1,"age":3}}]}`, Limits{}, 0,
			"entry `e1`: column `region`: missing primary-key column"},
		{"delete missing primary-key column", pkCodec, `{"entries":[{"id":"e1","delete":{"region":"eu"}}]}`, Limits{}, 0,
			"entry `e1`: column `id`: missing primary-key column"},
		{"delete with a non-key column of the wrong type", pkCodec, `{"entries":[{"id":"e1","delete":{"id":1,"region":"eu","age":"x"}}]}`, Limits{}, 0,
			"entry `e1`: column `age`: INTEGER value \"x\" is not an integer"},
		{"delete with a null NOT NULL non-key column", pkCodec, `{"entries":[{"id":"e1","delete":{"id":1,"region":"eu","age":null}}]}`, Limits{}, 0,
			"entry `e1`: column `age`: must not be null (INTEGER NOT NULL)"},
		{"missing not-null column", pkCodec, `{"entries":[{"id":"e1","upsert":{"id":1,"region":"eu"}}]}`, Limits{}, 0,
			"entry `e1`: column `age`: missing value for a NOT NULL column"},
		{"null for not-null column", pkCodec, `{"entries":[{"id":"e1","upsert":{"id":1,"region":"eu","age":null}}]}`, Limits{}, 0,
			"entry `e1`: column `age`: must not be null (INTEGER NOT NULL)"},
		{"null primary key", pkCodec, `{"entries":[{"id":"e1","upsert":{"id":null,"region":"eu","age":1}}]}`, Limits{}, 0,
			"entry `e1`: column `id`: must not be null (BIGINT NOT NULL)"},
		{"nested path", pkCodec, `{"entries":[{"id":"e1","upsert":{"id":1,"region":"eu","age":1,"tags":["a",5]}}]}`, Limits{}, 0,
			"entry `e1`: column `tags[1]`: expected a JSON string for STRING, got a number"},
		{"duplicate column key", pkCodec, `{"entries":[{"id":"e1","upsert":{"id":1,"region":"eu","age":1,"age":2}}]}`, Limits{}, 0,
			"entry `e1`: column `age`: duplicate key"},
		{"duplicate entry key", pkCodec, `{"entries":[{"id":"e1","upsert":` + row + `,"id":"e2"}]}`, Limits{}, 0,
			`entry ` + "`e1`" + `: duplicate key "id"`},
		{"duplicate top-level key", pkCodec, `{"entries":[{"id":"e1","upsert":` + row + `}],"entries":[]}`, Limits{}, 0,
			`duplicate key "entries"`},
		{"invalid UTF-8", pkCodec, "{\"entries\":[{\"id\":\"e1\",\"upsert\":{\"id\":1,\"region\":\"e\xffu\",\"age\":1}}]}", Limits{}, 0,
			"entry `e1`: column `region`: invalid JSON at byte offset 51: invalid UTF-8"},
		{"error before id is named by id", pkCodec, `{"entries":[{"upsert":{"id":1,"region":"eu","age":"x","tags":["a"]},"id":"late"}]}`, Limits{}, 0,
			"entry `late`: column `age`: INTEGER value \"x\" is not an integer"},
		{"nested error before id is named by id", pkCodec, `{"entries":[{"upsert":{"id":1,"region":"eu","age":1,"tags":["a",{"b":[1]},"c"],"name":"n"},"ttl":{"x":[]},"id":"late"}]}`, Limits{}, 0,
			"entry `late`: column `tags[1]`: expected a JSON string for STRING, got an object"},
		{"pending value before id", pkCodec, `{"entries":[{"upsert":[1,2],"id":"late"}]}`, Limits{}, 0,
			"entry `late`: `upsert` must be a JSON object, got an array"},
		{"unknown column before id", pkCodec, `{"entries":[{"upsert":{"zz":{"a":1}},"id":"late"}]}`, Limits{}, 0,
			"entry `late`: column `zz`: no such column"},
		{"syntax error before id", pkCodec, "{\"entries\":[{\"upsert\":{\"id\":1,\"region\":\"e\xffu\"},\"id\":\"late\"}]}", Limits{}, 0,
			"entries[0]: column `region`: invalid JSON at byte offset 41: invalid UTF-8"},
		{"no id anywhere", pkCodec, `{"entries":[{"id":"ok","upsert":` + row + `},{"upsert":{"id":true}}]}`, Limits{}, 0,
			"entries[1]: column `id`: expected a JSON number or a numeric string for BIGINT, got a boolean"},
		{"entry not an object", pkCodec, `{"entries":["e1"]}`, Limits{}, 0,
			"entries[0]: must be a JSON object, got a string"},
		{"operation not an object", pkCodec, `{"entries":[{"id":"e1","upsert":null}]}`, Limits{}, 0,
			"entry `e1`: `upsert` must be a JSON object, got null"},
		{"entries not an array", pkCodec, `{"entries":{}}`, Limits{}, 0,
			"entries: must be a JSON array, got an object"},
		{"empty entries", pkCodec, `{"entries":[]}`, Limits{}, 0,
			"entries: must contain at least one entry"},
		{"missing entries", pkCodec, `{}`, Limits{}, 0,
			"missing `entries`"},
		{"body not an object", pkCodec, `[]`, Limits{}, 0,
			"the request body must be a JSON object, got an array"},
		{"empty body", pkCodec, ``, Limits{}, 0,
			"invalid JSON: unexpected end of input"},
		{"truncated body", pkCodec, `{"entries":[{"id":"e1","upsert":{"id":1`, Limits{}, 0,
			"entry `e1`: invalid JSON: unexpected end of input"},
		{"trailing data", pkCodec, `{"entries":[{"id":"e1","upsert":` + row + `}]} {}`, Limits{}, 0,
			"unexpected data after the request body's JSON object"},
		{"trailing garbage", pkCodec, `{"entries":[{"id":"e1","upsert":` + row + `}]} x`, Limits{}, 0,
			"invalid JSON at byte offset 66: invalid character 'x' at start of value"},
		{"too many entries", pkCodec, `{"entries":[{"id":"a","upsert":` + row + `},{"id":"b","upsert":` + row + `},{"id":"c","upsert":` + row + `}]}`, Limits{MaxEntries: 2}, domain.KindLimitExceeded,
			"entries: more than 2 entries"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := tc.codec(t).DecodeWrite([]byte(tc.body), tc.lim)
			kind := tc.kind
			if kind == 0 {
				kind = domain.KindInvalidArgument
			}
			assert.Equal(t, tc.want, errMessage(t, err, kind))
		})
	}
}

func TestDecodeWritePartialUpdate(t *testing.T) {
	t.Parallel()
	c := partialCodec(t)
	for _, body := range []string{
		`{"partial_update_columns":["b","id"],"entries":[{"id":"e1","upsert":{"id":1,"b":2}},{"id":"e2","upsert":{"id":2}},{"id":"e3","delete":{"id":3}}]}`,
		`{"entries":[{"id":"e1","upsert":{"id":1,"b":2}},{"id":"e2","upsert":{"id":2}},{"id":"e3","delete":{"id":3}}],"partial_update_columns":["b","id"]}`,
	} {
		b, ids, err := c.DecodeWrite([]byte(body), Limits{})
		require.NoError(t, err, body)
		assert.Equal(t, []int{0, 2}, b.PartialUpdateColumns)
		assert.Equal(t, []string{"e1", "e2", "e3"}, ids)
		assert.Equal(t, int64(2), b.Entries[0].Row[2].I64)
		assert.True(t, b.Entries[0].Row[1].Null && b.Entries[0].Row[3].Null)
		assert.True(t, b.Entries[1].Row[2].Null, "omitted target column is null")
		assert.Equal(t, domain.OpDelete, b.Entries[2].Op)
	}

	b, _, err := c.DecodeWrite([]byte(`{"partial_update_columns":null,"entries":[{"id":"e1","upsert":{"id":1,"a":"x"}}]}`), Limits{})
	require.NoError(t, err)
	assert.Nil(t, b.PartialUpdateColumns, "null means a full upsert")

	errCases := []struct {
		codec func(testing.TB) *Codec
		body  string
		want  string
	}{
		{partialCodec, `{"partial_update_columns":["b","id"],"entries":[{"id":"e1","upsert":{"id":1,"a":"x"}}]}`,
			"entry `e1`: column `a`: not in partial_update_columns"},
		{partialCodec, `{"entries":[{"id":"e0","upsert":{"id":0,"b":1}},{"id":"e1","upsert":{"id":1,"a":"x"}}],"partial_update_columns":["b","id"]}`,
			"entry `e1`: column `a`: not in partial_update_columns"},
		{partialCodec, `{"partial_update_columns":["b"],"entries":[]}`,
			"partial_update_columns: must include the primary-key column `id`"},
		{partialCodec, `{"partial_update_columns":[],"entries":[]}`,
			"partial_update_columns: must not be empty (leave it out to write whole rows)"},
		{partialCodec, `{"partial_update_columns":["id","zz"],"entries":[]}`,
			"partial_update_columns[1]: no such column `zz`"},
		{partialCodec, `{"partial_update_columns":["id","b","b"],"entries":[]}`,
			"partial_update_columns[2]: column `b` listed twice"},
		{partialCodec, `{"partial_update_columns":"id","entries":[]}`,
			"partial_update_columns: must be a JSON array of column names, got a string"},
		{partialCodec, `{"partial_update_columns":[1],"entries":[]}`,
			"partial_update_columns[0]: must be a column name string, got a number"},
		{partialCodec, `{"partial_update_columns":["id"],"entries":[{"id":"e1","upsert":{}}]}`,
			"entry `e1`: column `id`: missing primary-key column"},
		{logCodec, `{"partial_update_columns":["ts"],"entries":[]}`,
			"partial_update_columns: partial updates need a primary-key table"},
		{pkCodec, `{"partial_update_columns":["id","region","name"],"entries":[]}`,
			"partial_update_columns: the omitted column `age` is NOT NULL; Fluss refuses partial updates unless every column outside the primary key is nullable (\"Partial Update requires all columns except primary key to be nullable\"); make it nullable or write whole rows"},
		// A NOT NULL target is refused too: Fluss refuses the partial update
		// on the server whatever the targets (apache/fluss PartialUpdater).
		{pkCodec, `{"partial_update_columns":["id","region","age"],"entries":[{"id":"e1","upsert":{"id":1,"region":"eu","age":3}}]}`,
			"partial_update_columns: the target column `age` is NOT NULL; Fluss refuses partial updates unless every column outside the primary key is nullable (\"Partial Update requires all columns except primary key to be nullable\"); make it nullable or write whole rows"},
	}
	for _, tc := range errCases {
		_, _, err := tc.codec(t).DecodeWrite([]byte(tc.body), Limits{})
		assert.Equal(t, tc.want, errMessage(t, err, domain.KindInvalidArgument), tc.body)
	}
}

func TestDecodeWriteAutoIncrement(t *testing.T) {
	t.Parallel()
	c := mustCodec(t, TableSpec{
		Columns: []domain.Column{
			col("id", notNull(typ_(domain.TypeString))),
			col("seq", notNull(typ_(domain.TypeBigInt))),
			col("v", typ_(domain.TypeString)),
		},
		PrimaryKey:           []string{"id"},
		AutoIncrementColumns: []string{"seq"},
	})
	b, _, err := c.DecodeWrite([]byte(`{"entries":[{"id":"e1","upsert":{"id":"k","v":"x"}}]}`), Limits{})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2}, b.PartialUpdateColumns, "every column but the auto-increment one")
	assert.True(t, b.Entries[0].Row[1].Null)

	_, _, err = c.DecodeWrite([]byte(`{"entries":[{"id":"e1","upsert":{"id":"k","seq":5}}]}`), Limits{})
	assert.Equal(t, "entry `e1`: column `seq`: auto-increment column: Fluss assigns its value", errMessage(t, err, domain.KindInvalidArgument))
	_, _, err = c.DecodeWrite([]byte(`{"partial_update_columns":["id","seq"],"entries":[]}`), Limits{})
	assert.Equal(t, "partial_update_columns[1]: `seq` is an auto-increment column; Fluss assigns its value", errMessage(t, err, domain.KindInvalidArgument))
}

func TestNewCodecRejectsBadSchemas(t *testing.T) {
	t.Parallel()
	str := typ_(domain.TypeString)
	for _, spec := range []TableSpec{
		{},
		{Columns: []domain.Column{col("a", str), col("a", str)}},
		{Columns: []domain.Column{col("a", str)}, PrimaryKey: []string{"b"}},
		{Columns: []domain.Column{col("a", decimalT(39, 0))}},
		{Columns: []domain.Column{col("a", decimalT(5, 6))}},
		{Columns: []domain.Column{col("a", precT(domain.TypeTimestampLTZ, 10))}},
		{Columns: []domain.Column{col("a", charT(0))}},
		{Columns: []domain.Column{col("a", domain.DataType{Root: "VARIANT"})}},
		{Columns: []domain.Column{col("a", domain.DataType{Root: domain.TypeArray})}},
		{Columns: []domain.Column{col("a", rowT(fieldT("x", str), fieldT("x", str)))}},
	} {
		_, err := NewCodec(spec)
		assert.Equal(t, domain.KindInternal, domain.KindOf(err), "%+v", spec)
	}
}

func TestIDsAreIndependentOfPooledState(t *testing.T) {
	t.Parallel()
	c := partialCodec(t)
	var all [][]string
	for i := range 50 {
		id := strings.Repeat(string(rune('a'+i%26)), i+1)
		_, ids, err := c.DecodeWrite([]byte(`{"entries":[{"id":"`+id+`","upsert":{"id":1}}]}`), Limits{})
		require.NoError(t, err)
		all = append(all, ids)
	}
	for i, ids := range all {
		assert.Equal(t, strings.Repeat(string(rune('a'+i%26)), i+1), ids[0])
	}
}

// Duplicate member names are rejected in every object the decoder reads,
// however they are escaped.
func TestDuplicateKeysRejectedEverywhere(t *testing.T) {
	t.Parallel()
	intT, str := typ_(domain.TypeInteger), typ_(domain.TypeString)
	c := mustCodec(t, TableSpec{
		Columns: []domain.Column{
			col("k", notNull(intT)),
			col("r", rowT(fieldT("a", intT), fieldT("m", mapT(notNull(str), intT)))),
			col("mi", mapT(notNull(intT), intT)),
		},
		PrimaryKey: []string{"k"},
	})
	for _, tc := range []struct{ body, want string }{
		{`{"entries":[{"id":"e","upsert":{"k":1}}],"entries":[]}`, `duplicate key "entries"`},
		{`{"partial_update_columns":["k"],"partial_update_columns":["k"],"entries":[]}`, `duplicate key "partial_update_columns"`},
		{`{"entries":[{"id":"e","id":"f","upsert":{"k":1}}]}`, "entry `e`: duplicate key \"id\""},
		{`{"entries":[{"id":"e","upsert":{"k":1},"upsert":{"k":2}}]}`, "entry `e`: duplicate key \"upsert\""},
		{`{"entries":[{"id":"e","upsert":{"k":1},"\u0075psert":{"k":2}}]}`, "entry `e`: duplicate key \"upsert\""},
		{`{"entries":[{"id":"e","upsert":{"k":1,"\u006b":2}}]}`, "entry `e`: column `k`: duplicate key"},
		{`{"entries":[{"id":"e","upsert":{"k":1,"r":{"a":1,"a":2}}}]}`, "entry `e`: column `r.a`: duplicate key"},
		{`{"entries":[{"id":"e","upsert":{"k":1,"r":{"m":{"x":1,"y":2,"x":3}}}}]}`, "entry `e`: column `r.m[\"x\"]`: duplicate key"},
		{`{"entries":[{"id":"e","upsert":{"k":1,"mi":[{"key":1,"key":2,"value":3}]}}]}`, "entry `e`: column `mi[0]`: duplicate key \"key\""},
		{`{"entries":[{"id":"e","upsert":{"k":1,"mi":[{"key":1,"value":2,"value":3}]}}]}`, "entry `e`: column `mi[0]`: duplicate key \"value\""},
		{`{"entries":[{"id":"e","upsert":{"k":1,"mi":[{"key":1,"value":2},{"key":1,"value":3}]}}]}`, "entry `e`: column `mi[1].key`: duplicate map key (same as element [0])"},
	} {
		_, _, err := c.DecodeWrite([]byte(tc.body), Limits{})
		assert.Equal(t, tc.want, errMessage(t, err, domain.KindInvalidArgument), tc.body)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"keys":[{"k":1}],"keys":[{"k":2}]}`, `duplicate key "keys"`},
		{`{"keys":[{"k":1,"k":2}]}`, "keys[0]: column `k`: duplicate key"},
	} {
		_, err := c.DecodeKeys([]byte(tc.body), Limits{})
		assert.Equal(t, tc.want, errMessage(t, err, domain.KindInvalidArgument), tc.body)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"prefix_columns":["k"],"prefix_columns":["k"],"prefixes":[]}`, `duplicate key "prefix_columns"`},
		{`{"prefix_columns":["k"],"prefixes":[{"k":1}],"prefixes":[]}`, `duplicate key "prefixes"`},
		{`{"prefixes":[{"k":1}],"prefixes":[],"prefix_columns":["k"]}`, `duplicate key "prefixes"`},
		{`{"prefix_columns":["k"],"prefixes":[{"k":1,"k":1}]}`, "prefixes[0]: column `k`: duplicate key"},
	} {
		_, _, err := c.DecodePrefixes([]byte(tc.body), Limits{})
		assert.Equal(t, tc.want, errMessage(t, err, domain.KindInvalidArgument), tc.body)
	}
}

func TestBufferReuse(t *testing.T) {
	t.Parallel()
	c := mustCodec(t, TableSpec{
		Columns: []domain.Column{
			col("k", notNull(typ_(domain.TypeInteger))),
			col("s", typ_(domain.TypeString)),
			col("a", arrayT(typ_(domain.TypeInteger))),
			col("d", precT(domain.TypeTimestampNTZ, 9)),
		},
		PrimaryKey: []string{"k"},
	})
	full := func(k int) string {
		return fmt.Sprintf(`{"id":"f%d","upsert":{"k":%d,"s":"%s","a":[1,2,3],"d":"2024-01-01T00:00:00.000000007"}}`, k, k, strings.Repeat("x", 40))
	}
	var body strings.Builder
	body.WriteString(`{"entries":[`)
	for k := range 2000 {
		if k > 0 {
			body.WriteString(",")
		}
		body.WriteString(full(k))
	}
	body.WriteString(`]}`)

	var buf Buffer
	b1, _, err := c.DecodeWriteTo(&buf, []byte(body.String()), Limits{})
	require.NoError(t, err)
	require.Len(t, b1.Entries, 2000)
	require.Greater(t, buf.Retained(), 0)

	// Without Reset, a second decode leaves the first batch intact.
	b2, _, err := c.DecodeWriteTo(&buf, []byte(`{"entries":[{"id":"x","upsert":{"k":5}}]}`), Limits{})
	require.NoError(t, err)
	assert.Equal(t, int64(1999), b1.Entries[1999].Row[0].I64)
	assert.Equal(t, strings.Repeat("x", 40), string(b1.Entries[1999].Row[1].Bytes))
	assert.Equal(t, int64(5), b2.Entries[0].Row[0].I64)

	// After Reset the memory is reused, and reused Datums start out zero
	// (a batch that fits in the chunks Reset keeps, maxRetained).
	buf.Reset()
	retained := buf.Retained()
	var sparse strings.Builder
	sparse.WriteString(`{"entries":[`)
	for k := range 1500 {
		if k > 0 {
			sparse.WriteString(",")
		}
		fmt.Fprintf(&sparse, `{"id":"s%d","upsert":{"k":%d}}`, k, -k)
	}
	sparse.WriteString(`]}`)
	b3, ids, err := c.DecodeWriteTo(&buf, []byte(sparse.String()), Limits{})
	require.NoError(t, err)
	assert.Equal(t, retained, buf.Retained(), "no new chunks")
	for k, e := range b3.Entries {
		require.Equal(t, fmt.Sprintf("s%d", k), ids[k])
		require.Equal(t, int64(-k), e.Row[0].I64)
		for j := 1; j < 4; j++ {
			require.True(t, e.Row[j].Null)
			require.Zero(t, e.Row[j].I64)
			require.Zero(t, e.Row[j].Nanos)
			require.Nil(t, e.Row[j].Bytes)
			require.Nil(t, e.Row[j].Elems)
		}
	}
}

// TestDecodeWriteAutoIncrementTargets: on a table with an auto-increment
// column, explicit targets leave that column out, and a NOT NULL target
// outside the primary key is refused (Fluss refuses it on the server).
func TestDecodeWriteAutoIncrementTargets(t *testing.T) {
	t.Parallel()
	c := mustCodec(t, TableSpec{
		Columns: []domain.Column{
			col("id", notNull(typ_(domain.TypeString))),
			col("seq", notNull(typ_(domain.TypeBigInt))),
			col("v", typ_(domain.TypeString)),
			col("w", notNull(typ_(domain.TypeString))),
		},
		PrimaryKey:           []string{"id"},
		AutoIncrementColumns: []string{"seq"},
	})
	_, _, err := c.DecodeWrite([]byte(`{"partial_update_columns":["id","v","w"],"entries":[]}`), Limits{})
	assert.Equal(t, "partial_update_columns: the target column `w` is NOT NULL; Fluss refuses partial updates unless every column outside the primary key is nullable (\"Partial Update requires all columns except primary key to be nullable\"); make it nullable or write whole rows",
		errMessage(t, err, domain.KindInvalidArgument))
	_, _, err = c.DecodeWrite([]byte(`{"partial_update_columns":["id","v"],"entries":[]}`), Limits{})
	assert.Equal(t, "partial_update_columns: the omitted column `w` is NOT NULL; Fluss refuses partial updates unless every column outside the primary key is nullable (\"Partial Update requires all columns except primary key to be nullable\"); make it nullable or write whole rows",
		errMessage(t, err, domain.KindInvalidArgument))
}
