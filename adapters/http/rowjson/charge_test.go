package rowjson

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Issue 21: a Buffer's ChargeFunc is told of every chunk before it is put
// to use, so that the gateway's memory budget bounds decoded rows before
// they exist.

func chargeCodec(t *testing.T) *Codec {
	return mustCodec(t, TableSpec{
		Columns: []domain.Column{
			col("k", notNull(typ_(domain.TypeInteger))),
			col("s", typ_(domain.TypeString)),
			col("a", arrayT(typ_(domain.TypeInteger))),
		},
		PrimaryKey: []string{"k"},
	})
}

// chargeBody is a write body of n entries with strings of width bytes.
func chargeBody(n, width int) []byte {
	var b strings.Builder
	b.WriteString(`{"entries":[`)
	for k := range n {
		if k > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":"e%d","upsert":{"k":%d,"s":"%s","a":[1,2,3]}}`, k, k, strings.Repeat("x", width))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// meter is a ChargeFunc that records what it was told and refuses once the
// total would pass limit (0: never).
type meter struct {
	datums, bytes, calls int
	limit                int
}

var errMeterFull = errors.New("meter full")

func (m *meter) charge(datums, bytes int) error {
	if m.limit > 0 && m.datums+m.bytes+datums+bytes > m.limit {
		return errMeterFull
	}
	m.datums += datums
	m.bytes += bytes
	m.calls++
	return nil
}

func TestBufferChargesEveryChunkOfADecode(t *testing.T) {
	t.Parallel()
	c := chargeCodec(t)
	tests := []struct {
		name     string
		entries  int
		width    int
		validate func(t *testing.T, m *meter, buf *Buffer)
	}{
		{name: "small", entries: 3, width: 4},
		{name: "many rows", entries: 5000, width: 16},
		{name: "wide strings", entries: 50, width: 20 << 10}, // each string is its own allocation
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf Buffer
			m := &meter{}
			require.NoError(t, buf.SetCharge(m.charge))
			batch, _, err := c.DecodeWriteTo(&buf, chargeBody(tc.entries, tc.width), Limits{})
			require.NoError(t, err)
			require.Len(t, batch.Entries, tc.entries)
			// Every chunk the buffer keeps was charged, and the values'
			// own allocations (wide strings) on top.
			assert.GreaterOrEqual(t, m.datums+m.bytes, buf.Retained())
			assert.GreaterOrEqual(t, m.bytes, tc.entries*tc.width, "the strings' bytes are charged")
			assert.GreaterOrEqual(t, m.datums, tc.entries*6*datumSize, "the rows' Datums are charged")
		})
	}
}

func TestBufferChargeRefusalEndsTheDecode(t *testing.T) {
	t.Parallel()
	c := chargeCodec(t)
	body := chargeBody(4000, 32)
	for _, report := range []bool{false, true} {
		t.Run(fmt.Sprintf("report=%v", report), func(t *testing.T) {
			var buf Buffer
			m := &meter{limit: 64 << 10}
			require.NoError(t, buf.SetCharge(m.charge))
			var batch domain.WriteBatch
			var ids []string
			var err error
			if report {
				batch, ids, _, err = c.DecodeWriteReport(&buf, body, Limits{})
			} else {
				batch, ids, err = c.DecodeWriteTo(&buf, body, Limits{})
			}
			require.ErrorIs(t, err, errMeterFull, "the ChargeFunc's error, as it is")
			assert.Empty(t, batch.Entries)
			assert.Nil(t, ids)
			assert.LessOrEqual(t, buf.Retained(), 64<<10, "nothing allocated past the refusal")

			// The buffer stays usable once reset.
			buf.Reset()
			batch, _, err = c.DecodeWriteTo(&buf, chargeBody(10, 4), Limits{})
			require.NoError(t, err)
			assert.Len(t, batch.Entries, 10)
		})
	}
}

func TestBufferChargesRetainedChunksAgainAfterReset(t *testing.T) {
	t.Parallel()
	c := chargeCodec(t)
	var buf Buffer
	_, _, err := c.DecodeWriteTo(&buf, chargeBody(3000, 16), Limits{})
	require.NoError(t, err)
	buf.Reset()
	retained := buf.Retained()
	require.Positive(t, retained)

	// A reused buffer allocates nothing new, yet every chunk the decode
	// puts to use is charged: memory kept by a pool is memory the request
	// holds.
	// 1,200 rows of six Datums fit in the retained Datum chunks and use
	// them all.
	m := &meter{}
	require.NoError(t, buf.SetCharge(m.charge))
	_, _, err = c.DecodeWriteTo(&buf, chargeBody(1200, 16), Limits{})
	require.NoError(t, err)
	assert.Equal(t, retained, buf.Retained(), "no new chunks")
	assert.Equal(t, buf.slab.retained*datumSize, m.datums, "each retained Datum chunk charged once")
	assert.Positive(t, m.bytes)
	assert.LessOrEqual(t, m.bytes, buf.arena.retained, "retained byte chunks charged at most once")

	// Reset drops the ChargeFunc: a pooled buffer never charges a finished
	// request.
	buf.Reset()
	calls := m.calls
	_, _, err = c.DecodeWriteTo(&buf, chargeBody(3000, 16), Limits{})
	require.NoError(t, err)
	assert.Equal(t, calls, m.calls)
}

func TestBufferSetChargeRefusesTheFirstChunk(t *testing.T) {
	t.Parallel()
	c := chargeCodec(t)
	var buf Buffer
	_, _, err := c.DecodeWriteTo(&buf, chargeBody(100, 16), Limits{})
	require.NoError(t, err)
	buf.Reset()
	m := &meter{limit: 1}
	assert.ErrorIs(t, buf.SetCharge(m.charge), errMeterFull)
}

// Issue 21: Reset drops every reference the Buffer's entries array holds,
// not only those of its current length (a decode leaves it at length 0), so
// that a pooled Buffer does not keep the chunks Reset trimmed alive through
// the last batch's rows.
func TestBufferResetDropsTheRowsOfTheLastBatch(t *testing.T) {
	t.Parallel()
	c := chargeCodec(t)
	tests := []struct {
		name    string
		entries int
	}{
		{name: "small batch", entries: 10},
		{name: "batch larger than the retained chunks", entries: 10_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf Buffer
			batch, _, err := c.DecodeWriteTo(&buf, chargeBody(tc.entries, 8), Limits{})
			require.NoError(t, err)
			require.Len(t, batch.Entries, tc.entries)
			buf.Reset()
			for i, e := range buf.entries[:cap(buf.entries)] {
				require.Nil(t, e.Row, "entry slot %d still references a row", i)
			}
			assert.LessOrEqual(t, buf.Retained(), 2*maxRetained)
		})
	}
}

// Issue 21: the Datum chunks a Buffer keeps after Reset point at nothing
// but the Buffer's own kept chunks: a pooled Buffer kept every string of its
// last batch alive (and the byte chunks Reset had dropped) until its next
// decode reused those Datums. Values allocated apart (wide strings) or in
// chunks Reset drops are let go at once.
func TestBufferResetKeepsNoValueOutsideItsChunks(t *testing.T) {
	t.Parallel()
	c := chargeCodec(t)
	tests := []struct {
		name    string
		entries int
		width   int
		cleared bool // every kept Datum is zero after Reset
	}{
		{name: "short strings", entries: 1000, width: 16},
		{name: "byte chunks past the kept ones", entries: 10_000, width: 200, cleared: true},
		{name: "wide strings, each its own allocation", entries: 40, width: 64 << 10, cleared: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf Buffer
			_, _, err := c.DecodeWriteTo(&buf, chargeBody(tc.entries, tc.width), Limits{})
			require.NoError(t, err)
			buf.Reset()
			require.NotEmpty(t, buf.slab.chunks)
			for i, chunk := range buf.slab.chunks {
				for j := range chunk {
					d := &chunk[j]
					if tc.cleared {
						require.Nil(t, d.Bytes, "chunk %d, Datum %d still points at a value", i, j)
						require.Nil(t, d.Elems, "chunk %d, Datum %d still points at elements", i, j)
						continue
					}
					require.True(t, inArena(&buf.arena, d.Bytes), "chunk %d, Datum %d points at a value outside the kept byte chunks", i, j)
					require.True(t, inSlab(&buf.slab, d.Elems), "chunk %d, Datum %d points at elements outside the kept chunks", i, j)
				}
			}
		})
	}
}

// inArena reports whether b is empty or lies in one of a's chunks.
func inArena(a *arena, b []byte) bool {
	if cap(b) == 0 {
		return true
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for _, c := range a.chunks {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
		if p >= lo && p < lo+uintptr(cap(c)) {
			return true
		}
	}
	return false
}

// inSlab reports whether e is empty or lies in one of s's chunks.
func inSlab(s *slab, e []domain.Datum) bool {
	if cap(e) == 0 {
		return true
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(e)))
	for _, c := range s.chunks {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
		if p >= lo && p < lo+uintptr(len(c))*datumSize {
			return true
		}
	}
	return false
}

// Issue 22: a Reset after rows that stayed in the kept chunks leaves their
// Datums to be cleared as the next decode hands them out (clearing up to
// 1 MiB per Reset, cache-cold when the Buffer is reused, cost a tenth of the
// gateway's CPU on 500-row writes), and the next decode still sees zeroed
// Datums: a row that leaves columns out gets nulls, not the last batch's
// values, also after a decode that fell back from the fast path (a missing
// column's Datum is only marked null: fillMissingColumn).
func TestBufferReusedAfterResetHandsOutZeroedDatums(t *testing.T) {
	t.Parallel()
	c := chargeCodec(t)
	var buf Buffer
	_, _, err := c.DecodeWriteTo(&buf, chargeBody(500, 16), Limits{})
	require.NoError(t, err)
	buf.Reset()
	assert.Positive(t, buf.slab.dirty, "the kept chunks are cleared as they are handed out")
	assert.NotNil(t, buf.slab.chunks[0][1].Bytes, "Reset did not clear the kept chunks")

	bodies := []struct {
		name string
		body string
	}{
		{name: "fast path", body: keyOnlyBody(500, `{"k":2}`)},
		// The last entry's ARRAY sends the decode back to the general
		// decoder after the fast path filled 499 rows.
		{name: "after a fallback", body: keyOnlyBody(500, `{"k":2,"a":[]}`)},
	}
	for _, b := range bodies {
		batch, _, err := c.DecodeWriteTo(&buf, []byte(b.body), Limits{})
		require.NoError(t, err, b.name)
		require.Len(t, batch.Entries, 500)
		for i, e := range batch.Entries[:499] { // the last one may set a
			for j, d := range e.Row[1:] {
				require.Equal(t, domain.Datum{Null: true}, d,
					"%s: entry %d, column %d holds a value of the last batch", b.name, i, j+1)
			}
		}
		buf.Reset()
	}
}

// keyOnlyBody is a write body of n entries upserting only k, the last one
// last.
func keyOnlyBody(n int, last string) string {
	var b strings.Builder
	b.WriteString(`{"entries":[`)
	for k := range n - 1 {
		fmt.Fprintf(&b, `{"id":"e%d","upsert":{"k":%d}},`, k, k)
	}
	fmt.Fprintf(&b, `{"id":"last","upsert":%s}]}`, last)
	return b.String()
}
