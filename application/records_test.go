package application

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/testclock"
)

// dataClusters hands out sessions over catalog, writer and lookup for
// cluster "c1".
type dataClusters struct {
	catalog *fakeCatalog
	writer  domain.RowWriter
	lookup  domain.Lookup

	defsOnce sync.Once
	defs     *cachedDefinitions
}

// cachedDefinitions is a domain.TableDefinitions that, like the Fluss
// adapter's metadata cache, keeps what it loaded until it is refreshed.
type cachedDefinitions struct {
	cat       domain.Catalog
	mu        sync.Mutex
	cached    map[domain.TablePath]domain.TableInfo
	refreshes int
}

func (c *cachedDefinitions) Table(ctx context.Context, path domain.TablePath) (domain.TableInfo, error) {
	c.mu.Lock()
	info, ok := c.cached[path]
	c.mu.Unlock()
	if ok {
		return info, nil
	}
	return c.load(ctx, path)
}

func (c *cachedDefinitions) Refresh(ctx context.Context, path domain.TablePath) (domain.TableInfo, error) {
	c.mu.Lock()
	c.refreshes++
	c.mu.Unlock()
	return c.load(ctx, path)
}

func (c *cachedDefinitions) load(ctx context.Context, path domain.TablePath) (domain.TableInfo, error) {
	info, err := c.cat.GetTable(ctx, path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		delete(c.cached, path)
		return info, err
	}
	c.cached[path] = info
	return info, nil
}

func (f *dataClusters) Names() []string { return []string{"c1"} }

func (f *dataClusters) Session(_ context.Context, cluster string, _ domain.Principal) (domain.Session, error) {
	if cluster != "c1" {
		return nil, domain.NotFound(domain.ResourceCluster, "cluster `%s` is not configured", cluster)
	}
	return dataSession{f}, nil
}

type dataSession struct{ f *dataClusters }

func (s dataSession) Catalog() domain.Catalog  { return s.f.catalog }
func (s dataSession) Writer() domain.RowWriter { return s.f.writer }
func (s dataSession) Lookup() domain.Lookup    { return s.f.lookup }
func (s dataSession) Tables() domain.TableDefinitions {
	s.f.defsOnce.Do(func() {
		s.f.defs = &cachedDefinitions{cat: s.f.catalog, cached: map[domain.TablePath]domain.TableInfo{}}
	})
	return s.f.defs
}

type writerFunc func(ctx context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error)

func (f writerFunc) Write(ctx context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
	return f(ctx, b)
}

// decoderFunc is a WriteDecoder, KeyDecoder and PrefixDecoder in one.
type decoderFunc struct {
	write    func(t *Table, maxRows int) (domain.WriteBatch, []string, error)
	keys     func(t *Table, maxKeys int) ([][]domain.Datum, error)
	prefixes func(t *Table, max int) ([]string, [][]domain.Datum, error)
	size     int
}

func (d decoderFunc) DecodeWrite(t *Table, maxRows int) (DecodedWrite, error) {
	batch, ids, err := d.write(t, maxRows)
	return DecodedWrite{Batch: batch, IDs: ids}, err
}
func (d decoderFunc) DecodeKeys(t *Table, n int) ([][]domain.Datum, error) { return d.keys(t, n) }
func (d decoderFunc) DecodePrefixes(t *Table, n int) (DecodedPrefixes, error) {
	cols, prefixes, err := d.prefixes(t, n)
	return DecodedPrefixes{Columns: cols, Prefixes: prefixes}, err
}
func (d decoderFunc) Size() int { return d.size }

var usersPath = domain.TablePath{Database: "d", Table: "users"}

// versionedCatalog serves one table whose id and schema id tests bump.
type versionedCatalog struct {
	mu       sync.Mutex
	tableID  int64
	schemaID int32
	gets     int
}

func (v *versionedCatalog) catalog() *fakeCatalog {
	return &fakeCatalog{getTable: func(p domain.TablePath) (domain.TableInfo, error) {
		v.mu.Lock()
		defer v.mu.Unlock()
		v.gets++
		if p != usersPath {
			return domain.TableInfo{}, domain.NotFound(domain.ResourceTable, "table `%s` does not exist", p)
		}
		return domain.TableInfo{Path: p, TableID: v.tableID, SchemaID: v.schemaID, Descriptor: domain.TableDescriptor{
			Schema: domain.Schema{Columns: []domain.Column{intColumn("id", false)}, PrimaryKey: []string{"id"}},
		}}, nil
	}}
}

func (v *versionedCatalog) bump(tableID int64, schemaID int32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.tableID, v.schemaID = tableID, schemaID
}

func (v *versionedCatalog) getCount() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.gets
}

// rowsDecoder decodes n entries with ids e0, e1, ... for any table.
func rowsDecoder(n int) decoderFunc {
	return decoderFunc{write: func(*Table, int) (domain.WriteBatch, []string, error) {
		b := domain.WriteBatch{Entries: make([]domain.WriteEntry, n)}
		ids := make([]string, n)
		for i := range ids {
			ids[i] = "e" + string(rune('0'+i))
			b.Entries[i] = domain.WriteEntry{Op: domain.OpUpsert, Row: []domain.Datum{{I64: int64(i)}}}
		}
		return b, ids, nil
	}}
}

func TestWriteAssemblesVerdictsAndSummary(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 7, schemaID: 3}
	var seen *domain.WriteBatch
	dc := &dataClusters{catalog: vc.catalog(), writer: writerFunc(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		seen = b
		return []domain.EntryResult{
			{},
			{Code: "timeout", Applied: domain.AppliedUnknown, Retryable: true},
			{Code: "timeout", Applied: domain.AppliedNo, Retryable: true},
			{Code: "invalid_record", Applied: domain.AppliedNo},
		}, nil
	})}
	s := NewRecordService(dc, RecordOptions{})
	res, err := s.Write(context.Background(), Scope{Cluster: "c1"}, WriteCommand{Path: usersPath, Decoder: rowsDecoder(4)})
	require.NoError(t, err)
	assert.Equal(t, []string{"e0", "e1", "e2", "e3"}, res.IDs)
	assert.Equal(t, usersPath, seen.Table)
	assert.Equal(t, int64(7), seen.TableID)
	assert.Equal(t, int32(3), seen.SchemaID)
	assert.Equal(t, 4, res.Summary.Rows)
	assert.Equal(t, 1, res.Summary.Succeeded)
	assert.Equal(t, 3, res.Summary.Failed)
	assert.Equal(t, map[string]int{"timeout": 2, "invalid_record": 1}, res.Summary.FailedByCode)
	assert.Equal(t, 1, res.Summary.AppliedUnknown)
}

func TestWriteWholeRequestFailures(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 1, schemaID: 1}
	ok := writerFunc(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		return make([]domain.EntryResult, len(b.Entries)), nil
	})
	cases := []struct {
		name    string
		writer  domain.RowWriter
		decoder decoderFunc
		path    domain.TablePath
		limits  RecordLimits
		kind    domain.Kind
		msg     string
	}{
		{name: "no writer", decoder: rowsDecoder(1), path: usersPath, kind: domain.KindUnsupported, msg: "does not support writes"},
		{name: "more rows than allowed", writer: ok, decoder: rowsDecoder(3), path: usersPath, limits: RecordLimits{WriteMaxRows: 2},
			kind: domain.KindLimitExceeded, msg: "3 entries exceed the limit of 2"},
		{name: "ids do not match", writer: ok, path: usersPath, kind: domain.KindInternal, decoder: decoderFunc{write: func(*Table, int) (domain.WriteBatch, []string, error) {
			return domain.WriteBatch{Entries: make([]domain.WriteEntry, 2)}, []string{"a"}, nil
		}}},
		{name: "writer verdict count", path: usersPath, decoder: rowsDecoder(2), kind: domain.KindInternal,
			writer: writerFunc(func(context.Context, *domain.WriteBatch) ([]domain.EntryResult, error) { return nil, nil })},
		{name: "unknown table", writer: ok, decoder: rowsDecoder(1), path: domain.TablePath{Database: "d", Table: "nope"}, kind: domain.KindNotFound},
		{name: "invalid name", writer: ok, decoder: rowsDecoder(1), path: domain.TablePath{Database: "d", Table: "a.b"}, kind: domain.KindInvalidArgument},
		{name: "writer gives up at the deadline", decoder: rowsDecoder(1), path: usersPath, kind: domain.KindTimeout, msg: "before any entry was submitted",
			writer: writerFunc(func(ctx context.Context, _ *domain.WriteBatch) ([]domain.EntryResult, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dc := &dataClusters{catalog: vc.catalog(), writer: tc.writer}
			s := NewRecordService(dc, RecordOptions{Limits: tc.limits})
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err := s.Write(ctx, Scope{Cluster: "c1"}, WriteCommand{Path: tc.path, Decoder: tc.decoder})
			require.Error(t, err)
			assert.Equal(t, tc.kind, domain.KindOf(err), "%v", err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestWriteDeadlinePassedBeforeSubmission(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 1, schemaID: 1}
	called := false
	dc := &dataClusters{catalog: vc.catalog(), writer: writerFunc(func(context.Context, *domain.WriteBatch) ([]domain.EntryResult, error) {
		called = true
		return nil, nil
	})}
	s := NewRecordService(dc, RecordOptions{MaxDeliveryTime: time.Nanosecond})
	_, err := s.Write(context.Background(), Scope{Cluster: "c1"}, WriteCommand{Path: usersPath, Decoder: rowsDecoder(1)})
	assert.Equal(t, domain.KindTimeout, domain.KindOf(err))
	assert.False(t, called)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s = NewRecordService(dc, RecordOptions{})
	_, err = s.Write(ctx, Scope{Cluster: "c1"}, WriteCommand{Path: usersPath, Decoder: rowsDecoder(1)})
	assert.Equal(t, domain.KindCancelled, domain.KindOf(err))
	assert.False(t, called)
}

func TestDeliveryDeadline(t *testing.T) {
	t.Parallel()
	start := time.Now()
	cases := []struct {
		name     string
		timeout  time.Duration // request deadline after start; 0: none
		maxDeliv time.Duration
		want     time.Duration // delivery deadline after start; 0: none
	}{
		{"default margin", 30 * time.Second, 0, 30*time.Second - MaxAnswerMargin},
		{"short request", 200 * time.Millisecond, 0, 150 * time.Millisecond},
		{"max delivery time", 30 * time.Second, 5 * time.Second, 5 * time.Second},
		{"max delivery time above the request's", time.Second, 5 * time.Second, 750 * time.Millisecond},
		{"no request deadline", 0, 2 * time.Second, 2 * time.Second},
		{"nothing", 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewRecordService(&dataClusters{}, RecordOptions{MaxDeliveryTime: tc.maxDeliv, Now: func() time.Time { return start }})
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, start.Add(tc.timeout))
				defer cancel()
			}
			dctx, cancel := s.deliveryContext(ctx, start)
			defer cancel()
			dl, ok := dctx.Deadline()
			if tc.want == 0 {
				assert.False(t, ok)
				return
			}
			require.True(t, ok)
			assert.Equal(t, start.Add(tc.want), dl)
		})
	}
}

func TestWriteRetriesOnceAfterAStaleDefinition(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 1, schemaID: 1}
	var tableIDs []int64
	dc := &dataClusters{catalog: vc.catalog()}
	dc.writer = writerFunc(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		tableIDs = append(tableIDs, b.TableID)
		if b.TableID == 1 {
			return nil, domain.NewStaleDefinition(&domain.StaleDefinitionError{Table: b.Table, UsedTableID: b.TableID, TableID: 2})
		}
		return make([]domain.EntryResult, len(b.Entries)), nil
	})
	s := NewRecordService(dc, RecordOptions{})
	scope := Scope{Cluster: "c1"}
	_, err := s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: rowsDecoder(1)})
	assert.Equal(t, domain.KindFailedPrecondition, domain.KindOf(err), "unchanged definition: no second attempt")
	assert.Equal(t, []int64{1}, tableIDs)

	// The table was re-created: the cached definition (id 1) is refused,
	// then one new attempt goes out against the new definition.
	vc.bump(2, 1)
	tableIDs = nil
	_, err = s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: rowsDecoder(1)})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, tableIDs)
}

func TestDecodeFailureAgainstACachedDefinitionRefetches(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 1, schemaID: 1}
	dc := &dataClusters{catalog: vc.catalog(), writer: writerFunc(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		return make([]domain.EntryResult, len(b.Entries)), nil
	})}
	clock := testclock.New()
	s := NewRecordService(dc, RecordOptions{Now: clock.Now})
	scope := Scope{Cluster: "c1"}
	// Valid only against schema 2 (a column was added).
	dec := decoderFunc{write: func(t *Table, _ int) (domain.WriteBatch, []string, error) {
		if t.Info.SchemaID < 2 {
			return domain.WriteBatch{}, nil, domain.InvalidArgument("entry `a`: column `note`: no such column")
		}
		return domain.WriteBatch{Entries: []domain.WriteEntry{{Op: domain.OpUpsert}}}, []string{"a"}, nil
	}}
	_, err := s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: dec})
	require.Error(t, err)
	assert.Equal(t, 1, vc.getCount(), "a fresh definition is not fetched twice")

	vc.bump(1, 2)
	_, err = s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: dec})
	require.Error(t, err)
	assert.Equal(t, 1, vc.getCount(), "a definition younger than the refetch interval is trusted")

	clock.Advance(DefaultSchemaRefetchInterval)
	res, err := s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: dec})
	require.NoError(t, err)
	assert.Equal(t, int32(2), res.Table.Info.SchemaID)
	assert.Equal(t, 2, vc.getCount())
}

// TestUnknownColumnRefreshesOnceBeforeRefusing: a write naming a column the
// cached definition lacks (domain.ErrUnknownColumn) refreshes the definition
// once before refusing, however young the snapshot: a column added through
// another gateway a moment ago is written; a column that really does not
// exist is refused with 400 after one refresh; a snapshot confirmed after
// the request began is not refreshed again.
func TestUnknownColumnRefreshesOnceBeforeRefusing(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 1, schemaID: 1}
	dc := &dataClusters{catalog: vc.catalog(), writer: writerFunc(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		return make([]domain.EntryResult, len(b.Entries)), nil
	})}
	clock := testclock.New()
	s := NewRecordService(dc, RecordOptions{Now: clock.Now})
	scope := Scope{Cluster: "c1"}
	decoder := func(validFrom int32) decoderFunc {
		return decoderFunc{write: func(t *Table, _ int) (domain.WriteBatch, []string, error) {
			if t.Info.SchemaID < validFrom {
				return domain.WriteBatch{}, nil, domain.UnknownColumn("entry `a`: column `note`: no such column")
			}
			return domain.WriteBatch{Entries: []domain.WriteEntry{{Op: domain.OpUpsert}}}, []string{"a"}, nil
		}}
	}
	_, err := s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: decoder(1)})
	require.NoError(t, err)
	require.Equal(t, 1, vc.getCount())

	// ALTER elsewhere, 1 ms later: well within the refetch interval.
	vc.bump(1, 2)
	clock.Advance(time.Millisecond)
	res, err := s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: decoder(2)})
	require.NoError(t, err, "the new column is found after one refresh")
	assert.Equal(t, int32(2), res.Table.Info.SchemaID)
	assert.Equal(t, 2, vc.getCount())

	// A column that exists in no version: one refresh per request, then 400.
	for i := range 3 {
		clock.Advance(time.Millisecond)
		_, err = s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: decoder(99)})
		require.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
		assert.True(t, domain.IsUnknownColumn(err))
		assert.Equal(t, 3+i, vc.getCount(), "one refresh before each refusal")
	}
	// Confirmed after the request began (same instant): no refresh.
	_, err = s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: decoder(99)})
	require.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
	assert.Equal(t, 5, vc.getCount())
}

// rejectingDecoder rejects, entry by entry, the entries naming column
// `note` while the definition's schema id is below validFrom.
type rejectingDecoder struct {
	decoderFunc
	validFrom int32
}

func (d *rejectingDecoder) DecodeWrite(t *Table, _ int) (DecodedWrite, error) {
	if t.Info.SchemaID < d.validFrom {
		return DecodedWrite{Batch: domain.WriteBatch{Entries: []domain.WriteEntry{{Op: domain.OpUpsert}}}, IDs: []string{"a"},
			Rejected: []RejectedEntry{{Index: 1, ID: "b", Message: "entry `b`: column `note`: no such column", UnknownColumn: true}}}, nil
	}
	return DecodedWrite{Batch: domain.WriteBatch{Entries: []domain.WriteEntry{{Op: domain.OpUpsert}, {Op: domain.OpUpsert}}}, IDs: []string{"a", "b"}}, nil
}

// TestReportedUnknownColumnRefreshesOnce: with entries rejected one by one
// (X-Fluss-Invalid-Entries: report), an entry naming a column added
// elsewhere a moment ago makes the write refresh the definition once and
// decode again: both entries are written. A column no version has is
// answered per entry after that one refresh.
func TestReportedUnknownColumnRefreshesOnce(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 1, schemaID: 1}
	var written []int
	dc := &dataClusters{catalog: vc.catalog(), writer: writerFunc(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		written = append(written, len(b.Entries))
		return make([]domain.EntryResult, len(b.Entries)), nil
	})}
	clock := testclock.New()
	s := NewRecordService(dc, RecordOptions{Now: clock.Now})
	scope := Scope{Cluster: "c1"}
	_, err := s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: decoder1()})
	require.NoError(t, err)
	require.Equal(t, 1, vc.getCount())

	vc.bump(1, 2)
	clock.Advance(time.Millisecond)
	written = nil
	res, err := s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: &rejectingDecoder{validFrom: 2}})
	require.NoError(t, err)
	assert.Equal(t, []int{2}, written, "both entries written against the refreshed definition")
	assert.Equal(t, 2, res.Summary.Succeeded)
	assert.Equal(t, 2, vc.getCount())

	clock.Advance(time.Millisecond)
	written = nil
	res, err = s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: &rejectingDecoder{validFrom: 99}})
	require.NoError(t, err)
	assert.Equal(t, []int{1}, written, "the valid entry is written once")
	assert.Equal(t, 1, res.Summary.Succeeded)
	assert.Equal(t, 1, res.Summary.Failed, "the unknown column is answered for its entry")
	assert.Equal(t, 3, vc.getCount(), "one refresh")
}

func decoder1() decoderFunc {
	return decoderFunc{write: func(*Table, int) (domain.WriteBatch, []string, error) {
		return domain.WriteBatch{Entries: []domain.WriteEntry{{Op: domain.OpUpsert}}}, []string{"a"}, nil
	}}
}

// TestInvalidRequestsDoNotStreamRefreshes: against an unchanged definition,
// a stream of requests that fail to decode refreshes it at most once per
// refetch interval.
func TestInvalidRequestsDoNotStreamRefreshes(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 1, schemaID: 1}
	dc := &dataClusters{catalog: vc.catalog(), writer: writerFunc(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		return make([]domain.EntryResult, len(b.Entries)), nil
	})}
	clock := testclock.New()
	s := NewRecordService(dc, RecordOptions{Now: clock.Now})
	bad := decoderFunc{write: func(*Table, int) (domain.WriteBatch, []string, error) {
		return domain.WriteBatch{}, nil, domain.InvalidArgument("entry `a`: column `nope`: no such column")
	}}
	write := func() {
		_, err := s.Write(context.Background(), Scope{Cluster: "c1"}, WriteCommand{Path: usersPath, Decoder: bad})
		require.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
	}
	write()
	assert.Equal(t, 1, vc.getCount())
	clock.Advance(DefaultSchemaRefetchInterval)
	write() // refreshes: the definition is unchanged
	assert.Equal(t, 2, vc.getCount())
	for range 5 {
		write()
	}
	assert.Equal(t, 2, vc.getCount(), "the refresh counted as a check")
	clock.Advance(DefaultSchemaRefetchInterval)
	write()
	assert.Equal(t, 3, vc.getCount())
}

func TestSnapshots(t *testing.T) {
	t.Parallel()
	clock := testclock.New()
	c := newSnapshots(2, clock.Now)
	key := func(cluster string) tableKey { return tableKey{cluster: cluster, path: usersPath} }
	v1 := domain.TableInfo{Path: usersPath, TableID: 1, SchemaID: 1}

	t1 := c.of(key("a"), v1, false)
	assert.Same(t, t1, c.of(key("a"), v1, false), "an unchanged definition shares its snapshot")
	v2 := v1
	v2.SchemaID = 2
	t2 := c.of(key("a"), v2, false)
	assert.NotSame(t, t1, t2)
	assert.Equal(t, int32(2), t2.Info.SchemaID)
	v3 := v2
	v3.ModifiedTime = time.Unix(5, 0) // a config change
	assert.NotSame(t, t2, c.of(key("a"), v3, false))

	tb := c.of(key("b"), v1, false)
	_ = c.of(key("a"), v3, false) // a is now the most recent
	_ = c.of(key("c"), v1, false) // evicts b
	assert.Equal(t, 2, c.len())
	assert.NotSame(t, tb, c.of(key("b"), v1, false), "b was the least recently used")

	// A compiled form lives with its snapshot.
	builds := 0
	build := func(domain.TableInfo) (any, error) { builds++; return "codec", nil }
	c1, _ := t1.Compiled(build)
	c2, _ := t1.Compiled(build)
	assert.Equal(t, "codec", c1)
	assert.Equal(t, c1, c2)
	assert.Equal(t, 1, builds)
	_, err := NewTable(domain.TableInfo{}).Compiled(func(domain.TableInfo) (any, error) { return nil, errors.New("bad") })
	assert.Error(t, err)
}

// TestSessionsWithoutDefinitionsUseTheCatalog: a session that does not
// resolve definitions itself is served by its catalog on every request.
func TestSessionsWithoutDefinitionsUseTheCatalog(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 1, schemaID: 1}
	d := definitionsOf(catalogOnlySession{vc.catalog()})
	info, err := d.Table(context.Background(), usersPath)
	require.NoError(t, err)
	assert.Equal(t, int64(1), info.TableID)
	vc.bump(2, 1)
	info, err = d.Table(context.Background(), usersPath)
	require.NoError(t, err)
	assert.Equal(t, int64(2), info.TableID)
	_, err = d.Refresh(context.Background(), usersPath)
	require.NoError(t, err)
	assert.Equal(t, 3, vc.getCount())
}

type catalogOnlySession struct{ cat domain.Catalog }

func (s catalogOnlySession) Catalog() domain.Catalog  { return s.cat }
func (s catalogOnlySession) Writer() domain.RowWriter { return nil }
func (s catalogOnlySession) Lookup() domain.Lookup    { return nil }

func TestLookupPaths(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 1, schemaID: 1}
	lk := &fakeLookupPort{}
	dc := &dataClusters{catalog: vc.catalog(), lookup: lk}
	s := NewRecordService(dc, RecordOptions{Limits: RecordLimits{LookupMaxKeyBytes: 10, LookupMaxKeys: 2}})
	scope := Scope{Cluster: "c1"}
	keys := decoderFunc{size: 5, keys: func(*Table, int) ([][]domain.Datum, error) { return [][]domain.Datum{{{I64: 1}}}, nil }}

	lk.lookup = func(_ context.Context, r *domain.LookupRequest) (*domain.LookupResponse, error) {
		return &domain.LookupResponse{SchemaID: r.SchemaID, Results: make([]domain.LookupResult, len(r.Keys))}, nil
	}
	res, err := s.Lookup(context.Background(), scope, usersPath, keys)
	require.NoError(t, err)
	assert.Equal(t, int32(1), res.Table.Info.SchemaID)

	big := keys
	big.size = 11
	_, err = s.Lookup(context.Background(), scope, usersPath, big)
	assert.Equal(t, domain.KindLimitExceeded, domain.KindOf(err))

	many := decoderFunc{keys: func(*Table, int) ([][]domain.Datum, error) { return make([][]domain.Datum, 3), nil }}
	_, err = s.Lookup(context.Background(), scope, usersPath, many)
	assert.Equal(t, domain.KindLimitExceeded, domain.KindOf(err))

	// Rows in a newer schema than the request's are rendered with the
	// refetched definition.
	vc.bump(1, 2)
	lk.lookup = func(_ context.Context, r *domain.LookupRequest) (*domain.LookupResponse, error) {
		return &domain.LookupResponse{SchemaID: 2, Results: make([]domain.LookupResult, len(r.Keys))}, nil
	}
	res, err = s.Lookup(context.Background(), scope, usersPath, keys)
	require.NoError(t, err)
	assert.Equal(t, int32(2), res.Table.Info.SchemaID)
	lk.lookup = func(_ context.Context, r *domain.LookupRequest) (*domain.LookupResponse, error) {
		return &domain.LookupResponse{SchemaID: 9, Results: make([]domain.LookupResult, len(r.Keys))}, nil
	}
	_, err = s.Lookup(context.Background(), scope, usersPath, keys)
	assert.Equal(t, domain.KindFailedPrecondition, domain.KindOf(err))

	dc.lookup = nil
	_, err = s.Lookup(context.Background(), scope, usersPath, keys)
	assert.Equal(t, domain.KindUnsupported, domain.KindOf(err))
}

type fakeLookupPort struct {
	lookup func(ctx context.Context, r *domain.LookupRequest) (*domain.LookupResponse, error)
	prefix func(ctx context.Context, r *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error)
}

func (f *fakeLookupPort) Lookup(ctx context.Context, r *domain.LookupRequest) (*domain.LookupResponse, error) {
	return f.lookup(ctx, r)
}

func (f *fakeLookupPort) PrefixLookup(ctx context.Context, r *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
	return f.prefix(ctx, r)
}

func TestValidatePrefixColumns(t *testing.T) {
	t.Parallel()
	partitioned := domain.TableInfo{Path: usersPath, Descriptor: domain.TableDescriptor{
		Schema:        domain.Schema{PrimaryKey: []string{"dt", "region", "id"}},
		PartitionKeys: []string{"dt"},
		BucketKeys:    []string{"region"},
	}}
	defaultBuckets := domain.TableInfo{Path: usersPath, Descriptor: domain.TableDescriptor{
		Schema: domain.Schema{PrimaryKey: []string{"region", "id"}},
	}}
	twoParts := domain.TableInfo{Path: usersPath, Descriptor: domain.TableDescriptor{
		Schema:        domain.Schema{PrimaryKey: []string{"dt", "hr", "region", "id"}},
		PartitionKeys: []string{"dt", "hr"},
		BucketKeys:    []string{"region"},
	}}
	cases := []struct {
		info domain.TableInfo
		cols []string
		want string
	}{
		{partitioned, []string{"dt", "region"}, ""},
		{partitioned, []string{"region", "dt"}, ""},
		{partitioned, []string{"region"}, ""}, // across every partition
		{twoParts, []string{"region", "dt"}, "must include the partition column `hr`, or leave out every partition column"},
		{twoParts, []string{"region"}, ""},
		{partitioned, []string{"dt", "id"}, "must be the bucket key [region] in this order, plus the partition columns [dt]"},
		{defaultBuckets, []string{"region"}, "does not support prefix lookups"},
	}
	for _, tc := range cases {
		err := validatePrefixColumns(tc.info, tc.cols)
		if tc.want == "" {
			assert.NoError(t, err, "%v", tc.cols)
			continue
		}
		require.Error(t, err, "%v", tc.cols)
		assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestWriteThrottledIs429: a write whose every entry was held back by KV
// storage backpressure (storage_backpressure, retryable, applied "no") is a
// whole-request resource_exhausted whose RetryAfterMillis is the longest
// remaining throttle; one entry with another verdict keeps the per-entry
// answer.
func TestWriteThrottledIs429(t *testing.T) {
	t.Parallel()
	bp := func(d time.Duration) domain.EntryResult {
		return domain.EntryResult{Code: EntryCodeStorageBackpressure, Retryable: true, Applied: domain.AppliedNo, RetryAfter: d}
	}
	for _, tc := range []struct {
		name    string
		results []domain.EntryResult
		retryMs int64 // 0: no whole-request error
	}{
		{"all throttled", []domain.EntryResult{bp(1200 * time.Millisecond), bp(2400*time.Millisecond + 300*time.Microsecond)}, 2401},
		{"one succeeded", []domain.EntryResult{bp(time.Second), {}}, 0},
		{"one unknown", []domain.EntryResult{bp(time.Second), {Code: EntryCodeStorageBackpressure, Retryable: true, Applied: domain.AppliedUnknown}}, 0},
		{"one timeout", []domain.EntryResult{bp(time.Second), {Code: "timeout", Retryable: true, Applied: domain.AppliedNo}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vc := &versionedCatalog{tableID: 7, schemaID: 3}
			dc := &dataClusters{catalog: vc.catalog(), writer: writerFunc(func(context.Context, *domain.WriteBatch) ([]domain.EntryResult, error) {
				return tc.results, nil
			})}
			s := NewRecordService(dc, RecordOptions{})
			res, err := s.Write(context.Background(), Scope{Cluster: "c1"}, WriteCommand{Path: usersPath, Decoder: rowsDecoder(len(tc.results))})
			if tc.retryMs == 0 {
				require.NoError(t, err)
				assert.Len(t, res.Results, len(tc.results))
				return
			}
			de := domain.AsError(err)
			require.NotNil(t, de, "%v", err)
			assert.Equal(t, domain.KindResourceExhausted, de.Kind)
			assert.True(t, de.Retryable)
			assert.Equal(t, tc.retryMs, de.RetryAfterMillis)
			assert.Contains(t, de.Message, "nothing was written")
		})
	}
}
