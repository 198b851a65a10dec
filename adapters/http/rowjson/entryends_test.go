package rowjson

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// joinLines joins lines into one entries array, as the NDJSON decoder does,
// and returns where each line ends in it.
func joinLines(lines ...string) ([]byte, []int) {
	var b strings.Builder
	b.WriteString(`{"entries":[`)
	ends := make([]int, 0, len(lines))
	for i, l := range lines {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l)
		ends = append(ends, b.Len())
	}
	b.WriteString("]}")
	return []byte(b.String()), ends
}

// TestEntryEnds: with Limits.EntryEnds an entry that does not end where its
// line ends (a line spilling into the next, a line holding two entries, a
// line closing the entries array) fails the decode with ErrEntryBounds, on
// the fast path and on the general decoder alike; aligned lines decode as
// without it, invalid entries included.
func TestEntryEnds(t *testing.T) {
	t.Parallel()
	const (
		a   = `{"id":"a","upsert":{"id":1,"region":"eu","age":1}}`
		b   = `{"id":"b","upsert":{"id":2,"region":"eu","age":2}}`
		bad = `{"id":"x","upsert":{"id":"no","region":"eu","age":3}}`
	)
	for _, tc := range []struct {
		name     string
		lines    []string
		ids      []string
		rejected int
		bounds   bool
	}{
		{name: "aligned", lines: []string{a, b}, ids: []string{"a", "b"}},
		{name: "aligned with an escaped string", lines: []string{a, `{"id":"c\u0041","upsert":{"id":3,"region":"e\"u","age":1}}`}, ids: []string{"a", "cA"}},
		{name: "aligned with an invalid entry", lines: []string{a, bad, b}, ids: []string{"a", "b"}, rejected: 1},
		{name: "a line spills into the next", lines: []string{`{"id":"a","upsert":{"id":1,"region":"`, `","age":1}}`}, bounds: true},
		{name: "a line holds two entries", lines: []string{a + "," + b, `{"id":"c","upsert":{"id":3,"region":"eu","age":1}}`}, bounds: true},
		{name: "spill and split keep the count", lines: []string{`{"id":"a","upsert":{"id":1,"region":"`, `","age":1}}`, b + `,{"id":"c","upsert":{"id":3,"region":"eu","age":1}}`}, bounds: true},
		{name: "the last line closes the array", lines: []string{a, b + `],"partial_update_columns":[`}, bounds: true},
		{name: "an invalid entry spills", lines: []string{`{"id":"x","upsert":{"id":"`, `","region":"eu","age":3}}`, b}, bounds: true},
	} {
		for _, fast := range []bool{true, false} {
			name := tc.name + map[bool]string{true: "/fast", false: "/general"}[fast]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				body, ends := joinLines(tc.lines...)
				_, ids, rejected, err := pkCodec(t).decodeWriteAll(nil, body, Limits{ReportInvalid: true, EntryEnds: ends}, fast)
				if tc.bounds {
					require.ErrorIs(t, err, ErrEntryBounds)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, tc.ids, ids)
				assert.Len(t, rejected, tc.rejected)
				// Without EntryEnds the same body decodes the same.
				_, ids2, rejected2, err := pkCodec(t).decodeWriteAll(nil, body, Limits{ReportInvalid: true}, fast)
				require.NoError(t, err)
				assert.Equal(t, ids, ids2)
				assert.Equal(t, rejected, rejected2)
			})
		}
	}
}
