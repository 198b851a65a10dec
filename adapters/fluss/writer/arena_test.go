package writer

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestEstimateArena: the sampled arena estimate of a large request stays
// close to the estimate from every row (16 bytes per value plus every
// variable byte), above it by at most its margin for uniform rows and within
// a bounded error for uneven ones; small requests read every row. The
// encoded size is logged next to it.
func TestEstimateArena(t *testing.T) {
	fake := metatest.New(1)
	fake.AddTable(benchTable())
	cache := meta.New(fake, meta.Options{})
	tb, err := cache.Table(context.Background(), domain.TablePath{Database: "db", Table: "bench"})
	require.NoError(t, err)
	c, err := newCodec(tb, tb.Info.SchemaID, tb.Info.Descriptor.Schema, nil)
	require.NoError(t, err)
	exact := func(wb *domain.WriteBatch) int {
		n := len(wb.Entries) * 16 * len(wb.Entries[0].Row)
		for i := range wb.Entries {
			n += variableBytes(wb.Entries[i].Row)
		}
		return n
	}
	uneven := func(i int64) []domain.Datum {
		r := benchRow(i)
		r[1].Bytes = []byte(strings.Repeat("x", int(i%7)*40)) // 0..240 bytes, cycling
		return r
	}
	tests := []struct {
		name     string
		rows     int
		row      func(int64) []domain.Datum
		min, max float64 // bounds of estimate / exact
	}{
		{"one row", 1, benchRow, 1, 1},
		{"small, every row read", arenaSample, uneven, 1, 1},
		{"500 uniform rows, sampled", 500, benchRow, 1, 1.125},
		{"500 uneven rows, sampled", 500, uneven, 0.9, 1.25},
		{"10,000 uneven rows, sampled", 10_000, uneven, 0.9, 1.25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wb := &domain.WriteBatch{Entries: make([]domain.WriteEntry, tc.rows)}
			for i := range wb.Entries {
				wb.Entries[i] = domain.WriteEntry{Op: domain.OpUpsert, Row: tc.row(int64(i))}
			}
			est, _ := estimateArena(wb, 0)
			var arena []byte
			for i := range wb.Entries {
				arena, _, _, err = c.encode(arena, &wb.Entries[i], nil)
				require.NoError(t, err)
			}
			ref := exact(wb)
			assert.GreaterOrEqual(t, float64(est), tc.min*float64(ref), "estimate %d, from every row %d", est, ref)
			assert.LessOrEqual(t, float64(est), tc.max*float64(ref), "estimate %d, from every row %d", est, ref)
			t.Logf("estimate %d bytes, from every row %d, encoded %d", est, ref, len(arena))
		})
	}
}

// BenchmarkEstimateArena measures the arena estimate of a 500-row request
// (the benchmark's request size), per row.
func BenchmarkEstimateArena(b *testing.B) {
	wb := &domain.WriteBatch{Entries: make([]domain.WriteEntry, 500)}
	for i := range wb.Entries {
		wb.Entries[i] = domain.WriteEntry{Op: domain.OpUpsert, Row: benchRow(int64(i))}
	}
	n := 0
	for b.Loop() {
		est, _ := estimateArena(wb, 0)
		n += est
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(wb.Entries)), "ns/row")
	if n == 0 {
		b.Fatal("no estimate")
	}
}

// TestEstimateArenaLearned: once a request of the table was encoded, the
// next request's arena is sized by the fixed part its rows took
// (codec.learnFixed) plus the counted variable bytes: at least what the rows
// encode to when they are like the last request's, within a quarter above
// it, and well under the 16-bytes-per-value bound; rows with longer strings
// than the last request's are still covered by their counted bytes.
func TestEstimateArenaLearned(t *testing.T) {
	fake := metatest.New(1)
	fake.AddTable(benchTable())
	cache := meta.New(fake, meta.Options{})
	tb, err := cache.Table(context.Background(), domain.TablePath{Database: "db", Table: "bench"})
	require.NoError(t, err)
	batch := func(rows int, row func(int64) []domain.Datum) *domain.WriteBatch {
		wb := &domain.WriteBatch{Entries: make([]domain.WriteEntry, rows)}
		for i := range wb.Entries {
			wb.Entries[i] = domain.WriteEntry{Op: domain.OpUpsert, Row: row(int64(i))}
		}
		return wb
	}
	wide := func(i int64) []domain.Datum {
		r := benchRow(i)
		r[1].Bytes = []byte(strings.Repeat("x", 200+int(i%5)))
		return r
	}
	tests := []struct {
		name        string
		first, next *domain.WriteBatch
		max         float64 // bound of estimate / encoded
	}{
		{"500 uniform rows after 500", batch(500, benchRow), batch(500, benchRow), 1.25},
		{"10 rows after 500", batch(500, benchRow), batch(10, benchRow), 1.25},
		{"wide strings after narrow", batch(500, benchRow), batch(500, wide), 1.25},
		{"narrow after wide strings", batch(500, wide), batch(500, benchRow), 1.25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newCodec(tb, tb.Info.SchemaID, tb.Info.Descriptor.Schema, nil)
			require.NoError(t, err)
			encode := func(wb *domain.WriteBatch) []byte {
				var arena []byte
				for i := range wb.Entries {
					arena, _, _, err = c.encode(arena, &wb.Entries[i], nil)
					require.NoError(t, err)
				}
				return arena
			}
			bound, _ := estimateArena(tc.next, 0)
			_, v := estimateArena(tc.first, 0)
			c.learnFixed(len(encode(tc.first)), v, len(tc.first.Entries), len(tc.first.Entries[0].Row))
			require.Positive(t, c.fixedPerRow.Load())
			est, _ := estimateArena(tc.next, int(c.fixedPerRow.Load()))
			enc := len(encode(tc.next))
			assert.GreaterOrEqual(t, est, enc, "estimate %d, encoded %d", est, enc)
			assert.LessOrEqual(t, float64(est), tc.max*float64(enc), "estimate %d, encoded %d", est, enc)
			assert.Less(t, est, bound, "estimate %d, the bound %d", est, bound)
			t.Logf("estimate %d bytes, encoded %d, bound %d", est, enc, bound)
		})
	}
}
