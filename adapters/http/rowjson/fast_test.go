package rowjson

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The fast path (fast.go) must be invisible: for every body, DecodeWrite
// gives exactly what the general decoder alone gives (result or error), in a
// fresh, a reused or a partly used Buffer, and a fast-path attempt that gives
// up leaves the rows already in the Buffer untouched.

// fastCodecs are the schemas the equivalence is checked on.
func fastCodecs(t testing.TB) []*Codec {
	scalars := benchColumns()
	logCols := []domain.Column{
		col("b", typ_(domain.TypeBoolean)),
		col("t", notNull(typ_(domain.TypeTinyInt))),
		col("f", typ_(domain.TypeFloat)),
		col("d", typ_(domain.TypeDouble)),
		col("big", decimalT(30, 5)),
		col("bin", binaryT(3)),
		col("date", typ_(domain.TypeDate)),
		col("time", precT(domain.TypeTime, 3)),
		col("ltz", precT(domain.TypeTimestampLTZ, 9)),
		col(`é"\<x>`, typ_(domain.TypeString)),
		col("arr", arrayT(typ_(domain.TypeInteger))),
	}
	nullablePK := []domain.Column{
		col("k", typ_(domain.TypeInteger)),
		col("v", typ_(domain.TypeString)),
	}
	autoInc := []domain.Column{
		col("k", notNull(typ_(domain.TypeInteger))),
		col("seq", notNull(typ_(domain.TypeBigInt))),
		col("v", typ_(domain.TypeString)),
	}
	return []*Codec{
		fuzzCodec(t),
		mustCodec(t, TableSpec{Columns: scalars, PrimaryKey: []string{"id"}}),
		mustCodec(t, TableSpec{Columns: logCols}),
		mustCodec(t, TableSpec{Columns: autoInc, PrimaryKey: []string{"k"}, AutoIncrementColumns: []string{"seq"}}),
		mustCodec(t, TableSpec{Columns: nullablePK, PrimaryKey: []string{"k"}}),
	}
}

// fastBodies are bodies around the fast path's edges, for the codecs above.
var fastBodies = []string{
	// the benchmark's shape
	`{"entries":[{"id":"e0","upsert":{"id":1000000,"user":"user-0","email":"user0@example.com","country":"FR","age":18,"visits":"10000","level":0,"amount":"0.00","created":"2024-05-01T12:34:56.000","payload":"c29tZSBvcGFxdWUgcGF5bG9hZCBieXRlcywgNDggYnl0ZXMgbG9uZy4uLi4uLi4="}},` +
		`{"id":"e1","upsert":{"id":1000001,"user":"user-1","email":null,"country":"DE","age":19,"visits":10007,"level":1,"amount":13.01,"created":1714567296001,"payload":""}}]}`,
	" \t\r\n{ \"entries\" : [ { \"id\" : \"a\" , \"upsert\" : { \"id\" : 1 , \"user\" : \"u\" } } ] } \n",
	`{"entries":[{"upsert":{"user":"u","id":-1},"id":"late"},{"id":"x","delete":{"id":2}}]}`,
	`{"entries":[{"id":"a","delete":{"id":2,"user":"u"}}]}`,
	`{"entries":[{"id":"a\u0062","upsert":{"\u0069d":1,"user":"\u00e9\n\"\\\/","email":"日本","country":"日本"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"\ud83d\ude00","email":"\ud83d","country":"ab"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","country":"abc"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","country":"éé"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","age":2147483648}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","age":-0,"level":"-0","visits":1e3}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":01,"user":"x"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1.,"user":"x"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","amount":1.5e1,"created":"2024-05-01 00:00:00"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","amount":"1.005"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":null}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":null,"user":"x"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","user":"y"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","nope":1}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x",}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"},}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"}},]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"}}],}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"}}]}x`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"}}]}{}`,
	"\ufeff{\"entries\":[{\"id\":\"a\",\"upsert\":{\"id\":1,\"user\":\"x\"}}]}",
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"}}]`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"}}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x`,
	`{"entries":[{"id":"a","upsert":{"id":nul`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","email":nulL}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","email":true}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","email":{}}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","email":[]}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"}},{"id":"a","upsert":{"id":2,"user":"y"}}]}`,
	`{"entries":[{"id":"","upsert":{"id":1,"user":"x"}}]}`,
	`{"entries":[{"id":1,"upsert":{"id":1,"user":"x"}}]}`,
	`{"entries":[{"upsert":{"id":1,"user":"x"}}]}`,
	`{"entries":[{"id":"a"}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"},"delete":{"id":1}}]}`,
	`{"entries":[{"id":"a","append":{"id":1,"user":"x"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"},"id":"b"}]}`,
	`{"entries":[{"id":"a","upsert":null}]}`,
	`{"entries":[]}`,
	`{"entries":{}}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"}}],"entries":[]}`,
	`{"partial_update_columns":["id","email"],"entries":[{"id":"a","upsert":{"id":1,"email":"x"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"email":"x"}}],"partial_update_columns":["id","email"]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x"}}],"extra":1}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","payload":"AQID"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","payload":"AQI="}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","payload":"AQJ="}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","payload":"AQ\u0049D"}}]}`,
	"{\"entries\":[{\"id\":\"a\",\"upsert\":{\"id\":1,\"user\":\"x\ty\"}}]}",
	"{\"entries\":[{\"id\":\"a\",\"upsert\":{\"id\":1,\"user\":\"x\xffy\"}}]}",
	"{\"entries\":[{\"id\":\"a\",\"upsert\":{\"id\":1,\"user\":\"x\xc3\"}}]}",
	"{\"entries\":[{\"id\":\"a\",\"upsert\":{\"id\":1,\"user\":\"\xed\xa0\x80\"}}]}",
	"{\"entries\":[{\"id\":\"a\",\"upsert\":{\"id\":1,\"user\":\"\xef\xbf\xbd\x7f\"}}]}",
	"{\"entries\":[{\"id\":\"a\xff\",\"upsert\":{\"id\":1,\"user\":\"x\"}}]}",
	"{\"entries\":[{\"id\":\"a\",\"upsert\":{\"id\":1,\"us\xffer\":\"x\"}}]}",
	"{\"entries\":[{\"id\":\"a\",\"upsert\":{\"id\":1,\"user\":\"x\"}}]}\x00",
	"{\"entries\":[{\"id\":\"a\",\"upsert\":{\"id\":1,\"user\":\"x\"}}]}\x0b",
	"{\"entries\":[{\"id\":\"a\",\"upsert\":{\"id\":1,\"user\":\"x\\u0000\"}}]}",
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x\ud800y"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x\uD83D\uDE00y\/"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x\q"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x\u12"}}]}`,
	`{"entries":[{"id":"a","append":{"b":true,"t":-128,"f":1e39,"d":"NaN","big":"-123456789012345678901234.5","bin":"AQID","date":"2024-02-29","time":"23:59:59.999","ltz":"2024-01-01T00:00:00.123456789+05:30"}}]}`,
	`{"entries":[{"id":"a","append":{"b":false,"t":"127","f":-0,"d":-1.5E-3,"big":0,"date":"+12345-01-01","time":"00:00:00","ltz":1700000000000}}]}`,
	`{"entries":[{"id":"a","append":{"b":"true","t":1}}]}`,
	`{"entries":[{"id":"a","append":{"t":1,"f":"Infinity","d":"-Infinity"}}]}`,
	`{"entries":[{"id":"a","append":{"t":1,"time":"12:00:00.0001"}}]}`,
	`{"entries":[{"id":"a","append":{"t":1,"é\"\\<x>":"v"}}]}`,
	`{"entries":[{"id":"a","append":{"t":1,"\u00e9\"\\\u003cx>":"v"}}]}`,
	`{"entries":[{"id":"a","append":{"t":1,"arr":null}}]}`,
	`{"entries":[{"id":"a","append":{"t":1,"arr":[1,null,3]}}]}`,
	`{"entries":[{"id":"a","append":{"t":1,"arr":[1,"x"]}}]}`,
	`{"entries":[{"id":"a","append":{"t":null}}]}`,
	`{"entries":[{"id":"a","append":{}}]}`,
	`{"entries":[{"id":"a","upsert":{"k":5,"v":"x"}}]}`,
	`{"entries":[{"id":"a","upsert":{"k":5,"seq":1,"v":"x"}}]}`,
	`{"entries":[{"id":"a","delete":{"k":5}}]}`,
	`{"entries":[{"id":"a","upsert":{"k":null,"v":"x"}}]}`,
	`{"entries":[{"id":"a","delete":{"k":null}}]}`,
	`{"entries":[{"id":"a","upsert":{"k":1,"v":null}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","created":"2023-02-29T00:00:00"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","created":"2024-02-30 00:00:00"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","created":"2024-04-31T00:00:00.000"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","created":"1900-02-29T00:00:00"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","created":"2000-02-29T23:59:59.999"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","created":"2024-05-01T12:34:56.0001"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","created":"2024-05-01T24:00:00"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","created":"+2024-05-01T12:00:00"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","created":"2024-05-01T12:00:00Z"}}]}`,
	`{"entries":[{"id":"a","append":{"t":1,"ltz":"2024-05-01T12:00:00+18:00","date":"2024-02-29"}}]}`,
	`{"entries":[{"id":"a","append":{"t":1,"ltz":"2024-05-01T12:00:00-18:01"}}]}`,
	`{"entries":[{"id":"a","append":{"t":1,"ltz":"2024-05-01T12:00:00"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","amount":"9999999999.99","age":-2147483648,"level":32768}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","amount":"99999999999.99"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","amount":"-0.001"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":1,"user":"x","amount":"-0.000"}}]}`,
	`{"entries":[{"id":"a","upsert":{"id":-9223372036854775808,"user":"x","visits":"9223372036854775808"}}]}`,
	fuzzSeeds[0], fuzzSeeds[1], fuzzSeeds[2], fuzzSeeds[3], fuzzSeeds[4], fuzzSeeds[5], fuzzSeeds[6], fuzzSeeds[7],
	`{"entries":[{"id":"e","upsert":{"k":1,"s":"a","arr":null,"m":null,"r":null}}]}`,
	`{"entries":[{"id":"e","upsert":{"k":1,"s":"a","r":{"a":1}}}]}`,
	``, `{}`, `[]`, `null`, `{"entries":null}`, `{"entries":[null]}`, `{"entries":[{"id":"a","upsert":{}}]}`,
}

// checkFastPath decodes body with and without the fast path, into Buffers
// in the same state, and fails on any difference.
func checkFastPath(t *testing.T, c *Codec, body []byte, lim Limits) {
	t.Helper()
	want, wantIDs, wantErr := c.decodeWriteTo(nil, body, lim, false)
	got, gotIDs, gotErr := c.decodeWriteTo(nil, body, lim, true)
	if d := writeDiff(want, wantIDs, wantErr, got, gotIDs, gotErr); d != "" {
		t.Fatalf("fresh Buffer, body %q:\n%s", body, d)
	}

	// A dirty, reset Buffer; then the same Buffer still holding the rows of
	// an earlier batch, which must survive a fast-path attempt that gives up.
	warm := []byte(`{"entries":[{"id":"p","` + firstOp(c) + `":{}},{"id":"q","` + firstOp(c) + `":{}}]}`)
	var bufs [2]Buffer
	var prev [2]domain.WriteBatch
	var res [2]struct {
		b   domain.WriteBatch
		ids []string
		err error
	}
	for i, fast := range []bool{false, true} {
		buf := &bufs[i]
		_, _, _ = c.decodeWriteTo(buf, body, lim, false)
		_, _, _ = c.decodeWriteTo(buf, warm, lim, false)
		buf.Reset()
		r := &res[i]
		r.b, r.ids, r.err = c.decodeWriteTo(buf, body, lim, fast)
	}
	if d := writeDiff(res[0].b, res[0].ids, res[0].err, res[1].b, res[1].ids, res[1].err); d != "" {
		t.Fatalf("reused Buffer, body %q:\n%s", body, d)
	}
	for i, fast := range []bool{false, true} {
		buf := &bufs[i]
		buf.Reset()
		prev[i], _, _ = c.decodeWriteTo(buf, warm, Limits{}, fast)
		r := &res[i]
		r.b, r.ids, r.err = c.decodeWriteTo(buf, body, lim, fast)
	}
	if d := writeDiff(res[0].b, res[0].ids, res[0].err, res[1].b, res[1].ids, res[1].err); d != "" {
		t.Fatalf("used Buffer, body %q:\n%s", body, d)
	}
	if d := writeDiff(prev[0], nil, nil, prev[1], nil, nil); d != "" {
		t.Fatalf("earlier batch changed by decoding %q:\n%s", body, d)
	}
	if want, _, _ := c.decodeWriteTo(nil, warm, Limits{}, false); len(want.Entries) != len(prev[1].Entries) {
		t.Fatalf("earlier batch lost")
	}
}

// firstOp is an operation the codec's table accepts.
func firstOp(c *Codec) string {
	if c.IsPrimaryKeyTable() {
		return "upsert"
	}
	return "append"
}

// writeDiff describes how two decode results differ, "" when they are the same.
func writeDiff(a domain.WriteBatch, aIDs []string, aErr error, b domain.WriteBatch, bIDs []string, bErr error) string {
	if (aErr == nil) != (bErr == nil) {
		return fmt.Sprintf("error %v vs %v", aErr, bErr)
	}
	if aErr != nil {
		ae, be := domain.AsError(aErr), domain.AsError(bErr)
		if ae == nil || be == nil || ae.Kind != be.Kind || ae.Message != be.Message {
			return fmt.Sprintf("error %#v vs %#v", aErr, bErr)
		}
		return ""
	}
	if fmt.Sprint(a.PartialUpdateColumns) != fmt.Sprint(b.PartialUpdateColumns) || (a.PartialUpdateColumns == nil) != (b.PartialUpdateColumns == nil) {
		return fmt.Sprintf("partial columns %v vs %v", a.PartialUpdateColumns, b.PartialUpdateColumns)
	}
	if strings.Join(aIDs, "\x00") != strings.Join(bIDs, "\x00") || len(aIDs) != len(bIDs) {
		return fmt.Sprintf("ids %q vs %q", aIDs, bIDs)
	}
	if len(a.Entries) != len(b.Entries) {
		return fmt.Sprintf("%d vs %d entries", len(a.Entries), len(b.Entries))
	}
	for i := range a.Entries {
		ea, eb := &a.Entries[i], &b.Entries[i]
		if ea.Op != eb.Op || len(ea.Row) != len(eb.Row) || cap(ea.Row) != cap(eb.Row) {
			return fmt.Sprintf("entry %d: op %v/%v, %d/%d columns", i, ea.Op, eb.Op, len(ea.Row), len(eb.Row))
		}
		for j := range ea.Row {
			if !datumIdentical(&ea.Row[j], &eb.Row[j]) {
				return fmt.Sprintf("entry %d column %d: %+v vs %+v", i, j, ea.Row[j], eb.Row[j])
			}
		}
	}
	return ""
}

// datumIdentical is datumEqual that also tells nil from empty.
func datumIdentical(a, b *domain.Datum) bool {
	if a.Null != b.Null || a.I64 != b.I64 || a.Nanos != b.Nanos || !bytes.Equal(a.Bytes, b.Bytes) ||
		(a.Bytes == nil) != (b.Bytes == nil) || (a.Elems == nil) != (b.Elems == nil) || len(a.Elems) != len(b.Elems) ||
		fmt.Sprint(a.F64) != fmt.Sprint(b.F64) || !datumEqual(a, b) {
		return false
	}
	for i := range a.Elems {
		if !datumIdentical(&a.Elems[i], &b.Elems[i]) {
			return false
		}
	}
	return true
}

func TestFastPathEquivalence(t *testing.T) {
	t.Parallel()
	codecs := fastCodecs(t)
	rng := rand.New(rand.NewPCG(1, 2))
	mutations := 40
	if testing.Short() {
		mutations = 5
	}
	for _, body := range fastBodies {
		for _, c := range codecs {
			for _, lim := range []Limits{{}, {MaxEntries: 1}, {MaxDepth: 1}} {
				checkFastPath(t, c, []byte(body), lim)
			}
			// Mutations: truncations, random byte changes, insertions and
			// deletions (FuzzFastPath goes further).
			for n := 0; n < len(body); n += 1 + n/16 {
				checkFastPath(t, c, []byte(body[:n]), Limits{})
			}
			for range mutations {
				checkFastPath(t, c, mutate(rng, []byte(body)), Limits{})
			}
		}
	}
}

// mutate changes b a little.
func mutate(rng *rand.Rand, b []byte) []byte {
	b = bytes.Clone(b)
	const interesting = "\"\\{}[],: \t\n0159-+.eEnultrfa\x00\x1f\x7f\x80\xc3\xa9\xff"
	for range 1 + rng.IntN(3) {
		if len(b) == 0 {
			return append(b, interesting[rng.IntN(len(interesting))])
		}
		i := rng.IntN(len(b))
		c := interesting[rng.IntN(len(interesting))]
		switch rng.IntN(3) {
		case 0:
			b[i] = c
		case 1:
			b = append(b[:i], append([]byte{c}, b[i:]...)...)
		default:
			b = append(b[:i], b[i+1:]...)
		}
	}
	return b
}

// TestFastPathTaken guards the benchmark's premise: the common body shapes
// are decoded by the fast path.
func TestFastPathTaken(t *testing.T) {
	t.Parallel()
	codecs := fastCodecs(t)
	for _, tc := range []struct {
		c    *Codec
		body string
	}{
		{codecs[1], fastBodies[0]},
		{codecs[1], fastBodies[1]},
		{codecs[1], fastBodies[4]},
		{codecs[2], `{"entries":[{"id":"a","append":{"b":false,"t":"127","f":-0,"d":-1.5E-3,"big":0,"date":"+12345-01-01","time":"00:00:00","ltz":1700000000000}}]}`},
		{codecs[2], `{"entries":[{"id":"a","append":{"t":1,"\u00e9\"\\\u003cx>":"v","arr":null}}]}`},
		{codecs[3], `{"entries":[{"id":"a","upsert":{"k":5,"v":"x"}}]}`},
		{codecs[1], string(benchBody(100))},
	} {
		st := getState(tc.c, nil, []byte(tc.body), Limits{})
		_, _, ok := st.decodeWriteFast([]byte(tc.body))
		putState(st)
		if !ok {
			t.Errorf("fast path not taken for %s", tc.body)
		}
	}
}

// FuzzFastPath compares the fast path with the general decoder.
func FuzzFastPath(f *testing.F) {
	for _, s := range fastBodies {
		f.Add([]byte(s), uint8(0))
	}
	f.Add(benchBody(3), uint8(1))
	codecs := fastCodecs(f)
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		lim := Limits{MaxEntries: 16, MaxDepth: 4}
		checkFastPath(t, codecs[int(which)%len(codecs)], body, lim)
	})
}

// TestFastPathRollback: a fast-path attempt that gives up late leaves the
// Buffer as it was: the slab hands out zeroed Datums again, the arena and
// the entries array start where they did, ids are forgotten.
func TestFastPathRollback(t *testing.T) {
	t.Parallel()
	c := fastCodecs(t)[1]
	body := benchBody(50)
	body = append(body[:len(body)-1], `,"partial_update_columns":null}`...)
	for _, reset := range []bool{false, true} {
		var buf Buffer
		if reset {
			if _, _, err := c.DecodeWriteTo(&buf, benchBody(20), Limits{}); err != nil {
				t.Fatal(err)
			}
			buf.Reset()
		}
		st := getState(c, &buf, body, Limits{})
		m := st.markBuffer()
		if _, _, ok := st.decodeWriteFast(body); ok {
			t.Fatal("fast path took a body with partial_update_columns")
		}
		if st.slab.ci != m.slabCI || st.slab.off != m.slabOff || st.arena.ci != m.arenaCI ||
			len(st.arena.buf) != len(m.arenaBuf) || buf.used || len(st.idEnds) != 0 || st.ids.n != 0 {
			t.Fatalf("state not rolled back (reset %v)", reset)
		}
		if a := st.arena; len(a.chunks) > 0 && (cap(a.buf) == 0 || &a.buf[:1][0] != &a.chunks[a.ci][:1][0]) {
			t.Fatalf("arena not back in its chunk %d (reset %v)", a.ci, reset)
		}
		for range 50 {
			for _, d := range st.slab.alloc(len(c.cols)) {
				if !datumIdentical(&d, &domain.Datum{}) {
					t.Fatalf("slab hands out a used Datum after rollback (reset %v): %+v", reset, d)
				}
			}
		}
		putState(st)
	}
}

// TestPlainEnd compares the word-at-a-time scan with the byte table.
func TestPlainEnd(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 40)
	for range 200000 {
		for i := range b {
			switch rng.IntN(4) {
			case 0:
				b[i] = byte(rng.IntN(256))
			case 1:
				b[i] = "\"\\\x1f\x20\x21\x7f\x80\x00\x5b\x5d\x23"[rng.IntN(11)]
			default:
				b[i] = byte(0x20 + rng.IntN(0x60))
			}
		}
		n := rng.IntN(len(b) + 1)
		start := rng.IntN(n + 1)
		want := start
		for want < n && strPlain[b[want]] {
			want++
		}
		if got := plainEnd(b[:n], start); got != want {
			t.Fatalf("plainEnd(%q, %d) = %d, want %d", b[:n], start, got, want)
		}
	}
}

// TestDecimalPlain: wherever the fast DECIMAL parser decides, the general
// one gives the same value.
func TestDecimalPlain(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	st := &state{}
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return b.String()
	}
	lexemes := []string{"0", "-0", "0.0", "-0.000", "1", "1.", ".5", "01", "00.5", "1.50", "1.05", "-1.5", "1e2",
		"999999999999999999", "9999999999999999.99", "99999999999999999.9", "1000000000000000000", "-", "--1", "1.2.3", "1a"}
	for range 200000 {
		var lex string
		switch rng.IntN(4) {
		case 0:
			lex = digits(1 + rng.IntN(20))
		case 1:
			lex = digits(1+rng.IntN(12)) + "." + digits(1+rng.IntN(12))
		case 2:
			lex = fmt.Sprint(rng.IntN(10)) + "." + digits(rng.IntN(20)) + strings.Repeat("0", rng.IntN(5))
		default:
			lex = lexemes[rng.IntN(len(lexemes))]
		}
		if rng.IntN(3) == 0 {
			lex = "-" + lex
		}
		p := 1 + rng.IntN(18)
		s := rng.IntN(p + 1)
		v, ok := decimalPlain([]byte(lex), s, p)
		if !ok {
			continue
		}
		typ := &typ{kind: kDecimal, precision: p, scale: s, name: "DECIMAL"}
		var d domain.Datum
		if err := st.decimalExact(&d, typ, []byte(lex), []byte(lex)); err != nil || d.I64 != v {
			t.Fatalf("DECIMAL(%d,%d) %s: fast %d, general %d (%v)", p, s, lex, v, d.I64, err)
		}
	}
}

// TestParseTimestampCommon: wherever the fast timestamp parser decides, the
// general one gives the same instant.
func TestParseTimestampCommon(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	decided := 0
	for range 300000 {
		ms := rng.Int64N(400_000_000_000_000) - 62_000_000_000_000 // about years 0 to 10000
		tm := time.UnixMilli(ms).UTC()
		layouts := []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04:05.000", "2006-01-02T15:04:05.999999999",
			"2006-01-02T15:04:05.000000Z07:00", "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05.9Z"}
		s := tm.Add(time.Duration(rng.IntN(1_000_000))).Format(layouts[rng.IntN(len(layouts))])
		if rng.IntN(4) == 0 {
			s += []string{"+05:30", "-18:00", "+18:01", "-00:60", "Z", "z", "+5:30", ".5", "0"}[rng.IntN(9)]
		}
		b := []byte(s)
		if rng.IntN(3) == 0 {
			b = mutate(rng, b)
		}
		ltz, p := rng.IntN(2) == 0, rng.IntN(10)
		if rng.IntN(10) == 0 {
			b = []byte([]string{"2023-02-29T00:00:00", "2024-02-30 00:00:00", "2024-04-31T00:00:00", "1900-02-29T00:00:00",
				"2000-02-29T00:00:00Z", "2024-00-10T00:00:00", "2024-13-10T00:00:00", "2024-01-00T00:00:00", "0000-02-29T00:00:00",
				"2024-01-01T23:60:00", "2024-01-01T23:00:60", "2024-01-01T24:00:00", "2024-01-01T00:00:00.", "2024-01-01T00:00:00.1234567890",
				"2024-01-01T00:00:00+18:00", "2024-01-01T00:00:00-18:00", "2024-01-01T00:00:00+17:59"}[rng.IntN(17)])
		}
		gotMs, gotNanos, ok := parseTimestampCommon(b, ltz, p)
		if !ok {
			continue
		}
		decided++
		wantMs, wantNanos, msg := parseTimestampGeneral(b, ltz, p)
		if msg != "" || gotMs != wantMs || gotNanos != wantNanos {
			t.Fatalf("%q ltz=%v p=%d: fast %d+%d, general %d+%d %q", b, ltz, p, gotMs, gotNanos, wantMs, wantNanos, msg)
		}
	}
	if decided < 10000 {
		t.Fatalf("fast path decided only %d times", decided)
	}
}

// base64Values maps the standard base64 alphabet (RFC 4648 §4) to 6-bit
// values; every other byte maps to 0xff (for the reference below).
var base64Values = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range base64Alphabet {
		t[c] = byte(i)
	}
	return t
}()

func firstBad(q []byte) int {
	for i, c := range q {
		if base64Values[c] == 0xff {
			return i
		}
	}
	return 0
}

// decodeBase64Quads is the hand-written decoder decodeBase64 replaced (by
// the standard library's strict decoder): the reference for
// TestDecodeBase64Groups, offsets of refused input included.
func decodeBase64Quads(dst, src []byte) (n, bad int) {
	if len(src)%4 != 0 {
		for i, c := range src {
			if base64Values[c] == 0xff && c != '=' {
				return 0, i
			}
		}
		return 0, len(src) / 4 * 4
	}
	if len(src) == 0 {
		return 0, -1
	}
	last := len(src) - 4
	for i := 0; i < last; i += 4 {
		a, b, c, d := base64Values[src[i]], base64Values[src[i+1]], base64Values[src[i+2]], base64Values[src[i+3]]
		if (a|b|c|d)&0xc0 != 0 {
			return 0, i + firstBad(src[i:i+4])
		}
		dst[n], dst[n+1], dst[n+2] = a<<2|b>>4, b<<4|c>>2, c<<6|d
		n += 3
	}
	q := src[last:]
	a, b := base64Values[q[0]], base64Values[q[1]]
	if (a|b)&0xc0 != 0 {
		return 0, last + firstBad(q[:2])
	}
	switch {
	case q[2] == '=' && q[3] == '=':
		if b&0x0f != 0 {
			return 0, last + 1
		}
		dst[n] = a<<2 | b>>4
		return n + 1, -1
	case q[3] == '=':
		c := base64Values[q[2]]
		if c&0xc0 != 0 {
			return 0, last + 2
		}
		if c&0x03 != 0 {
			return 0, last + 2
		}
		dst[n], dst[n+1] = a<<2|b>>4, b<<4|c>>2
		return n + 2, -1
	}
	c, d := base64Values[q[2]], base64Values[q[3]]
	if (c|d)&0xc0 != 0 {
		return 0, last + 2 + firstBad(q[2:])
	}
	dst[n], dst[n+1], dst[n+2] = a<<2|b>>4, b<<4|c>>2, c<<6|d
	return n + 3, -1
}

func TestDecodeBase64Groups(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for range 100_000 {
		src := make([]byte, 4*rng.IntN(30))
		for i := range src {
			src[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if len(src) > 0 {
			switch rng.IntN(4) {
			case 0:
				src[len(src)-1] = '='
			case 1:
				src[len(src)-1], src[len(src)-2] = '=', '='
			}
			for range rng.IntN(3) {
				src[rng.IntN(len(src))] = "=-_ .\n\x00\xff"[rng.IntN(8)]
			}
		}
		checkBase64AgainstReference(t, src)
	}
}

// checkBase64AgainstReference fails t unless decodeBase64 and the reference
// decodeBase64Quads agree on src: acceptance, bytes and offset.
func checkBase64AgainstReference(t *testing.T, src []byte) {
	t.Helper()
	got := make([]byte, len(src)/4*3)
	want := make([]byte, len(src)/4*3)
	gn, gbad := decodeBase64(got, src)
	wn, wbad := decodeBase64Quads(want, src)
	if gn != wn || gbad != wbad || (gbad < 0 && !bytes.Equal(got[:gn], want[:wn])) {
		t.Fatalf("%q: got (%d, %d) %x, want (%d, %d) %x", src, gn, gbad, got[:gn], wn, wbad, want[:wn])
	}
}

// FuzzDecodeBase64 holds decodeBase64 (the standard library's strict
// decoder plus the line-break rule) to the hand-written decoder it
// replaced: the same acceptance, bytes and refused-character offset.
func FuzzDecodeBase64(f *testing.F) {
	for _, s := range []string{"", "QQ==", "QUI=", "QUJD", "QR==", "QUJ=", "QUJD\nRA==", "QUJDRA=\n", "Q===", "-_==", "QUJDR"} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkBase64AgainstReference)
}

// TestFillMissingWide compares fillMissing, which walks the bits of the
// absent columns, with a plain walk over every column, on tables wider than
// a bitset word.
func TestFillMissingWide(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	for _, width := range []int{1, 63, 64, 65, 128, 130} {
		cols := make([]domain.Column, width)
		var pk []string
		for i := range cols {
			ty := typ_(domain.TypeInteger)
			if rng.IntN(8) == 0 {
				ty = notNull(ty)
			}
			cols[i] = col(fmt.Sprintf("c%d", i), ty)
			if rng.IntN(16) == 0 {
				pk = append(pk, cols[i].Name)
			}
		}
		c := mustCodec(t, TableSpec{Columns: cols, PrimaryKey: pk})
		for range 2000 {
			st := getState(c, nil, nil, Limits{})
			for i := range width {
				if rng.IntN(8) != 0 {
					st.present[i>>6] |= 1 << (i & 63)
				}
			}
			op := []domain.WriteOp{domain.OpUpsert, domain.OpDelete, domain.OpAppend}[rng.IntN(3)]
			got := make([]domain.Datum, width)
			gotErr := st.fillMissing(op, got)
			want := make([]domain.Datum, width)
			var wantErr error
			for ci := range c.cols {
				if st.present[ci>>6]&(1<<(ci&63)) != 0 {
					continue
				}
				if wantErr = st.fillMissingColumn(op, want, ci); wantErr != nil {
					break
				}
			}
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("width %d: %v / %v", width, gotErr, wantErr)
			}
			putState(st)
		}
	}
}
