package writer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record/arrowlog"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Table options the writer reads (apache/fluss: ConfigOptions).
const (
	propLakeFormat       = "table.datalake.format"
	propKvFormat         = "table.kv.format"
	propKvFormatVersion  = "table.kv.format-version"
	propLogFormat        = "table.log.format"
	propArrowCompression = "table.log.arrow.compression.type"
	propZstdLevel        = "table.log.arrow.compression.zstd.level"
)

// logFormat is `table.log.format`.
type logFormat uint8

const (
	logArrow logFormat = iota + 1
	logIndexed
	logCompacted
)

// codec holds everything needed to turn rows of one table schema into
// records: encoders are built once per (table id, schema id) and shared by
// all requests (they are immutable and safe for concurrent use).
type codec struct {
	// fixedPerRow is the arena bytes per row besides the variable bytes
	// in the table's last request (learnFixed; 0: none yet), which sizes
	// the next request's arena (estimateArena).
	fixedPerRow atomic.Int32

	table    *meta.Table
	path     domain.TablePath
	tableID  int64
	schemaID int32
	pk       bool
	buckets  int
	types    []domain.DataType

	// Primary-key tables.
	keyEnc   record.KeyEncoder
	valueEnc record.RowEncoder // table.kv.format

	// Bucketing: bucketEnc is nil when the bucket key bytes equal the
	// primary key bytes (keyEnc); noBucketKey marks log tables without a
	// bucket key (sticky assignment).
	bucketEnc   record.KeyEncoder
	bucketFn    record.BucketingFunction
	noBucketKey bool

	// Log tables: rowEnc encodes the stored form (IndexedRow for INDEXED,
	// CompactedRow for COMPACTED and for ARROW tables with nested columns);
	// rowDec decodes those CompactedRows at drain time for the Arrow
	// builder. ARROW tables without nested columns keep rows in the Arrow
	// builder's encoded row form instead (arrowEnc, see arrowEncoded).
	logFmt    logFormat
	rowEnc    record.RowEncoder
	rowDec    *record.CompactedRowDecoder
	arrowEnc  *arrowlog.RowEncoder
	arrowComp string
	zstdLevel int
	arrowErr  error // why ARROW batches cannot be built, if so
	// arrowFree are the idle Arrow builders: the sender builds several
	// batches of a table at once (build), each with a builder of its own.
	arrowMu   sync.Mutex
	arrowFree []ArrowBuilder

	// Partitioned tables: positions and types of the partition columns.
	partPos   []int
	partTypes []domain.DataType
}

func positions(s domain.Schema, names []string) ([]int, error) {
	out := make([]int, len(names))
	for i, n := range names {
		p := slices.IndexFunc(s.Columns, func(c domain.Column) bool { return c.Name == n })
		if p < 0 {
			return nil, fmt.Errorf("column `%s` is not in the schema", n)
		}
		out[i] = p
	}
	return out, nil
}

// newCodec builds the codec of table t for rows decoded with schema (whose
// id is schemaID; usually t's current schema).
func newCodec(t *meta.Table, schemaID int32, schema domain.Schema, arrow ArrowFactory) (*codec, error) {
	d := t.Info.Descriptor
	c := &codec{
		table: t, path: t.Path(), tableID: t.ID(), schemaID: schemaID,
		pk: len(schema.PrimaryKey) > 0, buckets: t.NumBuckets,
	}
	c.types = domain.ColumnTypes(schema.Columns)
	lake, err := record.ParseLakeFormat(t.Property(propLakeFormat))
	if err != nil {
		return nil, err
	}
	if c.bucketFn, err = record.NewBucketingFunction(lake); err != nil {
		return nil, err
	}
	if c.partPos, err = positions(schema, d.PartitionKeys); err != nil {
		return nil, meta.Unsupported(c.path, "partition keys: %v", err)
	}
	for _, p := range c.partPos {
		c.partTypes = append(c.partTypes, c.types[p])
	}
	bucketKeys := d.BucketKeys
	if c.pk && len(bucketKeys) == 0 {
		bucketKeys = domain.DefaultBucketKeys(schema.PrimaryKey, d.PartitionKeys)
	}
	bucketPos, err := positions(schema, bucketKeys)
	if err != nil {
		return nil, meta.Unsupported(c.path, "bucket keys: %v", err)
	}

	if c.pk {
		physPK := domain.DefaultBucketKeys(schema.PrimaryKey, d.PartitionKeys) // PK minus partition keys
		pkPos, err := positions(schema, physPK)
		if err != nil {
			return nil, meta.Unsupported(c.path, "primary key: %v", err)
		}
		version := 0
		if v := strings.TrimSpace(t.Property(propKvFormatVersion)); v != "" {
			if version, err = strconv.Atoi(v); err != nil {
				return nil, meta.Unsupported(c.path, "%s = %q", propKvFormatVersion, v)
			}
		}
		isDefault := slices.Equal(bucketPos, pkPos)
		if c.keyEnc, err = record.NewPrimaryKeyEncoder(c.types, pkPos, lake, version, isDefault); err != nil {
			return nil, err
		}
		// When the bucket key is the physical primary key, the key encoder is
		// the bucket-key encoder in every kv format version, so the key
		// bytes feed the bucketing function directly.
		if !isDefault {
			if c.bucketEnc, err = record.NewBucketKeyEncoder(c.types, bucketPos, lake); err != nil {
				return nil, err
			}
		}
		kvFmt, err := record.ParseKvFormat(t.Property(propKvFormat))
		if err != nil {
			return nil, err
		}
		if c.valueEnc, err = record.NewRowEncoder(kvFmt, c.types); err != nil {
			return nil, err
		}
		return c, nil
	}

	if len(bucketPos) == 0 {
		c.noBucketKey = true
	} else if c.bucketEnc, err = record.NewBucketKeyEncoder(c.types, bucketPos, lake); err != nil {
		return nil, err
	}
	switch f := strings.ToUpper(strings.TrimSpace(t.Property(propLogFormat))); f {
	case "", "ARROW":
		c.logFmt = logArrow
		c.arrowComp = strings.ToUpper(strings.TrimSpace(t.Property(propArrowCompression)))
		if c.arrowComp == "" {
			c.arrowComp = "ZSTD"
		}
		c.zstdLevel = 3
		if v := strings.TrimSpace(t.Property(propZstdLevel)); v != "" {
			if c.zstdLevel, err = strconv.Atoi(v); err != nil {
				return nil, meta.Unsupported(c.path, "%s = %q", propZstdLevel, v)
			}
		}
		if arrow == nil {
			c.arrowErr = meta.Unsupported(c.path, "ARROW log tables need an Arrow batch builder, which this gateway build lacks")
		} else if ab, err := arrow(c.types, c.arrowComp, c.zstdLevel); err != nil {
			c.arrowErr = err
		} else {
			// The first idle builder (arrowBuilder).
			c.arrowFree = append(c.arrowFree, ab)
			if ae, ok := ab.(arrowEncoded); ok {
				c.arrowEnc = ae.RowEncoder()
			}
		}
		if c.rowEnc, err = record.NewCompactedRowEncoder(c.types); err != nil {
			return nil, err
		}
		if c.rowDec, err = record.NewCompactedRowDecoder(c.types); err != nil {
			return nil, err
		}
	case "INDEXED":
		c.logFmt = logIndexed
		if c.rowEnc, err = record.NewIndexedRowEncoder(c.types); err != nil {
			return nil, err
		}
	case "COMPACTED":
		c.logFmt = logCompacted
		if c.rowEnc, err = record.NewCompactedRowEncoder(c.types); err != nil {
			return nil, err
		}
	default:
		return nil, meta.Unsupported(c.path, "log format %q", f)
	}
	return c, nil
}

// encoded is one entry turned into record bytes inside the request arena.
type encoded struct {
	keyOff, keyLen int32
	valOff, valLen int32 // valLen -1: delete
	bucket         int32 // -1: assigned at enqueue (sticky)
	partName       string
}

// encode appends the record bytes of entry e to arena. scratch is reused for
// the partition values.
func (c *codec) encode(arena []byte, e *domain.WriteEntry, scratch []domain.Datum) ([]byte, encoded, []domain.Datum, error) {
	var out encoded
	start := len(arena)
	if len(e.Row) != len(c.types) {
		return arena, out, scratch, domain.InvalidArgument("row has %d values, the table has %d columns", len(e.Row), len(c.types))
	}
	var err error
	if c.pk {
		switch e.Op {
		case domain.OpUpsert, domain.OpDelete:
		default:
			return arena, out, scratch, domain.InvalidArgument("only upsert and delete are allowed on a primary-key table")
		}
		if arena, err = c.keyEnc.AppendKey(arena, e.Row); err != nil {
			return arena[:start], out, scratch, err
		}
		out.keyOff, out.keyLen = int32(start), int32(len(arena)-start)
		out.valOff, out.valLen = int32(len(arena)), -1
		if e.Op == domain.OpUpsert {
			if arena, err = c.valueEnc.AppendRow(arena, e.Row); err != nil {
				return arena[:start], out, scratch, err
			}
			out.valLen = int32(len(arena)) - out.valOff
		}
	} else {
		if e.Op != domain.OpAppend {
			return arena, out, scratch, domain.InvalidArgument("only append is allowed on a log table")
		}
		if c.arrowErr != nil {
			return arena, out, scratch, c.arrowErr
		}
		out.valOff = int32(start)
		if c.arrowEnc != nil {
			arena, err = c.arrowEnc.AppendRow(arena, e.Row)
		} else {
			arena, err = c.rowEnc.AppendRow(arena, e.Row)
		}
		if err != nil {
			return arena[:start], out, scratch, err
		}
		out.valLen = int32(len(arena) - start)
	}

	// Bucket.
	switch {
	case c.noBucketKey:
		out.bucket = -1
	case c.bucketEnc == nil:
		b, err := c.bucketFn.Bucket(arena[out.keyOff:out.keyOff+out.keyLen], c.buckets)
		if err != nil {
			return arena[:start], out, scratch, err
		}
		out.bucket = int32(b)
	default:
		kstart := len(arena)
		if arena, err = c.bucketEnc.AppendKey(arena, e.Row); err != nil {
			return arena[:start], out, scratch, err
		}
		b, err := c.bucketFn.Bucket(arena[kstart:], c.buckets)
		arena = arena[:kstart] // the bucket key bytes are not kept
		if err != nil {
			return arena[:start], out, scratch, err
		}
		out.bucket = int32(b)
	}

	// Partition.
	if len(c.partPos) > 0 {
		scratch = scratch[:0]
		for _, p := range c.partPos {
			scratch = append(scratch, e.Row[p])
		}
		var nameBuf [64]byte
		name, err := record.AppendPartitionName(nameBuf[:0], c.partTypes, scratch)
		if err != nil {
			return arena[:start], out, scratch, err
		}
		out.partName = string(name)
	}
	return arena, out, scratch, nil
}

// recordSize is the bytes a record adds to its batch (for batch-size and
// request-size decisions).
func (c *codec) recordSize(keyLen, valLen int) int {
	if c.pk {
		return record.KvRecordSize(keyLen, max(valLen, 0))
	}
	return 5 + valLen // row-based log framing; an estimate for ARROW
}

// learnFixed records, from a request of rows rows of values values each
// that took arena bytes of which variable were variable-length (as
// estimateArena counted them), the fixed part of a row for the next
// request's estimate. It is bounded by the 16 bytes per value
// estimateArena uses without it.
func (c *codec) learnFixed(arena, variable, rows, values int) {
	if rows <= 0 || arena <= 0 {
		return
	}
	fixed := max((arena-variable+rows-1)/rows, 1)
	fixed = min(fixed, 16*values)
	if int(c.fixedPerRow.Load()) != fixed {
		c.fixedPerRow.Store(int32(fixed))
	}
}
