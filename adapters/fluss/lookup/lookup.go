package lookup

import (
	"context"
	"math"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/defaults"
)

// Metadata is what the package needs from the table metadata cache: the
// read paths' meta.Source, and TableByID so that codecs of tables the
// cache no longer holds are dropped (meta.PerTable); *meta.Cache
// implements it.
type Metadata interface {
	meta.Source
	meta.TableHolder
}

var _ Metadata = (*meta.Cache)(nil)

// Defaults of Options. With them a bucket is retried for about 45 s, so in
// practice the caller's deadline bounds the retries; a tablet server failover
// (ZooKeeper session expiry, then leader election) takes 10 s or more.
const (
	DefaultMaxAttempts     = 50
	DefaultRetryBackoff    = 50 * time.Millisecond
	DefaultMaxRetryBackoff = time.Second
)

// Options configure a Lookuper. The zero value takes every default.
type Options struct {
	// MaxAttempts bounds how often the keys of one bucket are sent when the
	// answers are retriable errors (DefaultMaxAttempts). The caller's
	// deadline bounds the attempts too.
	MaxAttempts int
	// RetryBackoff is the wait before the first retry (DefaultRetryBackoff);
	// it doubles per attempt up to MaxRetryBackoff (DefaultMaxRetryBackoff).
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
	// MaxInFlightPerServer bounds the Lookup (and, apart, PrefixLookup)
	// requests of one table in flight to one tablet server
	// (DefaultMaxInFlightPerServer); the keys of calls that find the bound
	// reached wait and go together in one request when one is answered
	// (coalesce.go). Negative: no bound, every call sends its own request.
	MaxInFlightPerServer int
	// MaxKeysPerRequest bounds the keys of one coalesced request
	// (DefaultMaxKeysPerRequest); a single call's request may exceed it.
	MaxKeysPerRequest int
}

func (o Options) withDefaults() Options {
	o.MaxAttempts = defaults.Positive(o.MaxAttempts, DefaultMaxAttempts)
	o.RetryBackoff = defaults.Positive(o.RetryBackoff, DefaultRetryBackoff)
	o.MaxRetryBackoff = defaults.Positive(o.MaxRetryBackoff, DefaultMaxRetryBackoff)
	o.MaxRetryBackoff = max(o.MaxRetryBackoff, o.RetryBackoff)
	if o.MaxInFlightPerServer == 0 {
		o.MaxInFlightPerServer = DefaultMaxInFlightPerServer
	}
	if o.MaxInFlightPerServer < 0 {
		o.MaxInFlightPerServer = math.MaxInt
	}
	o.MaxKeysPerRequest = defaults.Positive(o.MaxKeysPerRequest, DefaultMaxKeysPerRequest)
	return o
}

// Lookuper is the domain.Lookup of one cluster connection. It is safe for
// concurrent use; its only goroutines send coalesced requests that waited
// (coalesce.go) and end with them.
//
// Whole-request rules: Lookup and PrefixLookup return an error (and no
// response) when the table cannot be resolved (not found, re-created, a
// schema newer than the cluster's, no primary key, invalid prefix columns),
// when ctx ends before every key has an answer, or when every key failed
// with a retriable error (the cluster is unavailable). Otherwise each key
// gets its row, not-found, or its own *domain.Error.
type Lookuper struct {
	call meta.Caller
	md   Metadata
	opts Options
	co   *coalescer

	codecs *meta.PerTable[*codec] // of the tables md holds
}

var _ domain.Lookup = (*Lookuper)(nil)

// New returns a Lookuper that sends requests through call and resolves
// tables, partitions, leaders and schemas through md (usually a *meta.Cache
// over the same call).
func New(call meta.Caller, md Metadata, opts Options) *Lookuper {
	opts = opts.withDefaults()
	return &Lookuper{call: call, md: md, opts: opts, co: newCoalescer(call, opts.MaxInFlightPerServer, opts.MaxKeysPerRequest),
		codecs: meta.NewPerTable[*codec](md, 1024)}
}

// codecFor resolves the table and returns the codec rendering rows in schema
// schemaID (the current schema when 0). tableID, when not 0, is the id the
// request was validated against.
func (l *Lookuper) codecFor(ctx context.Context, path domain.TablePath, tableID int64, schemaID int32) (*codec, error) {
	t, err := l.md.Table(ctx, path)
	if err != nil {
		return nil, tableError(err, path)
	}
	if (tableID != 0 && t.ID() != tableID) || schemaID > t.Info.SchemaID {
		if t, err = l.md.Reload(ctx, path); err != nil {
			return nil, tableError(err, path)
		}
	}
	if (tableID != 0 && t.ID() != tableID) || schemaID > t.Info.SchemaID {
		return nil, domain.NewStaleDefinition(&domain.StaleDefinitionError{Table: path,
			UsedTableID: tableID, TableID: t.ID(), UsedSchemaID: schemaID, SchemaID: t.Info.SchemaID})
	}
	schemaID = defaults.Positive(schemaID, t.Info.SchemaID)
	c, ok := l.codecs.Get(t.ID(), schemaID)
	if ok && c.table == t {
		return c, nil
	}
	schema, err := l.md.Schema(ctx, t, schemaID)
	if err != nil {
		return nil, tableError(err, path)
	}
	if c, err = newCodec(t, schemaID, schema); err != nil {
		return nil, err
	}
	l.codecs.Put(t.ID(), schemaID, c)
	return c, nil
}

// Lookup implements domain.Lookup: one result per key, in input order, rows
// rendered in schema req.SchemaID (the table's current schema when 0).
func (l *Lookuper) Lookup(ctx context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
	c, err := l.codecFor(ctx, req.Table, req.TableID, req.SchemaID)
	if err != nil {
		return nil, err
	}
	if c.pkErr != nil {
		return nil, c.pkErr
	}
	resp := &domain.LookupResponse{SchemaID: c.schemaID, Results: make([]domain.LookupResult, len(req.Keys))}
	if len(req.Keys) == 0 {
		return resp, nil
	}
	x := newExchange(l, c, false, len(req.Keys))
	x.encodeAll(&c.pk, req.Keys)
	if err := x.run(ctx); err != nil {
		return nil, err
	}

	// Decode the found rows into one slab: one allocation for all rows.
	width := len(c.types)
	found := 0
	for i := range x.out {
		if x.out[i].err == nil && len(x.out[i].value) > 0 {
			found++
		}
	}
	slab := make([]domain.Datum, found*width)
	var tmp []domain.Datum
	for i := range x.out {
		o := &x.out[i]
		switch {
		case o.err != nil:
			resp.Results[i].Err = o.err
		case len(o.value) > 0:
			row := slab[:width:width]
			slab = slab[width:]
			if row, tmp, err = c.decodeValue(ctx, l.md, row, tmp, o.value); err != nil {
				if ctx.Err() != nil {
					return nil, ctxError(ctx, c.path)
				}
				resp.Results[i].Err = valueError(c, err)
				continue
			}
			resp.Results[i].Row = row
		}
	}
	if err := wholeFailure(c, x); err != nil {
		return nil, err
	}
	return resp, nil
}

// PrefixLookup implements domain.Lookup: for each prefix (the values of
// req.PrefixColumns), the rows whose bucket key and partition equal it, at
// most req.MaxRowsPerPrefix of them (no bound when 0), in the order the
// server returns them.
func (l *Lookuper) PrefixLookup(ctx context.Context, req *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
	if req.MaxRowsPerPrefix < 0 {
		return nil, domain.InvalidArgument("max_rows_per_prefix must not be negative")
	}
	c, err := l.codecFor(ctx, req.Table, req.TableID, req.SchemaID)
	if err != nil {
		return nil, err
	}
	shape := c.prefixShape(req.PrefixColumns, req.Partition != "")
	if shape.err != nil {
		return nil, shape.err
	}
	resp := &domain.PrefixLookupResponse{SchemaID: c.schemaID, Results: make([]domain.PrefixLookupResult, len(req.Prefixes))}
	if len(req.Prefixes) == 0 {
		return resp, nil
	}
	x := newExchange(l, c, true, len(req.Prefixes))
	x.encodeAll(&shape.keyShape, req.Prefixes)
	if req.Partition != "" {
		for i := range x.items {
			x.items[i].part = req.Partition
		}
	}
	if err := x.run(ctx); err != nil {
		return nil, err
	}

	width := len(c.types)
	total := 0
	for i := range x.out {
		if x.out[i].err == nil {
			n := len(x.out[i].list)
			if req.MaxRowsPerPrefix > 0 {
				n = min(n, req.MaxRowsPerPrefix)
			}
			total += n
		}
	}
	slab := make([]domain.Datum, total*width)
	rowSlab := make([][]domain.Datum, total)
	var tmp []domain.Datum
	for i := range x.out {
		o, r := &x.out[i], &resp.Results[i]
		if o.err != nil {
			r.Err = o.err
			continue
		}
		list := o.list
		if req.MaxRowsPerPrefix > 0 && len(list) > req.MaxRowsPerPrefix {
			list, r.Truncated = list[:req.MaxRowsPerPrefix], true
		}
		r.Rows = rowSlab[:0:len(list)]
		rowSlab = rowSlab[len(list):]
		for _, v := range list {
			row := slab[:width:width]
			slab = slab[width:]
			if row, tmp, err = c.decodeValue(ctx, l.md, row, tmp, v); err != nil {
				if ctx.Err() != nil {
					return nil, ctxError(ctx, c.path)
				}
				r.Rows, r.Truncated, r.Err = nil, false, valueError(c, err)
				break
			}
			r.Rows = append(r.Rows, row)
		}
	}
	if err := wholeFailure(c, x); err != nil {
		return nil, err
	}
	return resp, nil
}
