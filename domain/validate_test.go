package domain

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logTableDescriptor is a valid log table as a create request states it.
func logTableDescriptor() TableDescriptor {
	return TableDescriptor{
		Schema: Schema{Columns: []Column{
			newColumn("id", dtPrim(TypeBigInt), ""),
			newColumn("msg", dtPrim(TypeString), ""),
			newColumn("tags", dtArray(dtPrim(TypeString)), ""),
			newColumn("ts", dtPrec(TypeTimestampNTZ, 3), ""),
			newColumn("day", dtPrim(TypeDate), ""),
		}},
	}
}

func TestValidateTableDescriptorAccepts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		desc TableDescriptor
	}{
		{"doc 5.6 example", docExampleDescriptor()},
		{"log table without distribution", logTableDescriptor()},
		{"log table with bucket keys outside any key", func() TableDescriptor {
			d := logTableDescriptor()
			d.BucketKeys, d.BucketCount = []string{"msg", "ts"}, 3
			return d
		}()},
		{"partitioned log table with auto partitioning", func() TableDescriptor {
			d := logTableDescriptor()
			d.PartitionKeys = []string{"day"}
			d.Properties = map[string]string{"table.auto-partition.enabled": "TRUE", "table.auto-partition.time-unit": "DAY"}
			return d
		}()},
		{"auto partitioning disabled on unpartitioned table", func() TableDescriptor {
			d := logTableDescriptor()
			d.Properties = map[string]string{"table.auto-partition.enabled": "false"}
			return d
		}()},
		{"primary-key table with default bucket keys", func() TableDescriptor {
			d := docExampleDescriptor()
			d.BucketKeys, d.BucketCount = nil, 0
			return d
		}()},
		{"auto-increment column", func() TableDescriptor {
			d := docExampleDescriptor()
			d.Schema.Columns = append(d.Schema.Columns, newColumn("seq", dtPrim(TypeBigInt), ""))
			d.Schema.AutoIncrementColumn = []string{"seq"}
			return d
		}()},
		{"every partition key type", func() TableDescriptor {
			d := TableDescriptor{Schema: Schema{Columns: []Column{newColumn("v", dtPrim(TypeString), "")}}}
			for _, r := range partitionKeyTypes {
				typ := DataType{Root: r, Nullable: true, Length: 1, Precision: 3}
				d.Schema.Columns = append(d.Schema.Columns, newColumn("p_"+strings.ToLower(string(r)), typ, ""))
				d.PartitionKeys = append(d.PartitionKeys, "p_"+strings.ToLower(string(r)))
			}
			return d
		}()},
		{"ids already assigned", func() TableDescriptor {
			d := docExampleDescriptor()
			s, err := AssignFieldIDs(d.Schema)
			require.NoError(t, err)
			d.Schema = s
			return d
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.NoError(t, ValidateTableDescriptor(tc.desc))
		})
	}
}

func TestValidateTableDescriptorRejects(t *testing.T) {
	t.Parallel()
	pk := func(mut func(d *TableDescriptor)) TableDescriptor {
		d := docExampleDescriptor()
		mut(&d)
		return d
	}
	log := func(mut func(d *TableDescriptor)) TableDescriptor {
		d := logTableDescriptor()
		mut(&d)
		return d
	}
	deep := dtPrim(TypeInteger)
	for range MaxTypeNesting + 1 {
		deep = dtArray(deep)
	}
	cases := []struct {
		name string
		desc TableDescriptor
		want string
	}{
		// columns
		{"no columns", TableDescriptor{}, "columns: a table needs at least one column"},
		{"blank column name", pk(func(d *TableDescriptor) { d.Schema.Columns[1].Name = " " }),
			"columns[1].name: must not be blank"},
		{"duplicate column name", pk(func(d *TableDescriptor) { d.Schema.Columns[4].Name = "amount" }),
			`columns[4].name: duplicate column name "amount" (also columns[3])`},
		{"reserved column name", pk(func(d *TableDescriptor) { d.Schema.Columns[5].Name = "__offset" }),
			`columns[5].name: "__offset" is a reserved system column name (reserved: __offset, __timestamp, __bucket, _change_type, _log_offset, _commit_timestamp)`},
		{"reserved changelog column name", log(func(d *TableDescriptor) { d.Schema.Columns[1].Name = "_change_type" }),
			`columns[1].name: "_change_type" is a reserved system column name (reserved: __offset, __timestamp, __bucket, _change_type, _log_offset, _commit_timestamp)`},

		// type parameters
		{"decimal precision too high", pk(func(d *TableDescriptor) { d.Schema.Columns[3].Type.Precision = 40 }),
			"columns[3].data_type.precision: DECIMAL precision must be between 1 and 38, got 40"},
		{"decimal precision zero", pk(func(d *TableDescriptor) { d.Schema.Columns[3].Type = dtDecimal(0, 0) }),
			"columns[3].data_type.precision: DECIMAL precision must be between 1 and 38, got 0"},
		{"decimal scale above precision", pk(func(d *TableDescriptor) { d.Schema.Columns[3].Type.Scale = 13 }),
			"columns[3].data_type.scale: DECIMAL scale must be between 0 and the precision 12, got 13"},
		{"decimal negative scale", pk(func(d *TableDescriptor) { d.Schema.Columns[3].Type.Scale = -1 }),
			"columns[3].data_type.scale: DECIMAL scale must be between 0 and the precision 12, got -1"},
		{"char length zero in row", pk(func(d *TableDescriptor) { d.Schema.Columns[7].Type.Fields[1].Type.Length = 0 }),
			"columns[7].data_type.fields[1].field_type.length: CHAR length must be between 1 and 2147483647, got 0"},
		{"binary length too large", log(func(d *TableDescriptor) { d.Schema.Columns[1].Type = dtLen(TypeBinary, MaxLength+1) }),
			"columns[1].data_type.length: BINARY length must be between 1 and 2147483647, got 2147483648"},
		{"time precision", log(func(d *TableDescriptor) { d.Schema.Columns[1].Type = dtPrec(TypeTime, 10) }),
			"columns[1].data_type.precision: TIME_WITHOUT_TIME_ZONE precision must be between 0 and 9, got 10"},
		{"timestamp precision negative", log(func(d *TableDescriptor) { d.Schema.Columns[3].Type.Precision = -1 }),
			"columns[3].data_type.precision: TIMESTAMP_WITHOUT_TIME_ZONE precision must be between 0 and 9, got -1"},
		{"local timestamp precision", pk(func(d *TableDescriptor) { d.Schema.Columns[4].Type.Precision = 12 }),
			"columns[4].data_type.precision: TIMESTAMP_WITH_LOCAL_TIME_ZONE precision must be between 0 and 9, got 12"},
		{"array element missing", pk(func(d *TableDescriptor) { d.Schema.Columns[5].Type.Element = nil }),
			"columns[5].data_type.element_type: ARRAY needs an element type"},
		{"array element unknown", pk(func(d *TableDescriptor) { d.Schema.Columns[5].Type.Element.Root = "VARCHAR" }),
			`columns[5].data_type.element_type.type: unknown data type "VARCHAR" (Fluss spells it STRING)`},
		{"map key missing", pk(func(d *TableDescriptor) { d.Schema.Columns[6].Type.Key = nil }),
			"columns[6].data_type.key_type: MAP needs a key type"},
		{"map value missing", pk(func(d *TableDescriptor) { d.Schema.Columns[6].Type.Value = nil }),
			"columns[6].data_type.value_type: MAP needs a value type"},
		{"map value bad", pk(func(d *TableDescriptor) { *d.Schema.Columns[6].Type.Value = dtDecimal(39, 0) }),
			"columns[6].data_type.value_type.precision: DECIMAL precision must be between 1 and 38, got 39"},
		{"row field blank", pk(func(d *TableDescriptor) { d.Schema.Columns[7].Type.Fields[0].Name = "" }),
			"columns[7].data_type.fields[0].name: must not be blank"},
		{"row field duplicate", pk(func(d *TableDescriptor) { d.Schema.Columns[7].Type.Fields[1].Name = "city" }),
			`columns[7].data_type.fields[1].name: duplicate field name "city" (also columns[7].data_type.fields[0])`},
		{"unknown root", log(func(d *TableDescriptor) { d.Schema.Columns[0].Type.Root = "INT" }),
			`columns[0].data_type.type: unknown data type "INT" (Fluss spells it INTEGER)`},
		{"nesting too deep", log(func(d *TableDescriptor) { d.Schema.Columns[2].Type = deep }),
			"columns[2].data_type" + strings.Repeat(".element_type", MaxTypeNesting+1) + ": data types nest deeper than 64 levels"},

		// ids
		{"mixed ids", pk(func(d *TableDescriptor) { d.Schema.Columns[0].ID = 0 }),
			"columns[1].id: either every column has an id or none has"},
		{"duplicate ids", log(func(d *TableDescriptor) {
			for i := range d.Schema.Columns {
				d.Schema.Columns[i].ID = int32(i % 2)
			}
		}), "columns[2].id: field id 0 is already used by columns[0].id"},

		// primary key
		{"primary key unknown column", pk(func(d *TableDescriptor) { d.Schema.PrimaryKey = []string{"x"} }),
			`primary_key[0]: unknown column "x"`},
		{"primary key duplicate", pk(func(d *TableDescriptor) { d.Schema.PrimaryKey = []string{"order_id", "dt", "order_id"} }),
			`primary_key[2]: duplicate primary-key column "order_id" (also primary_key[0])`},
		{"primary key nested type", pk(func(d *TableDescriptor) {
			d.Schema.Columns[5].Type.Nullable = false
			d.Schema.PrimaryKey = append(d.Schema.PrimaryKey, "tags")
		}), `primary_key[3]: primary-key column "tags" has type ARRAY; primary-key columns cannot be ARRAY, MAP or ROW`},
		{"primary key nullable", pk(func(d *TableDescriptor) { d.Schema.Columns[1].Type.Nullable = true }),
			`columns[1].data_type.nullable: primary-key column "region" must not be nullable`},

		// auto increment
		{"auto increment on log table", log(func(d *TableDescriptor) { d.Schema.AutoIncrementColumn = []string{"id"} }),
			"auto_increment_column[0]: auto-increment columns need a primary key"},
		{"two auto increment columns", pk(func(d *TableDescriptor) {
			d.Schema.Columns = append(d.Schema.Columns, newColumn("s1", dtPrim(TypeBigInt), ""), newColumn("s2", dtPrim(TypeInteger), ""))
			d.Schema.AutoIncrementColumn = []string{"s1", "s2"}
		}), "auto_increment_column[1]: at most one auto-increment column is supported"},
		{"auto increment unknown", pk(func(d *TableDescriptor) { d.Schema.AutoIncrementColumn = []string{"seq"} }),
			`auto_increment_column[0]: unknown column "seq"`},
		{"auto increment in primary key", pk(func(d *TableDescriptor) { d.Schema.AutoIncrementColumn = []string{"order_id"} }),
			`auto_increment_column[0]: auto-increment column "order_id" must not be part of the primary key`},
		{"auto increment type", pk(func(d *TableDescriptor) { d.Schema.AutoIncrementColumn = []string{"amount"} }),
			`auto_increment_column[0]: auto-increment column "amount" has type DECIMAL; it must be INTEGER or BIGINT`},

		// partition keys
		{"partition key unknown", pk(func(d *TableDescriptor) { d.PartitionKeys = []string{"day"} }),
			`partitioned_by[0]: unknown column "day"`},
		{"partition key duplicate", log(func(d *TableDescriptor) { d.PartitionKeys = []string{"day", "msg", "day"} }),
			`partitioned_by[2]: duplicate partition column "day" (also partitioned_by[0])`},
		{"partition key decimal", pk(func(d *TableDescriptor) { d.PartitionKeys = []string{"amount"} }),
			`partitioned_by[0]: partition key "amount" has type DECIMAL; partition keys must be one of CHAR, STRING, BOOLEAN, BINARY, BYTES, TINYINT, SMALLINT, INTEGER, DATE, TIME_WITHOUT_TIME_ZONE, BIGINT, FLOAT, DOUBLE, TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_LOCAL_TIME_ZONE`},
		{"partition key array", log(func(d *TableDescriptor) { d.PartitionKeys = []string{"day", "tags"} }),
			`partitioned_by[1]: partition key "tags" has type ARRAY; partition keys must be one of CHAR, STRING, BOOLEAN, BINARY, BYTES, TINYINT, SMALLINT, INTEGER, DATE, TIME_WITHOUT_TIME_ZONE, BIGINT, FLOAT, DOUBLE, TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_LOCAL_TIME_ZONE`},
		{"partition key outside primary key", pk(func(d *TableDescriptor) { d.PartitionKeys = []string{"created_at"} }),
			`partitioned_by[0]: partition key "created_at" must be part of the primary key [order_id region dt]`},
		{"primary key equals partition keys", pk(func(d *TableDescriptor) {
			d.Schema.PrimaryKey = []string{"dt"}
			d.BucketKeys = nil
		}), "primary_key: the primary key [dt] must contain at least one column that is not a partition key"},

		// distribution
		{"negative bucket count", pk(func(d *TableDescriptor) { d.BucketCount = -2 }),
			"distribution.bucket_count: must be at least 1, got -2"},
		{"bucket key unknown", pk(func(d *TableDescriptor) { d.BucketKeys = []string{"order_id", "nope"} }),
			`distribution.bucket_keys[1]: unknown column "nope"`},
		{"bucket key duplicate", pk(func(d *TableDescriptor) { d.BucketKeys = []string{"order_id", "order_id"} }),
			`distribution.bucket_keys[1]: duplicate bucket column "order_id" (also distribution.bucket_keys[0])`},
		{"bucket key nested type", log(func(d *TableDescriptor) { d.BucketKeys = []string{"tags"} }),
			`distribution.bucket_keys[0]: bucket key "tags" has type ARRAY; bucket keys cannot be ARRAY, MAP or ROW`},
		{"bucket key is partition key", pk(func(d *TableDescriptor) { d.BucketKeys = []string{"order_id", "dt"} }),
			`distribution.bucket_keys[1]: bucket key "dt" must not be a partition key`},
		{"bucket key is partition key on log table", log(func(d *TableDescriptor) {
			d.PartitionKeys = []string{"day"}
			d.BucketKeys = []string{"day"}
		}), `distribution.bucket_keys[0]: bucket key "day" must not be a partition key`},
		{"bucket key outside primary key", pk(func(d *TableDescriptor) { d.BucketKeys = []string{"amount"} }),
			`distribution.bucket_keys[0]: bucket key "amount" must be a primary-key column that is not a partition key (allowed: [order_id region])`},

		// properties
		{"property without table prefix", pk(func(d *TableDescriptor) { d.Properties["owner"] = "x" }),
			`configs."owner": keys must start with "table."; put free-form keys in custom_properties`},
		{"auto partition without partition keys", log(func(d *TableDescriptor) {
			d.Properties = map[string]string{"table.auto-partition.enabled": "True"}
		}), `configs."table.auto-partition.enabled": automatic partitioning needs partitioned_by`},
		{"custom property with table prefix", pk(func(d *TableDescriptor) { d.CustomProperties["table.x"] = "1" }),
			`custom_properties."table.x": keys must not start with "table."; table options go in configs`},
		{"custom property key is quoted", pk(func(d *TableDescriptor) { d.CustomProperties["table.\"q\"\n"] = "1" }),
			`custom_properties."table.\"q\"\n": keys must not start with "table."; table options go in configs`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireInvalid(t, ValidateTableDescriptor(tc.desc), tc.want)
		})
	}
}

func TestValidateTableDescriptorReturnsUntypedNil(t *testing.T) {
	t.Parallel()
	err := ValidateTableDescriptor(docExampleDescriptor())
	assert.True(t, err == nil, "a nil *Error must not be returned as a non-nil error")
	assert.True(t, ValidateDataType(dtPrim(TypeDate), "x") == nil)
	assert.True(t, ValidateIdentifier("table", "orders") == nil)
}

func TestValidateDataType(t *testing.T) {
	t.Parallel()
	assert.NoError(t, ValidateDataType(dtMap(dtPrim(TypeString), dtRow(dtField("a", dtDecimal(38, 38), 0))), "add_column.data_type"))
	requireInvalid(t, ValidateDataType(dtLen(TypeChar, 0), "add_column.data_type"),
		"add_column.data_type.length: CHAR length must be between 1 and 2147483647, got 0")
}

func TestValidateIdentifier(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind, name string
		wantErr    string
	}{
		{"database", "shop", ""},
		{"table", "Orders_2026-v1", ""},
		{"table", strings.Repeat("t", MaxNameLength), ""},
		{"database", "", "database: must not be empty"},
		{"table", ".", `table: "." is not allowed`},
		{"table", "..", `table: ".." is not allowed`},
		{"table", strings.Repeat("t", MaxNameLength+1), "table: longer than 200 characters"},
		{"table", "a.b", `table: "a.b" contains characters other than ASCII letters, digits, '_' and '-'`},
		{"database", "日本", `database: "日本" contains characters other than ASCII letters, digits, '_' and '-'`},
		{"database", "__internal", `database: the prefix "__" is reserved for Fluss-internal objects`},
	}
	for _, tc := range cases {
		t.Run(tc.kind+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateIdentifier(tc.kind, tc.name)
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			requireInvalid(t, err, tc.wantErr)
		})
	}
}

func TestPartitionName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec PartitionSpec
		want string
	}{
		{nil, ""},
		{PartitionSpec{{Key: "dt", Value: "20260822"}}, "20260822"},
		{PartitionSpec{{Key: "dt", Value: "20260822"}, {Key: "region", Value: "eu"}}, "20260822$eu"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, PartitionName(tc.spec))
	}
}

func TestParsePartitionName(t *testing.T) {
	t.Parallel()
	keys := []string{"dt", "region"}
	got, err := ParsePartitionName(keys, "20260822$eu")
	require.NoError(t, err)
	assert.Equal(t, PartitionSpec{{Key: "dt", Value: "20260822"}, {Key: "region", Value: "eu"}}, got)
	assert.Equal(t, "20260822$eu", PartitionName(got))

	got, err = ParsePartitionName([]string{"dt"}, "__auto")
	require.NoError(t, err, "existing internal partitions can be named")
	assert.Equal(t, PartitionSpec{{Key: "dt", Value: "__auto"}}, got)

	errCases := []struct {
		keys []string
		name string
		want string
	}{
		{nil, "x", `partition name "x": the table is not partitioned`},
		{keys, "20260822", `partition name "20260822": has 1 value(s) but the table has 2 partition key(s) [dt region]`},
		{keys, "a$b$c", `partition name "a$b$c": has 3 value(s) but the table has 2 partition key(s) [dt region]`},
		{keys, "20260822$", `partition."region": must not be empty`},
		{keys, "2026.08$eu", `partition."dt": "2026.08" contains characters other than ASCII letters, digits, '_' and '-'`},
	}
	for _, tc := range errCases {
		_, err := ParsePartitionName(tc.keys, tc.name)
		requireInvalid(t, err, tc.want)
	}
}

func TestValidatePartitionSpec(t *testing.T) {
	t.Parallel()
	keys := []string{"dt", "region"}
	got, err := ValidatePartitionSpec(keys, PartitionSpec{{Key: "region", Value: "eu"}, {Key: "dt", Value: "20260822"}}, true)
	require.NoError(t, err)
	assert.Equal(t, PartitionSpec{{Key: "dt", Value: "20260822"}, {Key: "region", Value: "eu"}}, got, "reordered into key order")

	_, err = ValidatePartitionSpec([]string{"dt"}, PartitionSpec{{Key: "dt", Value: "__x"}}, false)
	assert.NoError(t, err, "dropping may name a reserved partition")

	errCases := []struct {
		name      string
		keys      []string
		spec      PartitionSpec
		forCreate bool
		want      string
	}{
		{"not partitioned", nil, PartitionSpec{{Key: "dt", Value: "1"}}, false, "partition: the table is not partitioned"},
		{"unknown key", keys, PartitionSpec{{Key: "dt", Value: "1"}, {Key: "zone", Value: "2"}}, false,
			`partition."zone": not a partition key (partition keys: [dt region])`},
		{"duplicate key", keys, PartitionSpec{{Key: "dt", Value: "1"}, {Key: "dt", Value: "2"}}, false, `partition."dt": given more than once`},
		{"missing key", keys, PartitionSpec{{Key: "dt", Value: "1"}}, false, `partition."region": missing (partition keys: [dt region])`},
		{"bad value", keys, PartitionSpec{{Key: "dt", Value: "1"}, {Key: "region", Value: "e$u"}}, false,
			`partition."region": "e$u" contains characters other than ASCII letters, digits, '_' and '-'`},
		{"reserved on create", keys, PartitionSpec{{Key: "dt", Value: "__1"}, {Key: "region", Value: "eu"}}, true,
			`partition."dt": the prefix "__" is reserved for Fluss-internal objects`},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ValidatePartitionSpec(tc.keys, tc.spec, tc.forCreate)
			requireInvalid(t, err, tc.want)
		})
	}
}
