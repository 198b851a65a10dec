package lookup

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Table options the lookup path reads (apache/fluss: ConfigOptions).
const (
	propLakeFormat      = "table.datalake.format"
	propKvFormat        = "table.kv.format"
	propKvFormatVersion = "table.kv.format-version"
)

// keyShape turns one lookup row (a primary key, or a prefix) into the bytes
// sent to the server, its bucket and its partition name. The row holds only
// the key columns, so encoders are built over the key's own column types
// with positions inside that row; no full-width table row is needed.
type keyShape struct {
	// width is the number of Datums of a key row.
	width int
	// enc encodes the key sent to the server.
	enc record.KeyEncoder
	// bucketEnc encodes the bucket key; nil when the key bytes are the
	// bucket-key bytes (the bucket key is the physical primary key, or a
	// prefix lookup on a table without a data lake format).
	bucketEnc record.KeyEncoder
	// partPos are the positions of the partition columns in the key row,
	// in partition-key order; partTypes their types.
	partPos   []int
	partTypes []domain.DataType
}

// codec holds what lookups on one table need for rows rendered in one
// schema: key encoders, the bucketing function and the value decoders of
// every schema id met so far. It is immutable except for its caches and safe
// for concurrent use. A codec is tied to one metadata snapshot (table).
type codec struct {
	table    *meta.Table
	path     domain.TablePath
	tableID  int64
	schemaID int32 // schema the rows are rendered in
	schema   domain.Schema
	types    []domain.DataType // column types of schema
	buckets  int
	bucketFn record.BucketingFunction
	kvFormat record.RowFormat
	lake     record.LakeFormat
	version  int // table.kv.format-version, 0 when absent

	pkNames    []string // primary key, in primary-key order
	physPK     []string // primary key minus partition keys
	bucketKeys []string
	partKeys   []string

	// pk is the shape of primary-key lookups; pkErr says why the table
	// cannot serve them (a log table).
	pk    keyShape
	pkErr error

	mu       sync.RWMutex
	values   map[int16]*valueDecoder
	prefixes map[string]*prefixShape
}

// prefixShape is a keyShape for one list of prefix columns, or the reason
// the columns cannot be used.
type prefixShape struct {
	keyShape
	err error
}

// valueDecoder decodes rows written under one schema id and renders them in
// the codec's schema.
type valueDecoder struct {
	dec record.RowDecoder
	// mapping[i] is the source column of target column i, -1 when the source
	// schema lacks it (it was added later: null); nil means identity.
	mapping []int
	// err is why rows of this schema cannot be rendered (a column changed
	// its type); it is cached so that every row reports it.
	err error
}

func columnIndex(s domain.Schema, name string) int {
	return slices.IndexFunc(s.Columns, func(c domain.Column) bool { return c.Name == name })
}

// newCodec builds the codec of table t rendering rows in schema (whose id is
// schemaID; usually the table's current schema).
func newCodec(t *meta.Table, schemaID int32, schema domain.Schema) (*codec, error) {
	d := t.Info.Descriptor
	c := &codec{
		table: t, path: t.Path(), tableID: t.ID(), schemaID: schemaID, schema: schema,
		buckets: t.NumBuckets, pkNames: schema.PrimaryKey, partKeys: d.PartitionKeys,
		values: make(map[int16]*valueDecoder), prefixes: make(map[string]*prefixShape),
	}
	c.types = domain.ColumnTypes(schema.Columns)
	var err error
	if c.lake, err = record.ParseLakeFormat(t.Property(propLakeFormat)); err != nil {
		return nil, err
	}
	if c.bucketFn, err = record.NewBucketingFunction(c.lake); err != nil {
		return nil, err
	}
	if c.kvFormat, err = record.ParseKvFormat(t.Property(propKvFormat)); err != nil {
		return nil, err
	}
	if v := strings.TrimSpace(t.Property(propKvFormatVersion)); v != "" {
		if c.version, err = strconv.Atoi(v); err != nil {
			return nil, meta.Unsupported(c.path, "%s = %q", propKvFormatVersion, v)
		}
	}
	if len(schema.PrimaryKey) == 0 {
		c.pkErr = domain.InvalidArgument("table `%s` has no primary key; lookups need a primary-key table", c.path)
		return c, nil
	}
	c.physPK = domain.DefaultBucketKeys(schema.PrimaryKey, d.PartitionKeys)
	c.bucketKeys = d.BucketKeys
	if len(c.bucketKeys) == 0 {
		c.bucketKeys = c.physPK
	}

	// Primary-key lookups: the key row is the primary key in primary-key
	// order (PrimaryKeyLookuper projects the row type on the primary key).
	c.pk.width = len(schema.PrimaryKey)
	keyTypes := make([]domain.DataType, len(schema.PrimaryKey))
	for i, n := range schema.PrimaryKey {
		p := columnIndex(schema, n)
		if p < 0 {
			return nil, meta.Unsupported(c.path, "primary-key column `%s` is not in the schema", n)
		}
		keyTypes[i] = c.types[p]
	}
	physPos, err := positionsIn(schema.PrimaryKey, c.physPK)
	if err != nil {
		return nil, meta.Unsupported(c.path, "primary key: %v", err)
	}
	bucketPos, err := positionsIn(schema.PrimaryKey, c.bucketKeys)
	if err != nil {
		return nil, meta.Unsupported(c.path, "bucket key: %v", err)
	}
	if c.pk.partPos, err = positionsIn(schema.PrimaryKey, d.PartitionKeys); err != nil {
		return nil, meta.Unsupported(c.path, "partition key: %v", err)
	}
	for _, p := range c.pk.partPos {
		c.pk.partTypes = append(c.pk.partTypes, keyTypes[p])
	}
	isDefault := slices.Equal(c.bucketKeys, c.physPK)
	if c.pk.enc, err = record.NewPrimaryKeyEncoder(keyTypes, physPos, c.lake, c.version, isDefault); err != nil {
		return nil, err
	}
	if !isDefault {
		if c.pk.bucketEnc, err = record.NewBucketKeyEncoder(keyTypes, bucketPos, c.lake); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// positionsIn returns the index in cols of every name.
func positionsIn(cols, names []string) ([]int, error) {
	out := make([]int, len(names))
	for i, n := range names {
		if out[i] = slices.Index(cols, n); out[i] < 0 {
			return nil, fmt.Errorf("column `%s` is not among %v", n, cols)
		}
	}
	return out, nil
}

// prefixShape returns the shape of prefix lookups by cols, validated as the
// 0.9.1 client's PrefixKeyLookuper validates them: the table has a primary
// key; its bucket key is a prefix of the physical primary key (the primary
// key minus partition keys) and not all of it; cols are the bucket key, in
// order, plus every partition key (anywhere).
//
// inPartition is for a prefix looked up in one named partition
// (domain.PrefixLookupRequest.Partition): cols are then the bucket key
// alone, without any partition column.
func (c *codec) prefixShape(cols []string, inPartition bool) *prefixShape {
	key := strings.Join(cols, "\x00")
	if inPartition {
		key += "\x01"
	}
	c.mu.RLock()
	s, ok := c.prefixes[key]
	c.mu.RUnlock()
	if ok {
		return s
	}
	s = c.newPrefixShape(cols, inPartition)
	c.mu.Lock()
	if len(c.prefixes) >= 64 {
		clear(c.prefixes)
	}
	c.prefixes[key] = s
	c.mu.Unlock()
	return s
}

func (c *codec) newPrefixShape(cols []string, inPartition bool) *prefixShape {
	s := &prefixShape{}
	invalid := func(format string, args ...any) *prefixShape {
		s.err = domain.InvalidArgument("prefix lookup on table `%s`: "+format, append([]any{c.path}, args...)...)
		return s
	}
	if c.pkErr != nil {
		return invalid("the table has no primary key")
	}
	if len(cols) == 0 {
		return invalid("prefix_columns must not be empty")
	}
	types := make([]domain.DataType, len(cols))
	for i, n := range cols {
		p := columnIndex(c.schema, n)
		if p < 0 {
			return invalid("prefix column `%s` is not a column of the table", n)
		}
		if slices.Index(cols, n) != i {
			return invalid("prefix column `%s` is listed twice", n)
		}
		types[i] = c.types[p]
	}
	if len(c.bucketKeys) > len(c.physPK) || !slices.Equal(c.bucketKeys, c.physPK[:len(c.bucketKeys)]) {
		return invalid("the bucket key %v is not a prefix of the primary key %v without partition columns; "+
			"Fluss can only look up prefixes that are the bucket key", c.bucketKeys, c.physPK)
	}
	if inPartition && len(c.partKeys) == 0 {
		return invalid("the table is not partitioned")
	}
	for _, pk := range c.partKeys {
		if inPartition && slices.Contains(cols, pk) {
			return invalid("prefix_columns %v must not contain the partition column `%s` when the partition is named", cols, pk)
		}
		if !inPartition && !slices.Contains(cols, pk) {
			return invalid("prefix_columns %v must contain every partition column %v", cols, c.partKeys)
		}
	}
	physCols := slices.DeleteFunc(slices.Clone(cols), func(n string) bool { return slices.Contains(c.partKeys, n) })
	if !slices.Equal(physCols, c.bucketKeys) {
		return invalid("prefix_columns %v must be the bucket key %v in this order (plus the partition columns %v)",
			cols, c.bucketKeys, c.partKeys)
	}
	if slices.Equal(c.bucketKeys, c.physPK) {
		return invalid("prefix_columns %v are the whole primary key %v; use a primary-key lookup instead",
			cols, c.pkNames)
	}
	bucketPos, _ := positionsIn(cols, c.bucketKeys)
	s.width = len(cols)
	var err error
	// PrefixKeyLookuper encodes the prefix with the primary-key rules over
	// the bucket key (the bucket key is never the whole physical key here),
	// and the bucket key with the lake's encoder only when there is a lake.
	if s.enc, err = record.NewPrimaryKeyEncoder(types, bucketPos, c.lake, c.version, false); err != nil {
		s.err = err
		return s
	}
	if c.lake != record.LakeNone {
		if s.bucketEnc, err = record.NewBucketKeyEncoder(types, bucketPos, c.lake); err != nil {
			s.err = err
			return s
		}
	}
	s.partPos, _ = positionsIn(cols, c.partKeys)
	for _, p := range s.partPos {
		s.partTypes = append(s.partTypes, types[p])
	}
	return s
}

// encode appends the key bytes of row (a key row of shape s) to arena and
// returns the bucket. For a partitioned table it leaves the partition name
// in sc.name. sc is reused between calls.
func (c *codec) encode(s *keyShape, arena []byte, row []domain.Datum, sc *scratch) ([]byte, int32, error) {
	if len(row) != s.width {
		return arena, 0, domain.InvalidArgument("key has %d values, want %d", len(row), s.width)
	}
	start := len(arena)
	arena, err := s.enc.AppendKey(arena, row)
	if err != nil {
		return arena[:start], 0, err
	}
	bk := arena[start:]
	if s.bucketEnc != nil {
		if sc.bucketKey, err = s.bucketEnc.AppendKey(sc.bucketKey[:0], row); err != nil {
			return arena[:start], 0, err
		}
		bk = sc.bucketKey
	}
	b, err := c.bucketFn.Bucket(bk, c.buckets)
	if err != nil {
		return arena[:start], 0, err
	}
	sc.name = sc.name[:0]
	if len(s.partPos) > 0 {
		sc.parts = sc.parts[:0]
		for _, p := range s.partPos {
			sc.parts = append(sc.parts, row[p])
		}
		if sc.name, err = record.AppendPartitionName(sc.name, s.partTypes, sc.parts); err != nil {
			return arena[:start], 0, err
		}
	}
	return arena, int32(b), nil
}

// scratch is per-call reusable memory of encode.
type scratch struct {
	bucketKey []byte
	name      []byte
	parts     []domain.Datum
	names     map[string]string // interned partition names
}

// intern returns sc.name as a string, allocating once per distinct name.
func (sc *scratch) intern() string {
	if len(sc.name) == 0 {
		return ""
	}
	if s, ok := sc.names[string(sc.name)]; ok {
		return s
	}
	if sc.names == nil {
		sc.names = make(map[string]string)
	}
	s := string(sc.name)
	sc.names[s] = s
	return s
}

// decodeValue decodes a stored value (int16 schema id, then the row) into
// dst (len(c.types) Datums), rendered in the codec's schema. tmp is scratch
// space for rows of other schemas; it is returned for reuse. Byte slices of
// the result alias value.
func (c *codec) decodeValue(ctx context.Context, md Metadata, dst []domain.Datum, tmp []domain.Datum, value []byte) ([]domain.Datum, []domain.Datum, error) {
	id, row, err := record.SplitValue(value)
	if err != nil {
		return nil, tmp, err
	}
	vd, err := c.valueDecoder(ctx, md, id)
	if err != nil {
		return nil, tmp, err
	}
	if vd.mapping == nil {
		out, err := vd.dec.DecodeRow(dst, row)
		return out, tmp, err
	}
	if tmp, err = vd.dec.DecodeRow(tmp, row); err != nil {
		return nil, tmp, err
	}
	dst = dst[:len(vd.mapping)]
	for i, src := range vd.mapping {
		if src < 0 {
			dst[i] = domain.Datum{Null: true}
		} else {
			dst[i] = tmp[src]
		}
	}
	return dst, tmp, nil
}

// valueDecoder returns the decoder of rows written under schema id, fetching
// that schema through md the first time it is met.
func (c *codec) valueDecoder(ctx context.Context, md Metadata, id int16) (*valueDecoder, error) {
	c.mu.RLock()
	vd, ok := c.values[id]
	c.mu.RUnlock()
	if ok {
		return vd, vd.err
	}
	var src domain.Schema
	if int32(id) == c.schemaID {
		src = c.schema
	} else {
		var err error
		// Transient failures are not cached: the next row tries again.
		if src, err = md.Schema(ctx, c.table, int32(id)); err != nil {
			return nil, err
		}
	}
	vd = c.newValueDecoder(int32(id), src)
	c.mu.Lock()
	c.values[id] = vd
	c.mu.Unlock()
	return vd, vd.err
}

func (c *codec) newValueDecoder(id int32, src domain.Schema) *valueDecoder {
	vd := &valueDecoder{}
	types := domain.ColumnTypes(src.Columns)
	var err error
	if vd.dec, err = record.NewRowDecoder(c.kvFormat, types); err != nil {
		vd.err = err
		return vd
	}
	if id == c.schemaID {
		return vd
	}
	mapping, err := columnMapping(src, c.schema)
	if err != nil {
		vd.err = &domain.Error{Kind: domain.KindBackend,
			Message: fmt.Sprintf("table `%s`: rows written with schema %d cannot be read as schema %d: %v",
				c.path, id, c.schemaID, err)}
		return vd
	}
	vd.mapping = mapping
	return vd
}

// columnMapping maps the columns of target to those of src by Fluss column
// id (by name when either schema lacks ids), as SchemaUtil.getIndexMapping
// does: -1 for a column src does not have. A column present in both must
// keep its type, nullability aside.
func columnMapping(src, target domain.Schema) ([]int, error) {
	byID := true
	for _, s := range [2]domain.Schema{src, target} {
		for _, col := range s.Columns {
			if col.ID == domain.UnassignedFieldID {
				byID = false
			}
		}
	}
	mapping := make([]int, len(target.Columns))
	for i, tc := range target.Columns {
		mapping[i] = slices.IndexFunc(src.Columns, func(sc domain.Column) bool {
			if byID {
				return sc.ID == tc.ID
			}
			return sc.Name == tc.Name
		})
		if mapping[i] >= 0 && !sameType(&src.Columns[mapping[i]].Type, &tc.Type, true) {
			return nil, fmt.Errorf("column `%s` (id %d) changed its type", tc.Name, tc.ID)
		}
	}
	return mapping, nil
}

// sameType compares two types; the top-level nullability is ignored when top
// is set (Java compares DataType#copy(true)).
func sameType(a, b *domain.DataType, top bool) bool {
	if a.Root != b.Root || a.Length != b.Length || a.Precision != b.Precision || a.Scale != b.Scale ||
		(!top && a.Nullable != b.Nullable) {
		return false
	}
	for _, p := range [][2]*domain.DataType{{a.Element, b.Element}, {a.Key, b.Key}, {a.Value, b.Value}} {
		if (p[0] == nil) != (p[1] == nil) || p[0] != nil && !sameType(p[0], p[1], false) {
			return false
		}
	}
	if len(a.Fields) != len(b.Fields) {
		return false
	}
	for i := range a.Fields {
		if a.Fields[i].Name != b.Fields[i].Name || !sameType(&a.Fields[i].Type, &b.Fields[i].Type, false) {
			return false
		}
	}
	return true
}
