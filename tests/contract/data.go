package contract

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Ports are what the RowWriter and Lookup suites drive: the port under test
// and a Catalog of the same cluster to create their tables. RunRowWriter
// checks the rows it wrote through Lookup when it is not nil; RunLookup
// needs Writer to put the rows it looks up.
type Ports struct {
	Catalog domain.Catalog
	Writer  domain.RowWriter
	Lookup  domain.Lookup
}

// NewPorts returns the ports under test; it is called once per scenario.
type NewPorts func(t *testing.T) Ports

// RunRowWriter runs the domain.RowWriter contract: one verdict per entry in
// input order, upserts and deletes on primary-key tables, appends on log
// tables, per-entry failures that leave the other entries written,
// partitions created on the fly, and whole-request errors.
func RunRowWriter(t *testing.T, newPorts NewPorts) {
	scenarios := []struct {
		name string
		run  func(t *testing.T, p Ports)
	}{
		{"UpsertAndDelete", writerUpsertAndDelete},
		{"AppendToLogTable", writerAppend},
		{"PerEntryFailures", writerPerEntryFailures},
		{"PartitionsCreatedOnWrite", writerPartitions},
		{"ColumnarRuns", writerColumnarRuns},
		{"EmptyBatch", writerEmptyBatch},
		{"MissingTable", writerMissingTable},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, newPorts(t)) })
	}
}

// RunLookup runs the domain.Lookup contract: one result per key in input
// order (missing keys not found, duplicates answered twice), partitioned
// tables, prefix lookups bounded by MaxRowsPerPrefix, rows written under an
// older schema rendered in the requested one, and whole-request errors.
func RunLookup(t *testing.T, newPorts NewPorts) {
	scenarios := []struct {
		name string
		run  func(t *testing.T, p Ports)
	}{
		{"KeysInInputOrder", lookupKeysInOrder},
		{"PartitionedTable", lookupPartitioned},
		{"PrefixLookup", lookupPrefix},
		{"AfterAddColumn", lookupAfterAddColumn},
		{"Errors", lookupErrors},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			p := newPorts(t)
			require.NotNil(t, p.Writer, "the Lookup suite writes its rows through Writer")
			sc.run(t, p)
		})
	}
}

// ---- tables and rows ----

// usersPK: id BIGINT (primary key), name STRING, v BIGINT; 3 buckets.
func usersPK() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			Column("id", domain.TypeBigInt, false), Column("name", domain.TypeString, true), Column("v", domain.TypeBigInt, true),
		}, PrimaryKey: []string{"id"}},
		BucketCount: 3,
	}
}

// eventsLog: id BIGINT, msg STRING; 2 buckets.
func eventsLog() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema:      domain.Schema{Columns: []domain.Column{Column("id", domain.TypeBigInt, true), Column("msg", domain.TypeString, true)}},
		BucketCount: 2,
	}
}

// dailyPK: id BIGINT, dt STRING, v STRING; primary key (id, dt),
// partitioned by dt; 2 buckets.
func dailyPK() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			Column("id", domain.TypeBigInt, false), Column("dt", domain.TypeString, false), Column("v", domain.TypeString, true),
		}, PrimaryKey: []string{"id", "dt"}},
		PartitionKeys: []string{"dt"},
		BucketCount:   2,
	}
}

// ordersPK: customer BIGINT, ord BIGINT, amount BIGINT; primary key
// (customer, ord), bucket key customer (prefix lookups); 2 buckets.
func ordersPK() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			Column("customer", domain.TypeBigInt, false), Column("ord", domain.TypeBigInt, false), Column("amount", domain.TypeBigInt, true),
		}, PrimaryKey: []string{"customer", "ord"}},
		BucketKeys:  []string{"customer"},
		BucketCount: 2,
	}
}

// newTable creates a table in a fresh database and returns its info.
func newTable(t *testing.T, c domain.Catalog, name string, desc domain.TableDescriptor) domain.TableInfo {
	t.Helper()
	db := NewDatabase(t, c, "ct_data")
	path := domain.TablePath{Database: db, Table: name}
	require.NoError(t, c.CreateTable(Ctx(t), path, desc, false))
	info, err := c.GetTable(Ctx(t), path)
	require.NoError(t, err)
	return info
}

func i64(v int64) domain.Datum             { return domain.Datum{I64: v} }
func str(s string) domain.Datum            { return domain.Datum{Bytes: []byte(s)} }
func null() domain.Datum                   { return domain.Datum{Null: true} }
func row(d ...domain.Datum) []domain.Datum { return d }

func upsert(r ...domain.Datum) domain.WriteEntry {
	return domain.WriteEntry{Op: domain.OpUpsert, Row: r}
}

func del(r ...domain.Datum) domain.WriteEntry { return domain.WriteEntry{Op: domain.OpDelete, Row: r} }

func appendRow(r ...domain.Datum) domain.WriteEntry {
	return domain.WriteEntry{Op: domain.OpAppend, Row: r}
}

func batch(info domain.TableInfo, entries ...domain.WriteEntry) *domain.WriteBatch {
	return &domain.WriteBatch{Table: info.Path, TableID: info.TableID, SchemaID: info.SchemaID, Entries: entries}
}

// write writes entries and checks that there is one verdict per entry.
func write(t *testing.T, w domain.RowWriter, info domain.TableInfo, entries ...domain.WriteEntry) []domain.EntryResult {
	t.Helper()
	res, err := w.Write(Ctx(t), batch(info, entries...))
	require.NoError(t, err)
	require.Len(t, res, len(entries), "one verdict per entry")
	return res
}

func requireAllOK(t *testing.T, res []domain.EntryResult) {
	t.Helper()
	for i, r := range res {
		require.True(t, r.OK(), "entry %d: %+v", i, r)
	}
}

// render shows a row as text for comparisons: BIGINT as its number, STRING
// as quoted text, NULL as null.
func render(types []domain.TypeRoot, r []domain.Datum) string {
	if r == nil {
		return "<not found>"
	}
	out := ""
	for i, d := range r {
		if i > 0 {
			out += ","
		}
		switch {
		case d.Null:
			out += "null"
		case i < len(types) && types[i] == domain.TypeString:
			out += fmt.Sprintf("%q", d.Bytes)
		default:
			out += fmt.Sprint(d.I64)
		}
	}
	return out
}

func roots(info domain.TableInfo) []domain.TypeRoot {
	var out []domain.TypeRoot
	for _, c := range info.Descriptor.Schema.Columns {
		out = append(out, c.Type.Root)
	}
	return out
}

// lookupRows looks keys up and renders the found rows ("<not found>" when
// missing), failing on any per-key error.
func lookupRows(t *testing.T, l domain.Lookup, info domain.TableInfo, keys ...[]domain.Datum) []string {
	t.Helper()
	resp, err := l.Lookup(Ctx(t), &domain.LookupRequest{Table: info.Path, TableID: info.TableID, SchemaID: info.SchemaID, Keys: keys})
	require.NoError(t, err)
	require.Len(t, resp.Results, len(keys), "one result per key")
	assert.Equal(t, info.SchemaID, resp.SchemaID)
	out := make([]string, len(keys))
	for i, r := range resp.Results {
		require.Nil(t, r.Err, "key %d", i)
		out[i] = render(roots(info), r.Row)
	}
	return out
}

// ---- RowWriter scenarios ----

func writerUpsertAndDelete(t *testing.T, p Ports) {
	info := newTable(t, p.Catalog, "users", usersPK())
	requireAllOK(t, write(t, p.Writer, info,
		upsert(i64(1), str("ada"), i64(10)), upsert(i64(2), str("bob"), null()), upsert(i64(3), str("cy"), i64(30))))
	requireAllOK(t, write(t, p.Writer, info,
		del(i64(2), null(), null()), upsert(i64(1), str("ada2"), i64(11)), upsert(i64(4), null(), i64(40))))
	if p.Lookup == nil {
		return
	}
	assert.Equal(t, []string{`1,"ada2",11`, "<not found>", `3,"cy",30`, `4,null,40`},
		lookupRows(t, p.Lookup, info, row(i64(1)), row(i64(2)), row(i64(3)), row(i64(4))),
		"the last write of a key wins; a delete removes it")
}

func writerAppend(t *testing.T, p Ports) {
	info := newTable(t, p.Catalog, "events", eventsLog())
	var entries []domain.WriteEntry
	for i := range 20 {
		entries = append(entries, appendRow(i64(int64(i)), str(fmt.Sprintf("event %d", i))))
	}
	entries = append(entries, appendRow(null(), null()))
	requireAllOK(t, write(t, p.Writer, info, entries...))
}

// writerColumnarRuns: a writer that answers columnar rows run by run
// (domain.ColumnarRunWriter) covers every row, in order, and agrees with
// its own Write: the same rows, each with its own verdict. Writers without
// columnar appends skip it.
func writerColumnarRuns(t *testing.T, p Ports) {
	rw, ok := p.Writer.(domain.ColumnarRunWriter)
	if !ok {
		t.Skip("the writer takes no columnar rows run by run")
	}
	info := newTable(t, p.Catalog, "events", eventsLog())
	require.True(t, domain.ColumnarAppendable(info), "a log table without bucket key takes columnar rows")
	const n = 1000
	cols := func(base int) *domain.ColumnarRows { return IDStringColumns(base, n, 5, "event ") }
	wb := batch(info)
	wb.Columns = cols(0)
	runs, err := rw.WriteColumnRuns(Ctx(t), wb)
	require.NoError(t, err)
	require.Equal(t, n, domain.RunRows(runs), "the runs cover every row")
	for i, run := range runs {
		require.Positive(t, run.Rows, "run %d", i)
		require.True(t, run.Result.OK(), "run %d: %+v", i, run.Result)
	}
	expanded := domain.ExpandRuns(nil, runs)
	require.Len(t, expanded, n)

	wb = batch(info)
	wb.Columns = cols(n)
	res, err := p.Writer.Write(Ctx(t), wb)
	require.NoError(t, err)
	require.Len(t, res, n, "Write: one verdict per row")
	requireAllOK(t, res)
	for i := range n {
		assert.Equal(t, res[i].At.Known, expanded[i].At.Known, "row %d: a position both ways or neither", i)
	}
}

// IDStringColumns returns n rows of a (BIGINT, STRING) log table as
// columnar rows in the Fluss Arrow layout: id = base+i, the string
// prefix+id, null in every nullEvery-th row (i%nullEvery == nullEvery-1).
func IDStringColumns(base, n, nullEvery int, prefix string) *domain.ColumnarRows {
	ids := make([]byte, 0, 8*n)
	offs := binary.LittleEndian.AppendUint32(nil, 0)
	var data []byte
	valid := make([]byte, (n+7)/8)
	for i := range n {
		ids = binary.LittleEndian.AppendUint64(ids, uint64(base+i))
		if i%nullEvery != nullEvery-1 {
			valid[i/8] |= 1 << (i % 8)
			data = fmt.Appendf(data, "%s%d", prefix, base+i)
		}
		offs = binary.LittleEndian.AppendUint32(offs, uint32(len(data)))
	}
	return &domain.ColumnarRows{Rows: n, Columns: []domain.ColumnValues{{Values: ids}, {Validity: valid, Offsets: offs, Data: data}}}
}

func requireRefused(t *testing.T, r domain.EntryResult, code string) {
	t.Helper()
	assert.Equal(t, code, r.Code, "%+v", r)
	assert.Equal(t, domain.AppliedNo, r.Applied, "a refused entry was never written")
	assert.False(t, r.Retryable)
	assert.NotEmpty(t, r.Message)
}

func writerPerEntryFailures(t *testing.T, p Ports) {
	pk := newTable(t, p.Catalog, "users", usersPK())
	res := write(t, p.Writer, pk,
		upsert(i64(1), str("ok"), i64(1)),
		appendRow(i64(2), str("append on a primary-key table"), i64(2)),
		upsert(i64(3), str("short row")),
		upsert(i64(4), str("ok"), i64(4)))
	assert.True(t, res[0].OK(), "%+v", res[0])
	requireRefused(t, res[1], "invalid_argument")
	requireRefused(t, res[2], "invalid_argument")
	assert.True(t, res[3].OK(), "%+v", res[3])
	if p.Lookup != nil {
		assert.Equal(t, []string{`1,"ok",1`, "<not found>", "<not found>", `4,"ok",4`},
			lookupRows(t, p.Lookup, pk, row(i64(1)), row(i64(2)), row(i64(3)), row(i64(4))),
			"the valid entries were written, the refused ones not")
	}

	log := newTable(t, p.Catalog, "events", eventsLog())
	res = write(t, p.Writer, log, appendRow(i64(1), str("ok")), upsert(i64(2), str("upsert on a log table")))
	assert.True(t, res[0].OK(), "%+v", res[0])
	requireRefused(t, res[1], "invalid_argument")
}

func writerPartitions(t *testing.T, p Ports) {
	info := newTable(t, p.Catalog, "daily", dailyPK())
	requireAllOK(t, write(t, p.Writer, info,
		upsert(i64(1), str("20260101"), str("a")), upsert(i64(2), str("20260102"), str("b")), upsert(i64(1), str("20260102"), str("c"))))
	parts, err := p.Catalog.ListPartitions(Ctx(t), info.Path)
	require.NoError(t, err)
	var names []string
	for _, pi := range parts {
		names = append(names, pi.Name)
	}
	slices.Sort(names)
	assert.Equal(t, []string{"20260101", "20260102"}, names, "missing partitions are created on write")
	if p.Lookup != nil {
		assert.Equal(t, []string{`1,"20260101","a"`, `1,"20260102","c"`, `2,"20260102","b"`},
			lookupRows(t, p.Lookup, info, row(i64(1), str("20260101")), row(i64(1), str("20260102")), row(i64(2), str("20260102"))))
	}
}

func writerEmptyBatch(t *testing.T, p Ports) {
	info := newTable(t, p.Catalog, "users", usersPK())
	res, err := p.Writer.Write(Ctx(t), batch(info))
	require.NoError(t, err)
	assert.Empty(t, res)
}

func writerMissingTable(t *testing.T, p Ports) {
	db := NewDatabase(t, p.Catalog, "ct_data")
	_, err := p.Writer.Write(Ctx(t), &domain.WriteBatch{Table: domain.TablePath{Database: db, Table: "nope"},
		Entries: []domain.WriteEntry{upsert(i64(1), str("x"), i64(1))}})
	RequireKind(t, err, domain.KindNotFound, domain.ResourceTable)
}

// ---- Lookup scenarios ----

func lookupKeysInOrder(t *testing.T, p Ports) {
	info := newTable(t, p.Catalog, "users", usersPK())
	var entries []domain.WriteEntry
	for i := int64(1); i <= 30; i++ {
		entries = append(entries, upsert(i64(i), str(fmt.Sprintf("user %d", i)), i64(i*10)))
	}
	requireAllOK(t, write(t, p.Writer, info, entries...))
	assert.Equal(t,
		[]string{`30,"user 30",300`, "<not found>", `1,"user 1",10`, `17,"user 17",170`, `1,"user 1",10`, "<not found>"},
		lookupRows(t, p.Lookup, info, row(i64(30)), row(i64(99)), row(i64(1)), row(i64(17)), row(i64(1)), row(i64(-5))),
		"results in input order; missing keys not found; duplicates answered each time")

	resp, err := p.Lookup.Lookup(Ctx(t), &domain.LookupRequest{Table: info.Path, TableID: info.TableID, SchemaID: info.SchemaID})
	require.NoError(t, err)
	assert.Empty(t, resp.Results, "no keys, no results")
}

func lookupPartitioned(t *testing.T, p Ports) {
	info := newTable(t, p.Catalog, "daily", dailyPK())
	requireAllOK(t, write(t, p.Writer, info,
		upsert(i64(1), str("20260101"), str("a")), upsert(i64(1), str("20260102"), str("b"))))
	assert.Equal(t, []string{`1,"20260102","b"`, "<not found>", `1,"20260101","a"`, "<not found>"},
		lookupRows(t, p.Lookup, info,
			row(i64(1), str("20260102")), row(i64(2), str("20260101")), row(i64(1), str("20260101")), row(i64(1), str("20261231"))),
		"a key of a partition that does not exist is not found")
}

func lookupPrefix(t *testing.T, p Ports) {
	info := newTable(t, p.Catalog, "orders", ordersPK())
	requireAllOK(t, write(t, p.Writer, info,
		upsert(i64(7), i64(1), i64(100)), upsert(i64(7), i64(2), i64(200)), upsert(i64(8), i64(1), i64(50)), upsert(i64(9), i64(3), null())))
	ask := func(max int, prefixes ...[]domain.Datum) *domain.PrefixLookupResponse {
		t.Helper()
		resp, err := p.Lookup.PrefixLookup(Ctx(t), &domain.PrefixLookupRequest{Table: info.Path, TableID: info.TableID, SchemaID: info.SchemaID,
			PrefixColumns: []string{"customer"}, Prefixes: prefixes, MaxRowsPerPrefix: max})
		require.NoError(t, err)
		require.Len(t, resp.Results, len(prefixes), "one result per prefix")
		assert.Equal(t, info.SchemaID, resp.SchemaID)
		return resp
	}
	rows := func(r domain.PrefixLookupResult) []string {
		require.Nil(t, r.Err)
		var out []string
		for _, rw := range r.Rows {
			out = append(out, render(roots(info), rw))
		}
		slices.Sort(out)
		return out
	}
	resp := ask(0, row(i64(8)), row(i64(42)), row(i64(7)), row(i64(9)))
	assert.Equal(t, []string{"8,1,50"}, rows(resp.Results[0]))
	assert.Empty(t, rows(resp.Results[1]), "an unknown prefix has no rows")
	assert.Equal(t, []string{"7,1,100", "7,2,200"}, rows(resp.Results[2]))
	assert.Equal(t, []string{"9,3,null"}, rows(resp.Results[3]))
	for _, r := range resp.Results {
		assert.False(t, r.Truncated)
	}

	resp = ask(1, row(i64(7)), row(i64(8)))
	assert.Len(t, resp.Results[0].Rows, 1)
	assert.True(t, resp.Results[0].Truncated, "more rows than MaxRowsPerPrefix")
	assert.Equal(t, []string{"8,1,50"}, rows(resp.Results[1]))
	assert.False(t, resp.Results[1].Truncated, "exactly MaxRowsPerPrefix rows")
}

func lookupAfterAddColumn(t *testing.T, p Ports) {
	v1 := newTable(t, p.Catalog, "users", usersPK())
	requireAllOK(t, write(t, p.Writer, v1, upsert(i64(1), str("one"), i64(10)), upsert(i64(2), str("two"), null())))
	extra := domain.Column{Name: "extra", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: domain.UnassignedFieldID}
	require.NoError(t, p.Catalog.AlterTable(Ctx(t), v1.Path, []domain.TableChange{{Kind: domain.ChangeAddColumn, Column: extra}}, false))
	v2, err := p.Catalog.GetTable(Ctx(t), v1.Path)
	require.NoError(t, err)
	require.Greater(t, v2.SchemaID, v1.SchemaID)
	requireAllOK(t, write(t, p.Writer, v2, upsert(i64(3), str("three"), i64(30), str("x")), upsert(i64(2), str("two again"), null(), str("y"))))

	assert.Equal(t, []string{`1,"one",10,null`, `2,"two again",null,"y"`, `3,"three",30,"x"`, "<not found>"},
		lookupRows(t, p.Lookup, v2, row(i64(1)), row(i64(2)), row(i64(3)), row(i64(4))),
		"a row written under the old schema has the new column null")
	assert.Equal(t, []string{`1,"one",10`, `2,"two again",null`, `3,"three",30`},
		lookupRows(t, p.Lookup, v1, row(i64(1)), row(i64(2)), row(i64(3))),
		"rendered in the old schema, the new column is dropped")
}

func lookupErrors(t *testing.T, p Ports) {
	pk := newTable(t, p.Catalog, "orders", ordersPK())
	log, err := func() (domain.TableInfo, error) {
		path := domain.TablePath{Database: pk.Path.Database, Table: "events"}
		if err := p.Catalog.CreateTable(Ctx(t), path, eventsLog(), false); err != nil {
			return domain.TableInfo{}, err
		}
		return p.Catalog.GetTable(Ctx(t), path)
	}()
	require.NoError(t, err)

	_, err = p.Lookup.Lookup(Ctx(t), &domain.LookupRequest{Table: domain.TablePath{Database: pk.Path.Database, Table: "nope"},
		Keys: [][]domain.Datum{{i64(1)}}})
	RequireKind(t, err, domain.KindNotFound, domain.ResourceTable)
	_, err = p.Lookup.PrefixLookup(Ctx(t), &domain.PrefixLookupRequest{Table: domain.TablePath{Database: pk.Path.Database, Table: "nope"},
		PrefixColumns: []string{"customer"}, Prefixes: [][]domain.Datum{{i64(1)}}})
	RequireKind(t, err, domain.KindNotFound, domain.ResourceTable)

	_, err = p.Lookup.Lookup(Ctx(t), &domain.LookupRequest{Table: log.Path, TableID: log.TableID, Keys: [][]domain.Datum{{i64(1)}}})
	RequireKind(t, err, domain.KindInvalidArgument, domain.ResourceNone)

	_, err = p.Lookup.PrefixLookup(Ctx(t), &domain.PrefixLookupRequest{Table: pk.Path, TableID: pk.TableID,
		PrefixColumns: []string{"ord"}, Prefixes: [][]domain.Datum{{i64(1)}}})
	RequireKind(t, err, domain.KindInvalidArgument, domain.ResourceNone)
}
