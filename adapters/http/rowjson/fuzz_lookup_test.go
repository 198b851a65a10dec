package rowjson

import "testing"

var lookupSeeds = []string{
	`{"keys":[{"k":1,"s":"a"},{"k":"2","s":"b"}]}`,
	`{"keys":[{"k":1,"s":"a","k":2}]}`,
	`{"keys":[{"s":"a"}]}`,
	`{"keys":[]}`,
	`{"prefix_columns":["k"],"prefixes":[{"k":1},{"k":-1}]}`,
	`{"prefix_columns":["k","s"],"prefixes":[{"k":1,"s":"x"}]}`,
	`{"prefix_columns":["s"],"prefixes":[{"s":null}]}`,
	`[{"k":1}]`,
}

// FuzzDecodeKeys drives the lookup and prefix-lookup decoders (the keys of
// the lookup routes): no panic, and an accepted key has one value per key
// column.
func FuzzDecodeKeys(f *testing.F) {
	for _, s := range lookupSeeds {
		f.Add([]byte(s))
	}
	c := fuzzCodec(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		lim := Limits{MaxEntries: 64, MaxDepth: 4}
		if keys, err := c.DecodeKeys(body, lim); err == nil {
			for i, k := range keys {
				if len(k) != len(c.pk) {
					t.Fatalf("key %d has %d values for %d key columns", i, len(k), len(c.pk))
				}
			}
		}
		if cols, prefixes, err := c.DecodePrefixes(body, lim); err == nil {
			for i, p := range prefixes {
				if len(p) != len(cols) {
					t.Fatalf("prefix %d has %d values for %d columns", i, len(p), len(cols))
				}
			}
		}
	})
}
