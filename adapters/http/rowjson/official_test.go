package rowjson

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The tests in this file restate, case by case, the unit tests of the
// official gateway's row decoder (apache/fluss fluss-gateway,
// src/protocol/rest/codec/decoder.rs, commit a57d74c2; temporal.rs as found
// in a fork at e6fab2fe): same inputs, same accept/refuse outcome and, where
// the official test pins it, the same decoded value and the same part of the
// message (the path). Each test names the official test it restates.

// TestOfficialIntegerSpellings: decodes_integer_boundaries_and_protojson_spellings,
// decodes_exact_numeric_decimal_and_non_finite_values (BIGINT part),
// borrowed_raw_value_reaches_decoder_without_losing_precision.
func TestOfficialIntegerSpellings(t *testing.T) {
	t.Parallel()
	tiny, small, integer, bigint := typ_(domain.TypeTinyInt), typ_(domain.TypeSmallInt), typ_(domain.TypeInteger), typ_(domain.TypeBigInt)
	runValueCases(t, []valueCase{
		{typ: tiny, in: `-128`, want: i64(math.MinInt8)},
		{typ: tiny, in: `127`, want: i64(math.MaxInt8)},
		{typ: small, in: `-32768`, want: i64(math.MinInt16)},
		{typ: small, in: `32767`, want: i64(math.MaxInt16)},
		{typ: integer, in: `-2147483648`, want: i64(math.MinInt32)},
		{typ: integer, in: `2147483647`, want: i64(math.MaxInt32)},
		{typ: integer, in: `"42"`, want: i64(42)},
		{typ: integer, in: `1.0`, want: i64(1)},
		{typ: integer, in: `"1e2"`, want: i64(100)},
		{typ: integer, in: `1.5e1`, want: i64(15)},
		{typ: bigint, in: `"9007199254740993"`, want: i64(9007199254740993)},
		{typ: notNull(bigint), in: `9007199254740993`, want: i64(9007199254740993)},
		{typ: bigint, in: `"-9223372036854775808"`, want: i64(math.MinInt64)},
		{typ: tiny, in: `128`, err: "out of range"},
		{typ: small, in: `-32769`, err: "out of range"},
		{typ: integer, in: `1.5`, err: "is not a whole number"},
		{typ: integer, in: `"1e-1"`, err: "is not a whole number"},
		{typ: integer, in: `2147483648`, err: "out of range"},
		{typ: integer, in: `"not-an-int"`, err: "is not an integer"},
		{typ: bigint, in: `"9223372036854775808"`, err: "out of range"},
		{typ: bigint, in: `9223372036854775808`, err: "out of range"},
		{typ: bigint, in: `"1.5"`, err: "is not a whole number"},
		{typ: bigint, in: `1e400`, err: "out of range"},
		// By code (integer_lexeme): signs, leading zeros, exponent spellings.
		{typ: integer, in: `"+7"`, want: i64(7)},
		{typ: integer, in: `"0042"`, want: i64(42)},
		{typ: integer, in: `"1E+2"`, want: i64(100)},
		{typ: integer, in: `"100e-2"`, want: i64(1)},
		{typ: integer, in: `"100e-3"`, err: "is not a whole number"},
		{typ: integer, in: `"0e9223372036854775807"`, want: i64(0)},
		{typ: integer, in: `"0e9223372036854775808"`, err: "is not an integer"},
		{typ: bigint, in: `"9223372036854775807e0"`, want: i64(math.MaxInt64)},
		{typ: bigint, in: `"0.00000000000000000009223372036854775807e38"`, want: i64(math.MaxInt64)},
		{typ: bigint, in: `"1e19"`, err: "out of range"},
		{typ: integer, in: `"1."`, err: "is not an integer"},
		{typ: integer, in: `".5"`, err: "is not an integer"},
		{typ: integer, in: `"1e"`, err: "is not an integer"},
		{typ: integer, in: `"+-1"`, err: "is not an integer"},
		{typ: integer, in: `"0x10"`, err: "is not an integer"},
		{typ: integer, in: `" 1"`, err: "is not an integer"},
	})
}

// TestOfficialDecimalAndFloat: decodes_exact_numeric_decimal_and_non_finite_values.
func TestOfficialDecimalAndFloat(t *testing.T) {
	t.Parallel()
	d52, d3818 := decimalT(5, 2), decimalT(38, 18)
	fl, db := typ_(domain.TypeFloat), typ_(domain.TypeDouble)
	runValueCases(t, []valueCase{
		{typ: d3818, in: `9007199254740993.000000000000000001`, want: big_("9007199254740993000000000000000001")},
		{typ: d52, in: `"12.3400"`, want: i64(1234)},
		{typ: d52, in: `1e2`, want: i64(10000)},
		{typ: d52, in: `"1e2"`, want: i64(10000)},
		{typ: d52, in: `1234e-2`, want: i64(1234)},
		{typ: d52, in: `"+1.234E+1"`, want: i64(1234)},
		{typ: d52, in: `"-1.234e1"`, want: i64(-1234)},
		{typ: d52, in: `123400e-4`, want: i64(1234)},
		{typ: d52, in: `"12.345"`, err: "more than 2 fraction digits"},
		{typ: d52, in: `1e-3`, err: "more than 2 fraction digits"},
		{typ: d52, in: `1e3`, err: "exceeds precision 5"},
		{typ: d52, in: `"1e"`, err: "is not a number"},
		{typ: d52, in: `"1e+"`, err: "is not a number"},
		{typ: d52, in: `"0einvalid"`, err: "is not a number"},
		{typ: d52, in: `"0e9223372036854775808"`, err: "is not a number"},
		{typ: d52, in: `"1000.00"`, err: "exceeds precision 5"},
		{typ: db, in: `1e400`, err: "out of range"},
		{typ: db, in: `"1.5"`, want: f64(1.5)},
		{typ: db, in: `"Infinity"`, want: f64(math.Inf(1))},
		{typ: fl, in: `3.5e38`, err: "out of the 32-bit float range"},
		{typ: fl, in: `"NaN"`, want: f64(math.NaN())},
		// By code (decode_float): only the three exact non-finite spellings.
		{typ: db, in: `"-Infinity"`, want: f64(math.Inf(-1))},
		{typ: db, in: `"nan"`, err: `got "nan"`},
		{typ: db, in: `"inf"`, err: `got "inf"`},
		{typ: db, in: `"infinity"`, err: `got "infinity"`},
		{typ: db, in: `"+Infinity"`, err: `got "+Infinity"`},
		// FLOAT is parsed as a double, then narrowed (Rust's `as f32`).
		{typ: fl, in: `"0.1"`, want: f64(float64(float32(0.1)))},
		// 1 + 2^-24 + tiny: a double first (1 + 2^-24 exactly), then a tie to even.
		{typ: fl, in: `1.00000005960464477539062500000000001`, want: f64(1)},
	})
}

// TestOfficialStringsAndBinary: decodes_strings_and_base64_binary.
func TestOfficialStringsAndBinary(t *testing.T) {
	t.Parallel()
	c3 := charT(3)
	runValueCases(t, []valueCase{
		{typ: c3, in: `"雪ab"`, want: bs("雪ab")},
		{typ: c3, in: `"a"`, want: bs("a")},
		{typ: c3, in: `"雪abc"`, err: "4"},
		{typ: typ_(domain.TypeString), in: `"a\n雪"`, want: bs("a\n雪")},
		{typ: typ_(domain.TypeBytes), in: `"AP8="`, want: bs("\x00\xff")},
		{typ: binaryT(2), in: `"AP8="`, want: bs("\x00\xff")},
		{typ: typ_(domain.TypeBytes), in: `"not-base64"`, err: "invalid base64"},
		{typ: binaryT(3), in: `"AP8="`, err: "has 2 bytes, want exactly 3"},
	})
}

// TestOfficialDates: decodes_dates_and_rejects_invalid_calendar_values and
// temporal.rs validates_dates.
func TestOfficialDates(t *testing.T) {
	t.Parallel()
	date := typ_(domain.TypeDate)
	runValueCases(t, []valueCase{
		{typ: date, in: `"1970-01-01"`, want: i64(0)},
		{typ: date, in: `"1969-12-31"`, want: i64(-1)},
		{typ: date, in: `"-0001-12-31"`, want: i64(-719529)},
		{typ: date, in: `"+10000-01-01"`, want: i64(2932897)},
		{typ: date, in: `"2026-02-29"`, err: "day out of range"},
		{typ: date, in: `"2026-02-30"`, err: "day out of range"},
		{typ: date, in: `"2026-13-01"`, err: "month out of range"},
		{typ: date, in: `"26-01-01"`, err: "at least 4 digits"},
	})
}

// TestOfficialTemporal: decodes_temporal_values_without_losing_supported_precision
// and temporal.rs parses_time_and_zone_boundaries.
func TestOfficialTemporal(t *testing.T) {
	t.Parallel()
	t3, t6 := precT(domain.TypeTime, 3), precT(domain.TypeTime, 6)
	n0, n3, n6, n9 := precT(domain.TypeTimestampNTZ, 0), precT(domain.TypeTimestampNTZ, 3), precT(domain.TypeTimestampNTZ, 6), precT(domain.TypeTimestampNTZ, 9)
	l3 := precT(domain.TypeTimestampLTZ, 3)
	runValueCases(t, []valueCase{
		{typ: t3, in: `"12:34:56.789"`, want: i64(45296789)},
		{typ: t6, in: `"12:34:56.789123"`, err: "Fluss stores TIME in milliseconds"},
		{typ: t3, in: `"24:00:00"`, err: "out of range"},
		{typ: n6, in: `"1969-12-31T23:59:59.999999"`, want: ts(-1, 999000)},
		{typ: l3, in: `"2026-01-31T14:34:56.789+02:00"`, want: ts(1769862896789, 0)},
		{typ: n3, in: `"2026-01-31T12:34:56.789Z"`, err: "takes no zone offset"},
		{typ: l3, in: `"2026-01-31T12:34:56.789"`, err: "zone offset (Z or ±hh:mm) is required"},
		{typ: n3, in: `"2026-01-31 12:34:56.789"`, err: "expected 'T'"},
		{typ: n3, in: `-1`, want: ts(-1, 0)},
		{typ: n0, in: `1`, err: "beyond precision 0"},
		{typ: n9, in: `"雪"`, err: "invalid TIMESTAMP(9)"},
		{typ: l3, in: `"2026-01-31T12:00:00+18:00"`, want: ts(1769860800000-18*3600_000, 0)},
		{typ: l3, in: `"2026-01-31T12:00:00+18:01"`, err: "zone offset out of range"},
		{typ: l3, in: `"+10000-01-01T00:00:00Z"`, want: ts(2932897*86400_000, 0)},
		{typ: l3, in: `"2026-01-31 12:00:00Z"`, err: "expected 'T'"},
		// By code: epoch milliseconds follow the integer spellings, and only
		// as a JSON number (a string always goes to the ISO parser).
		{typ: n3, in: `1.5e3`, want: ts(1500, 0)},
		{typ: n3, in: `"1500"`, err: "invalid TIMESTAMP(3)"},
	})
}

// TestOfficialNestedValues: decodes_nested_arrays_maps_and_rows,
// accepts_object_shorthand_for_string_keyed_maps,
// rejects_duplicate_keys_in_map_entry_arrays,
// keeps_object_shorthand_limited_to_string_map_keys,
// rejects_malformed_containers_and_enforces_recursive_nullability,
// nested_row_shape_errors_are_schema_mismatches,
// reports_nested_paths_and_rejects_duplicate_nested_fields.
func TestOfficialNestedValues(t *testing.T) {
	t.Parallel()
	str, integer := typ_(domain.TypeString), typ_(domain.TypeInteger)
	nested := arrayT(mapT(notNull(str), rowT(fieldT("id", notNull(typ_(domain.TypeBigInt))), fieldT("name", str))))
	strInt := mapT(notNull(str), integer)
	intStr := mapT(notNull(integer), str)
	nnMap := mapT(notNull(str), notNull(integer))
	rowID := rowT(fieldT("id", notNull(integer)))
	rowItems := rowT(fieldT("items", arrayT(integer)))
	runValueCases(t, []valueCase{
		{typ: nested, in: `[ [{"key":"a","value":{"id":"9007199254740993"}}] ]`,
			want: elems(*elems(*bs("a"), *elems(*i64(9007199254740993), *null())))},
		{typ: strInt, in: `{"b":2,"a":1}`, want: elems(*bs("b"), *i64(2), *bs("a"), *i64(1))},
		{typ: strInt, in: `[{"key":"b","value":2},{"key":"a","value":1}]`, want: elems(*bs("b"), *i64(2), *bs("a"), *i64(1))},
		{typ: mapT(notNull(str), arrayT(integer)), in: `{"items":[1,2]}`, want: elems(*bs("items"), *elems(*i64(1), *i64(2)))},
		{typ: strInt, in: `{"a":1,"a":2}`, err: "duplicate key", path: `v["a"]`},
		{typ: strInt, in: `[{"key":"role","value":1},{"key":"region","value":2},{"key":"role","value":3}]`, err: "duplicate map key", path: "v[2].key"},
		{typ: intStr, in: `[{"key":7,"value":"first"},{"key":"7","value":"second"}]`, err: "duplicate map key", path: "v[1].key"},
		{typ: intStr, in: `{"1":"a"}`, err: "got an object"},
		{typ: intStr, in: `[{"key":1,"value":"a"}]`, want: elems(*i64(1), *bs("a"))},
		{typ: arrayT(notNull(integer)), in: `[1,null]`, err: "must not be null", path: "v[1]"},
		{typ: nnMap, in: `[{"key":"a"}]`, err: "missing map value", path: "v[0].value"},
		{typ: nnMap, in: `[{"key":"a","value":1,"extra":2}]`, err: "unknown field", path: "v[0].extra"},
		{typ: nnMap, in: `[{"key":"a","key":"b","value":1}]`, err: "duplicate key", path: "v[0]"},
		{typ: nnMap, in: `[{"key":null,"value":1}]`, err: "must not be null", path: "v[0].key"},
		{typ: nnMap, in: `[1]`, err: "must be a JSON object", path: "v[0]"},
		{typ: rowID, in: `{}`, err: "missing value for a NOT NULL field", path: "v.id"},
		{typ: rowID, in: `{"new":1}`, err: "no such field", path: "v.new"},
		{typ: rowID, in: `[1]`, err: "got an array"},
		{typ: rowItems, in: `{"items":[1,"bad"]}`, err: "is not an integer", path: "v.items[1]"},
		{typ: rowItems, in: `{"items":[1],"items":[2]}`, err: "duplicate key", path: "v.items"},
	})
}

// TestOfficialRowShapes: complete_and_sparse_rows_follow_schema_order,
// sparse_rows_require_only_non_nullable_targets,
// classifies_shape_and_value_failures,
// rejects_non_object_rows_malformed_json_and_unknown_sparse_columns.
func TestOfficialRowShapes(t *testing.T) {
	t.Parallel()
	three := mustCodec(t, TableSpec{Columns: []domain.Column{
		col("id", notNull(typ_(domain.TypeInteger))),
		col("name", typ_(domain.TypeString)),
		col("amount", notNull(typ_(domain.TypeBigInt))),
	}})
	b, _, err := three.DecodeWrite([]byte(`{"entries":[{"id":"c","append":{"amount":9,"id":1}}]}`), Limits{})
	require.NoError(t, err)
	assert.Equal(t, []domain.Datum{{I64: 1}, {Null: true}, {I64: 9}}, b.Entries[0].Row)

	kv := mustCodec(t, TableSpec{Columns: []domain.Column{
		col("id", notNull(typ_(domain.TypeInteger))),
		col("name", typ_(domain.TypeString)),
	}, PrimaryKey: []string{"id"}})
	sparse := func(row string) error {
		_, _, err := kv.DecodeWrite([]byte(`{"partial_update_columns":["id","name"],"entries":[{"id":"e","upsert":`+row+`}]}`), Limits{})
		return err
	}
	assert.NoError(t, sparse(`{"id":1}`))
	assert.NoError(t, sparse(`{"id":1,"name":null}`))
	assert.Error(t, sparse(`{}`))
	assert.Error(t, sparse(`{"id":null}`))

	one := mustCodec(t, TableSpec{Columns: []domain.Column{col("id", notNull(typ_(domain.TypeInteger)))}})
	for _, tc := range []struct{ row, msg string }{
		{`{"new":1}`, "entry `bad`: column `new`"},
		{`{}`, "entry `bad`: column `id`"},
		{`{"id":"not-an-int"}`, "entry `bad`: column `id`"},
		{`{"id":2147483648}`, "out of range"},
		{`{"id":null}`, "must not be null"},
		// A repeated name wins, then an unknown column, then value errors.
		{`{"new":1,"new":2}`, "entry `bad`: column `new`: duplicate key"},
		{`{"id":"bad","id":1}`, "entry `bad`: column `id`: duplicate key"},
		{`{"id":"bad","added_column":1}`, "entry `bad`: column `added_column`: no such column"},
		{`{"nope":1,"id":2,"id":3}`, "entry `bad`: column `id`: duplicate key"},
		{`{"id":[1,{"a":[2]}],"later":{"x":1}}`, "entry `bad`: column `later`: no such column"},
		{`{"id":null,"x":1,"y":2,"x":3}`, "entry `bad`: column `x`: duplicate key"},
		{`[]`, "entry `bad`"},
		{`{`, "invalid JSON"},
		{`{"id":1} trailing`, "invalid JSON"},
		{`{"unknown":1,"id":"bad","later":[}`, "invalid JSON"},
	} {
		_, _, err := one.DecodeWrite([]byte(`{"entries":[{"id":"bad","append":`+tc.row+`}]}`), Limits{})
		msg := errMessage(t, err, domain.KindInvalidArgument)
		assert.Contains(t, msg, tc.msg, tc.row)
	}
	// The id after the row still names the entry.
	_, _, err = one.DecodeWrite([]byte(`{"entries":[{"append":{"id":"bad","x":[1]},"id":"late"}]}`), Limits{})
	assert.Equal(t, "entry `late`: column `x`: no such column", errMessage(t, err, domain.KindInvalidArgument))
	_, _, err = kv.DecodeWrite([]byte(`{"partial_update_columns":["renamed_id"],"entries":[{"id":"e","upsert":{"id":1}}]}`), Limits{})
	assert.Contains(t, errMessage(t, err, domain.KindInvalidArgument), "renamed_id")
}

// TestOfficialSchemaInvariants: validates_schema_invariants_and_rest_map_key_support.
func TestOfficialSchemaInvariants(t *testing.T) {
	t.Parallel()
	_, err := NewCodec(TableSpec{})
	assert.Error(t, err)
	_, err = NewCodec(TableSpec{Columns: []domain.Column{col("id", typ_(domain.TypeInteger)), col("id", typ_(domain.TypeString))}})
	assert.Contains(t, errMessage(t, err, domain.KindInternal), "duplicate")

	c := mustCodec(t, TableSpec{Columns: []domain.Column{
		col("k", notNull(typ_(domain.TypeInteger))),
		col("v", mapT(notNull(arrayT(typ_(domain.TypeInteger))), typ_(domain.TypeString))),
	}, PrimaryKey: []string{"k"}})
	_, _, err = c.DecodeWrite([]byte(`{"entries":[{"id":"e","upsert":{"k":1}}]}`), Limits{})
	assert.Contains(t, errMessage(t, err, domain.KindUnsupported), "column `v`")
	// Lookups on such a table still decode their keys.
	_, err = c.DecodeKeys([]byte(`{"keys":[{"k":1}]}`), Limits{})
	assert.NoError(t, err)
}

// TestDuplicateNamesRefusedEverywhere: every place a body names fields.
func TestDuplicateNamesRefusedEverywhere(t *testing.T) {
	t.Parallel()
	kv := mustCodec(t, TableSpec{Columns: []domain.Column{
		col("id", notNull(typ_(domain.TypeInteger))),
		col("m", mapT(notNull(typ_(domain.TypeString)), typ_(domain.TypeInteger))),
		col("r", rowT(fieldT("a", typ_(domain.TypeInteger)))),
	}, PrimaryKey: []string{"id"}})
	for _, body := range []string{
		`{"entries":[{"id":"e","upsert":{"id":1,"id":2}}]}`,            // row object
		`{"entries":[{"id":"e","upsert":{"id":1,"m":{"a":1,"a":2}}}]}`, // MAP object
		`{"entries":[{"id":"e","upsert":{"id":1,"m":[{"key":"a","value":1},{"key":"a","value":2}]}}]}`,
		`{"entries":[{"id":"e","upsert":{"id":1,"r":{"a":1,"a":2}}}]}`,            // ROW value
		`{"entries":[{"id":"e","upsert":{"id":1},"upsert":{"id":2}}]}`,            // entry op
		`{"entries":[{"id":"e","id":"f","upsert":{"id":1}}]}`,                     // entry id key
		`{"entries":[{"id":"e","upsert":{"id":1}},{"id":"e","upsert":{"id":2}}]}`, // entry id value
		`{"entries":[{"id":"e","upsert":{"id":1}}],"entries":[]}`,                 // top level
		`{"partial_update_columns":["id"],"partial_update_columns":["id"],"entries":[{"id":"e","upsert":{"id":1}}]}`,
	} {
		for _, fast := range []bool{true, false} {
			_, _, err := kv.decodeWriteTo(nil, []byte(body), Limits{}, fast)
			msg := errMessage(t, err, domain.KindInvalidArgument)
			assert.True(t, strings.Contains(msg, "duplicate"), "%s: %s", body, msg)
		}
	}
	for _, body := range []string{
		`{"keys":[{"id":1,"id":2}]}`,
		`{"keys":[{"id":1}],"keys":[{"id":2}]}`,
	} {
		_, err := kv.DecodeKeys([]byte(body), Limits{})
		assert.Contains(t, errMessage(t, err, domain.KindInvalidArgument), "duplicate", body)
	}
}

// TestDuplicateNamesRefusedInPrefixLookups: prefix lookup bodies too.
func TestDuplicateNamesRefusedInPrefixLookups(t *testing.T) {
	t.Parallel()
	c := pkCodec(t)
	for _, body := range []string{
		`{"prefix_columns":["region"],"prefixes":[{"region":"eu","region":"us"}]}`,
		`{"prefix_columns":["region"],"prefix_columns":["region"],"prefixes":[{"region":"eu"}]}`,
		`{"prefix_columns":["region"],"prefixes":[{"region":"eu"}],"prefixes":[{"region":"us"}]}`,
		`{"prefix_columns":["region","region"],"prefixes":[{"region":"eu"}]}`,
	} {
		_, _, err := c.DecodePrefixes([]byte(body), Limits{})
		msg := errMessage(t, err, domain.KindInvalidArgument)
		assert.True(t, strings.Contains(msg, "duplicate") || strings.Contains(msg, "twice"), "%s: %s", body, msg)
	}
}

// TestDeleteTakesOtherColumnsTypeChecked: a delete is a sparse row over the
// primary key (decoder.rs RowShape::Sparse): other known columns may be
// sent; they are type-checked and not used.
func TestDeleteTakesOtherColumnsTypeChecked(t *testing.T) {
	t.Parallel()
	c := pkCodec(t)
	for _, fast := range []bool{true, false} {
		b, _, err := c.decodeWriteTo(nil, []byte(`{"entries":[{"id":"d","delete":{"id":1,"region":"eu","name":"x","age":3,"tags":["a"]}}]}`), Limits{}, fast)
		require.NoError(t, err)
		row := b.Entries[0].Row
		assert.Equal(t, int64(1), row[0].I64)
		assert.Equal(t, "eu", string(row[1].Bytes))
		for _, ci := range []int{2, 3, 4} {
			assert.True(t, row[ci].Null, "column %d is not used", ci)
		}
	}
}

// TestOfficialDeepLargeValues: streams_deep_large_values_without_recursive_rescanning_budget
// (ARRAY nested 16 deep around a 256 KiB string) and
// borrowed_raw_value_reaches_decoder_without_losing_precision.
func TestOfficialDeepLargeValues(t *testing.T) {
	t.Parallel()
	typ := typ_(domain.TypeString)
	value := `"` + strings.Repeat("x", 256*1024) + `"`
	for range 16 {
		typ = arrayT(typ)
		value = "[" + value + "]"
	}
	got, err := decodeOne(t, typ, value, Limits{})
	require.NoError(t, err)
	for range 16 {
		require.Len(t, got.Elems, 1)
		got = got.Elems[0]
	}
	assert.Len(t, got.Bytes, 256*1024)
}
