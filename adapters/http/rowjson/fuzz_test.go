package rowjson

import (
	"sync"
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// fuzzCodec has every type, nested ones included: primary key (k, s).
func fuzzCodec(t testing.TB) *Codec {
	return mustCodec(t, TableSpec{Columns: fuzzColumns, PrimaryKey: []string{"k", "s"}})
}

var fuzzSeeds = []string{
	`{"entries":[{"id":"e1","upsert":{"k":1,"s":"a","b":true,"t":-1,"i":"7","f":1.5,"d":"NaN","dec":"12.5","big":-1.5e3,` +
		`"c":"日本","bin":"AQID","by":"aGk=","date":"2024-02-29","time":"12:00:00.5","ts":"2024-01-01T00:00:00.000001",` +
		`"ltz":"2024-01-01T00:00:00.123456789+05:30","arr":[1,2],"m":{"x":[1,null]},"mi":[{"key":1,"value":"v"}],` +
		`"r":{"a":1,"b":[{"x":"y"},null]}}}]}`,
	`{"partial_update_columns":["k","s","i"],"entries":[{"id":"p","upsert":{"k":1,"s":"a","i":null}},{"id":"q","delete":{"s":"b","k":"2"}}]}`,
	`{"entries":[{"upsert":{"k":1,"s":"a","arr":[1,null]},"id":"late"}]}`,
	`{"entries":[{"id":"a","upsert":{"k":1,"s":"a"}},{"id":"a","upsert":{"k":1,"s":"a"}}]}`,
	`{"entries":[{"id":"e","upsert":{"k":1,"s":"a","m":[{"key":"z","value":[]},{"key":"z","value":null}]}}]}`,
	`{"entries":[{"id":"e","upsert":{"k":1e0,"s":"\ud83d\ude00"}}]} `,
	`{"entries":[{"id":"e","append":{}}]}`,
	`[1,2,{"a":null}]`,
}

func FuzzDecodeWrite(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	c := fuzzCodec(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		lim := Limits{MaxEntries: 64, MaxDepth: 4}
		b, ids, err := c.DecodeWrite(body, lim)

		// Decoding into a reused (dirty) Buffer gives the same result.
		buf := fuzzBuffers.Get().(*Buffer)
		defer fuzzBuffers.Put(buf)
		buf.Reset()
		pb, pids, perr := c.DecodeWriteTo(buf, body, lim)
		if (err == nil) != (perr == nil) || (err != nil && err.Error() != perr.Error()) {
			t.Fatalf("fresh: %v, pooled: %v", err, perr)
		}
		if err == nil {
			if len(pb.Entries) != len(b.Entries) || len(pids) != len(ids) {
				t.Fatalf("pooled decode differs")
			}
			for i := range b.Entries {
				for j := range b.Entries[i].Row {
					if !datumEqual(&b.Entries[i].Row[j], &pb.Entries[i].Row[j]) || b.Entries[i].Op != pb.Entries[i].Op {
						t.Fatalf("entry %d column %d: fresh %+v, pooled %+v", i, j, b.Entries[i].Row[j], pb.Entries[i].Row[j])
					}
				}
			}
		}

		if err != nil {
			de := domain.AsError(err)
			if de == nil || de.Message == "" || (de.Kind != domain.KindInvalidArgument && de.Kind != domain.KindLimitExceeded) {
				t.Fatalf("unexpected error %#v", err)
			}
			return
		}
		if len(ids) != len(b.Entries) || len(ids) == 0 {
			t.Fatalf("%d ids for %d entries", len(ids), len(b.Entries))
		}
		seen := map[string]bool{}
		for i, e := range b.Entries {
			if ids[i] == "" || seen[ids[i]] {
				t.Fatalf("bad id %q", ids[i])
			}
			seen[ids[i]] = true
			if len(e.Row) != len(c.cols) {
				t.Fatalf("row width %d", len(e.Row))
			}
			if e.Op != domain.OpUpsert {
				continue
			}
			// Whatever was accepted re-encodes to a body that decodes to the
			// same row, and encodes to the same bytes again.
			cols := fuzzColumns
			enc := AppendRow(nil, cols, e.Row)
			b2, _, err := c.DecodeWrite([]byte(`{"entries":[{"id":"x","upsert":`+string(enc)+`}]}`), Limits{MaxDepth: 4})
			if err != nil {
				t.Fatalf("re-decode of %s: %v", enc, err)
			}
			for j := range e.Row {
				if !datumEqual(&e.Row[j], &b2.Entries[0].Row[j]) {
					t.Fatalf("column %s: %+v != %+v (%s)", cols[j].Name, e.Row[j], b2.Entries[0].Row[j], enc)
				}
			}
			if enc2 := AppendRow(nil, cols, b2.Entries[0].Row); string(enc2) != string(enc) {
				t.Fatalf("unstable encoding:\n%s\n%s", enc, enc2)
			}
		}
	})
}

var fuzzBuffers = sync.Pool{New: func() any { return new(Buffer) }}

// fuzzColumns are fuzzCodec's columns as domain values, for AppendRow.
var fuzzColumns = func() []domain.Column {
	intT, str := typ_(domain.TypeInteger), typ_(domain.TypeString)
	return []domain.Column{
		col("k", notNull(typ_(domain.TypeBigInt))),
		col("s", notNull(str)),
		col("b", typ_(domain.TypeBoolean)),
		col("t", typ_(domain.TypeTinyInt)),
		col("i", intT),
		col("f", typ_(domain.TypeFloat)),
		col("d", typ_(domain.TypeDouble)),
		col("dec", decimalT(10, 3)),
		col("big", decimalT(30, 5)),
		col("c", charT(4)),
		col("bin", binaryT(3)),
		col("by", typ_(domain.TypeBytes)),
		col("date", typ_(domain.TypeDate)),
		col("time", precT(domain.TypeTime, 3)),
		col("ts", precT(domain.TypeTimestampNTZ, 6)),
		col("ltz", precT(domain.TypeTimestampLTZ, 9)),
		col("arr", arrayT(notNull(intT))),
		col("m", mapT(notNull(str), arrayT(intT))),
		col("mi", mapT(notNull(intT), str)),
		col("r", rowT(fieldT("a", notNull(intT)), fieldT("b", arrayT(rowT(fieldT("x", str)))))),
	}
}()

func TestFuzzSeeds(t *testing.T) {
	t.Parallel()
	c := fuzzCodec(t)
	_, _, err := c.DecodeWrite([]byte(fuzzSeeds[0]), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.DecodeWrite([]byte(fuzzSeeds[1]), Limits{})
	if err != nil {
		t.Fatal(err)
	}
}
