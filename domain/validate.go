package domain

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Limits of the Fluss type parameters (apache/fluss: fluss-common/.../types/
// DecimalType.java, CharType.java, BinaryType.java, TimeType.java,
// TimestampType.java, LocalZonedTimestampType.java).
const (
	MinDecimalPrecision = 1
	MaxDecimalPrecision = 38
	MinLength           = 1 // CHAR and BINARY
	MaxLength           = math.MaxInt32
	MaxTimePrecision    = 9 // TIME and both TIMESTAMPs; the minimum is 0
)

// TablePropertyPrefix starts every Fluss table option. Table properties must
// carry it and custom properties must not (apache/fluss:
// config/FlussConfigUtils#isTableStorageConfig).
const TablePropertyPrefix = "table."

// propertyAutoPartitionEnabled turns on automatic partition management; the
// coordinator rejects it on a table without partition keys (apache/fluss:
// server/utils/TableDescriptorValidation#checkPartition).
const propertyAutoPartitionEnabled = "table.auto-partition.enabled"

// reservedColumnNames are the system column names a table may not use
// (apache/fluss: server/utils/TableDescriptorValidation SYSTEM_COLUMNS).
var reservedColumnNames = []string{"__offset", "__timestamp", "__bucket", "_change_type", "_log_offset", "_commit_timestamp"}

// partitionKeyTypes are the types a partition column may have (apache/fluss:
// utils/PartitionUtils PARTITION_KEY_SUPPORTED_TYPES in 0.9.1: no DECIMAL,
// ARRAY, MAP or ROW).
var partitionKeyTypes = []TypeRoot{
	TypeChar, TypeString, TypeBoolean, TypeBinary, TypeBytes, TypeTinyInt,
	TypeSmallInt, TypeInteger, TypeDate, TypeTime, TypeBigInt, TypeFloat,
	TypeDouble, TypeTimestampNTZ, TypeTimestampLTZ,
}

// Field paths of the REST create-table request, used in validation messages.
const (
	pathColumns          = "columns"
	pathPrimaryKey       = "primary_key"
	pathAutoIncrement    = "auto_increment_column"
	pathPartitionedBy    = "partitioned_by"
	pathBucketKeys       = "distribution.bucket_keys"
	pathBucketCount      = "distribution.bucket_count"
	pathProperties       = "configs"
	pathCustomProperties = "custom_properties"
)

// ValidateTableDescriptor checks d against the rules that the Fluss client
// and coordinator enforce on CreateTable, so that a bad definition is answered
// with a precise 400 instead of a Fluss error (apache/fluss: metadata/Schema.java,
// metadata/TableDescriptor.java, types/*Type.java, types/RowType.java,
// utils/PartitionUtils.java, fluss-server/.../utils/TableDescriptorValidation.java).
//
// It returns nil or a KindInvalidArgument *Error for the first violation in
// the order below; the message starts with the field path in the REST
// request's vocabulary, for example
// `columns[3].data_type.precision: DECIMAL precision must be between 1 and 38, got 40`.
//
//   - columns: at least one; names not blank, not duplicated, not a reserved
//     system column (__offset, __timestamp, __bucket, _change_type,
//     _log_offset, _commit_timestamp); types valid (ValidateDataType); ids all
//     unassigned or all assigned and distinct.
//   - primary_key: existing, distinct columns of a type other than ARRAY, MAP
//     or ROW that are NOT NULL. A nullable primary-key column is an error
//     here, reported at `columns[i].data_type.nullable`: the REST layer must
//     turn an omitted `nullable` on a primary-key column into NOT NULL itself,
//     since DataType cannot tell "omitted" from "true".
//   - auto_increment_column: at most one, only with a primary key, an existing
//     INTEGER or BIGINT column outside the primary key.
//   - partitioned_by: existing, distinct columns of a partitionable type; for a
//     primary-key table part of the primary key, and the primary key must keep
//     at least one other column.
//   - distribution.bucket_count: at least 1 when set (0 means the server
//     default, so an explicit 0 must be rejected by the caller).
//   - distribution.bucket_keys: existing, distinct columns of a type other than
//     ARRAY, MAP or ROW, not partition keys, and for a primary-key table part of
//     the primary key.
//   - properties: keys start with "table."; auto partitioning needs partition keys.
//   - custom_properties: keys do not start with "table.".
//
// Fluss also checks each table property against the options the cluster
// knows and the bucket count against the cluster's maximum; those checks stay
// with the server.
func ValidateTableDescriptor(d TableDescriptor) error {
	if err := validateTable(d); err != nil {
		return err
	}
	return nil
}

func validateTable(d TableDescriptor) *Error {
	s := d.Schema
	if len(s.Columns) == 0 {
		return InvalidArgument("%s: a table needs at least one column", pathColumns)
	}
	index := make(map[string]int, len(s.Columns))
	for i, c := range s.Columns {
		cpath := indexPath(pathColumns, i)
		if strings.TrimSpace(c.Name) == "" {
			return InvalidArgument("%s.name: must not be blank", cpath)
		}
		if prev, dup := index[c.Name]; dup {
			return InvalidArgument("%s.name: duplicate column name %q (also %s)", cpath, c.Name, indexPath(pathColumns, prev))
		}
		if slices.Contains(reservedColumnNames, c.Name) {
			return InvalidArgument("%s.name: %q is a reserved system column name (reserved: %s)",
				cpath, c.Name, strings.Join(reservedColumnNames, ", "))
		}
		index[c.Name] = i
		if err := validateType(&c.Type, cpath+".data_type", 0); err != nil {
			return err
		}
	}
	if _, err := AssignFieldIDs(s); err != nil {
		if e := AsError(err); e != nil {
			return e
		}
		return InvalidArgument("%s: %v", pathColumns, err)
	}

	pk := s.PrimaryKey
	if err := checkColumnList(pathPrimaryKey, pk, index, "primary-key"); err != nil {
		return err
	}
	for i, name := range pk {
		c := s.Columns[index[name]]
		if c.Type.IsNested() {
			return InvalidArgument("%s: primary-key column %q has type %s; primary-key columns cannot be ARRAY, MAP or ROW",
				indexPath(pathPrimaryKey, i), name, c.Type.Root)
		}
		if c.Type.Nullable {
			return InvalidArgument("%s.data_type.nullable: primary-key column %q must not be nullable",
				indexPath(pathColumns, index[name]), name)
		}
	}

	if err := validateAutoIncrement(s, index); err != nil {
		return err
	}

	if err := checkColumnList(pathPartitionedBy, d.PartitionKeys, index, "partition"); err != nil {
		return err
	}
	for i, name := range d.PartitionKeys {
		c := s.Columns[index[name]]
		if !slices.Contains(partitionKeyTypes, c.Type.Root) {
			return InvalidArgument("%s: partition key %q has type %s; partition keys must be one of %s",
				indexPath(pathPartitionedBy, i), name, c.Type.Root, joinRoots(partitionKeyTypes))
		}
		if len(pk) > 0 && !slices.Contains(pk, name) {
			return InvalidArgument("%s: partition key %q must be part of the primary key %v",
				indexPath(pathPartitionedBy, i), name, pk)
		}
	}
	if len(pk) > 0 && len(DefaultBucketKeys(pk, d.PartitionKeys)) == 0 {
		return InvalidArgument("%s: the primary key %v must contain at least one column that is not a partition key",
			pathPrimaryKey, pk)
	}

	if d.BucketCount < 0 {
		return InvalidArgument("%s: must be at least 1, got %d", pathBucketCount, d.BucketCount)
	}
	if err := checkColumnList(pathBucketKeys, d.BucketKeys, index, "bucket"); err != nil {
		return err
	}
	for i, name := range d.BucketKeys {
		bpath := indexPath(pathBucketKeys, i)
		c := s.Columns[index[name]]
		if c.Type.IsNested() {
			return InvalidArgument("%s: bucket key %q has type %s; bucket keys cannot be ARRAY, MAP or ROW", bpath, name, c.Type.Root)
		}
		if slices.Contains(d.PartitionKeys, name) {
			return InvalidArgument("%s: bucket key %q must not be a partition key", bpath, name)
		}
		if len(pk) > 0 && !slices.Contains(pk, name) {
			return InvalidArgument("%s: bucket key %q must be a primary-key column that is not a partition key (allowed: %v)",
				bpath, name, DefaultBucketKeys(pk, d.PartitionKeys))
		}
	}

	for _, k := range sortedKeys(d.Properties) {
		kpath := pathProperties + "." + strconv.Quote(k)
		if !strings.HasPrefix(k, TablePropertyPrefix) {
			return InvalidArgument("%s: keys must start with %q; put free-form keys in %s",
				kpath, TablePropertyPrefix, pathCustomProperties)
		}
		if k == propertyAutoPartitionEnabled && strings.EqualFold(d.Properties[k], "true") && len(d.PartitionKeys) == 0 {
			return InvalidArgument("%s: automatic partitioning needs %s", kpath, pathPartitionedBy)
		}
	}
	for _, k := range sortedKeys(d.CustomProperties) {
		if strings.HasPrefix(k, TablePropertyPrefix) {
			return InvalidArgument("%s.%s: keys must not start with %q; table options go in %s",
				pathCustomProperties, strconv.Quote(k), TablePropertyPrefix, pathProperties)
		}
	}
	return nil
}

// checkColumnList checks that every name in list is a column and appears once.
func checkColumnList(path string, list []string, index map[string]int, what string) *Error {
	for i, name := range list {
		if _, ok := index[name]; !ok {
			return InvalidArgument("%s: unknown column %q", indexPath(path, i), name)
		}
		if j := slices.Index(list, name); j < i {
			return InvalidArgument("%s: duplicate %s column %q (also %s)", indexPath(path, i), what, name, indexPath(path, j))
		}
	}
	return nil
}

func validateAutoIncrement(s Schema, index map[string]int) *Error {
	for i, name := range s.AutoIncrementColumn {
		apath := indexPath(pathAutoIncrement, i)
		if len(s.PrimaryKey) == 0 {
			return InvalidArgument("%s: auto-increment columns need a primary key", apath)
		}
		if i > 0 {
			return InvalidArgument("%s: at most one auto-increment column is supported", apath)
		}
		ci, ok := index[name]
		if !ok {
			return InvalidArgument("%s: unknown column %q", apath, name)
		}
		if slices.Contains(s.PrimaryKey, name) {
			return InvalidArgument("%s: auto-increment column %q must not be part of the primary key", apath, name)
		}
		if r := s.Columns[ci].Type.Root; r != TypeInteger && r != TypeBigInt {
			return InvalidArgument("%s: auto-increment column %q has type %s; it must be INTEGER or BIGINT", apath, name, r)
		}
	}
	return nil
}

// ValidateDataType checks t's parameters and structure with the limits of the
// Fluss type classes: DECIMAL precision 1..38 and scale 0..precision, CHAR and
// BINARY length 1..2147483647, TIME and TIMESTAMP precision 0..9, element,
// key and value types present, ROW field names not blank and distinct, known
// roots, and nesting up to MaxTypeNesting. path is the request field holding
// the type (for example `columns[3].data_type`) and starts every message. It
// returns nil or a KindInvalidArgument *Error.
func ValidateDataType(t DataType, path string) error {
	if err := validateType(&t, path, 0); err != nil {
		return err
	}
	return nil
}

func validateType(t *DataType, path string, depth int) *Error {
	if depth > MaxTypeNesting {
		return InvalidArgument("%s: data types nest deeper than %d levels", path, MaxTypeNesting)
	}
	switch t.Root {
	case TypeBoolean, TypeTinyInt, TypeSmallInt, TypeInteger, TypeBigInt,
		TypeFloat, TypeDouble, TypeDate, TypeBytes, TypeString:
	case TypeDecimal:
		if t.Precision < MinDecimalPrecision || t.Precision > MaxDecimalPrecision {
			return InvalidArgument("%s.precision: DECIMAL precision must be between %d and %d, got %d",
				path, MinDecimalPrecision, MaxDecimalPrecision, t.Precision)
		}
		if t.Scale < 0 || t.Scale > t.Precision {
			return InvalidArgument("%s.scale: DECIMAL scale must be between 0 and the precision %d, got %d",
				path, t.Precision, t.Scale)
		}
	case TypeChar, TypeBinary:
		if t.Length < MinLength || t.Length > MaxLength {
			return InvalidArgument("%s.length: %s length must be between %d and %d, got %d",
				path, t.Root, MinLength, MaxLength, t.Length)
		}
	case TypeTime, TypeTimestampNTZ, TypeTimestampLTZ:
		if t.Precision < 0 || t.Precision > MaxTimePrecision {
			return InvalidArgument("%s.precision: %s precision must be between 0 and %d, got %d",
				path, t.Root, MaxTimePrecision, t.Precision)
		}
	case TypeArray:
		if t.Element == nil {
			return InvalidArgument("%s.element_type: ARRAY needs an element type", path)
		}
		return validateType(t.Element, path+".element_type", depth+1)
	case TypeMap:
		if t.Key == nil {
			return InvalidArgument("%s.key_type: MAP needs a key type", path)
		}
		if t.Value == nil {
			return InvalidArgument("%s.value_type: MAP needs a value type", path)
		}
		if err := validateType(t.Key, path+".key_type", depth+1); err != nil {
			return err
		}
		return validateType(t.Value, path+".value_type", depth+1)
	case TypeRow:
		seen := make(map[string]int, len(t.Fields))
		for i := range t.Fields {
			f := &t.Fields[i]
			fpath := indexPath(path+".fields", i)
			if strings.TrimSpace(f.Name) == "" {
				return InvalidArgument("%s.name: must not be blank", fpath)
			}
			if prev, dup := seen[f.Name]; dup {
				return InvalidArgument("%s.name: duplicate field name %q (also %s)", fpath, f.Name, indexPath(path+".fields", prev))
			}
			seen[f.Name] = i
			if err := validateType(&f.Type, fpath+".field_type", depth+1); err != nil {
				return err
			}
		}
	default:
		return InvalidArgument("%s.type: %s", path, UnknownTypeMessage(string(t.Root)))
	}
	return nil
}

// ValidateIdentifier checks a database or table name being created against
// Fluss's TablePath rules (apache/fluss: metadata/TablePath.java
// detectInvalidName and validatePrefix): 1 to 200 ASCII letters, digits, '_'
// or '-', not "." or "..", and not starting with the reserved prefix "__".
// kind names the field in the message ("database", "table"). It returns nil
// or a KindInvalidArgument *Error; it is ValidateNewName with an error result.
func ValidateIdentifier(kind, name string) error {
	if err := ValidateNewName(kind, name); err != nil {
		return err
	}
	return nil
}

// PartitionName renders spec as Fluss's partition name: the values joined by
// "$" in spec order, which must be partition-key order (apache/fluss:
// metadata/ResolvedPartitionSpec#getPartitionName). For example keys (dt,
// region) with values (20260822, eu) give `20260822$eu`.
func PartitionName(spec PartitionSpec) string {
	var b strings.Builder
	for i, pv := range spec {
		if i > 0 {
			b.WriteString(PartitionNameSeparator)
		}
		b.WriteString(pv.Value)
	}
	return b.String()
}

// ParsePartitionName splits a partition name into a spec over partitionKeys,
// the table's partition keys in order (apache/fluss:
// metadata/ResolvedPartitionSpec#fromPartitionName). Partition values never
// contain "$" (ValidateName forbids it), so the split is unambiguous. It
// fails with a KindInvalidArgument *Error when the table is not partitioned,
// when the number of values differs from the number of keys, or when a value
// breaks the partition-value rules of ValidateName.
func ParsePartitionName(partitionKeys []string, name string) (PartitionSpec, error) {
	if len(partitionKeys) == 0 {
		return nil, InvalidArgument("partition name %s: the table is not partitioned", quoteName(name))
	}
	values := strings.Split(name, PartitionNameSeparator)
	if len(values) != len(partitionKeys) {
		return nil, InvalidArgument("partition name %s: has %d value(s) but the table has %d partition key(s) %v",
			quoteName(name), len(values), len(partitionKeys), partitionKeys)
	}
	spec := make(PartitionSpec, len(values))
	for i, v := range values {
		if err := ValidateName(partitionValuePath(partitionKeys[i]), v); err != nil {
			return nil, err
		}
		spec[i] = PartitionValue{Key: partitionKeys[i], Value: v}
	}
	return spec, nil
}

// ValidatePartitionSpec checks spec against the table's partitionKeys and
// returns it in partition-key order (apache/fluss:
// utils/PartitionUtils#validatePartitionSpec). Every partition key must have
// exactly one value and no other key may appear; values follow ValidateName,
// and with forCreate also ValidateNewName (no "__" prefix). Errors are
// KindInvalidArgument *Error values naming `partition."key"`.
func ValidatePartitionSpec(partitionKeys []string, spec PartitionSpec, forCreate bool) (PartitionSpec, error) {
	if len(partitionKeys) == 0 {
		return nil, InvalidArgument("partition: the table is not partitioned")
	}
	byKey := make(map[string]string, len(spec))
	for _, pv := range spec {
		p := partitionValuePath(pv.Key)
		if !slices.Contains(partitionKeys, pv.Key) {
			return nil, InvalidArgument("%s: not a partition key (partition keys: %v)", p, partitionKeys)
		}
		if _, dup := byKey[pv.Key]; dup {
			return nil, InvalidArgument("%s: given more than once", p)
		}
		byKey[pv.Key] = pv.Value
	}
	out := make(PartitionSpec, len(partitionKeys))
	for i, k := range partitionKeys {
		v, ok := byKey[k]
		if !ok {
			return nil, InvalidArgument("%s: missing (partition keys: %v)", partitionValuePath(k), partitionKeys)
		}
		check := ValidateName
		if forCreate {
			check = ValidateNewName
		}
		if err := check(partitionValuePath(k), v); err != nil {
			return nil, err
		}
		out[i] = PartitionValue{Key: k, Value: v}
	}
	return out, nil
}

func partitionValuePath(key string) string {
	return "partition." + strconv.Quote(key)
}

func joinRoots(roots []TypeRoot) string {
	names := make([]string, len(roots))
	for i, r := range roots {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
