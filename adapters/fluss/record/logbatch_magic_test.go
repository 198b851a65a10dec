package record

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// relayout turns a V0 batch into the given layout: the V0 fields moved to
// their offsets, a leader epoch and statistics bytes where the layout has
// them, the CRC recomputed (or left stale).
func relayout(t *testing.T, v0 []byte, l logLayout, stats []byte, staleCRC bool) []byte {
	t.Helper()
	le := binary.LittleEndian
	fields := v0[25:48] // schemaId .. recordCount
	records := v0[48:]
	out := make([]byte, l.header)
	copy(out, v0[:21]) // baseOffset, length (fixed below), magic, commitTimestamp
	out[12] = byte(l.magic)
	if l.epochOffset >= 0 {
		le.PutUint32(out[l.epochOffset:], 7)
	}
	copy(out[l.crcOffset+4:], fields)
	if l.stats >= 0 {
		le.PutUint32(out[l.stats:], uint32(len(stats)))
		out = append(out, stats...)
	}
	out = append(out, records...)
	le.PutUint32(out[8:], uint32(len(out)-LogOverhead))
	if !staleCRC {
		le.PutUint32(out[l.crcOffset:], CRC32C(out[l.crcOffset+4:]))
	}
	return out
}

func TestReadLogBatchMagics(t *testing.T) {
	v0, err := AppendLogBatch(nil, LogBatchParams{SchemaID: 3, Attributes: AttrAppendOnly, WriterID: 9, BatchSequence: 4, RecordCount: 2}, []byte("records!"))
	require.NoError(t, err)
	stats := []byte{1, 2, 3, 4, 5}
	tests := []struct {
		name     string
		batch    []byte
		noCRC    bool
		magic    int8
		epoch    int32
		wantFail bool
	}{
		{"V0", v0, false, 0, NoLeaderEpoch, false},
		{"0.9 V1 (leader epoch)", relayout(t, v0, layoutV1Epoch, nil, false), false, 1, 7, false},
		{"1.0 V1 (statistics)", relayout(t, v0, layoutV1Stats, stats, false), false, 1, NoLeaderEpoch, false},
		{"1.0 V1 without statistics", relayout(t, v0, layoutV1Stats, nil, false), false, 1, NoLeaderEpoch, false},
		{"1.0 V2", relayout(t, v0, layoutV2, stats, false), false, 2, 7, false},
		{"1.0 V1, stale CRC, unchecked", relayout(t, v0, layoutV1Stats, stats, true), true, 1, NoLeaderEpoch, false},
		{"0.9 V1, stale CRC, unchecked", relayout(t, v0, layoutV1Epoch, nil, true), true, 1, 7, false},
		{"1.0 V1, stale CRC, checked", relayout(t, v0, layoutV1Stats, stats, true), false, 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read := ReadLogBatch
			if tc.noCRC {
				read = ReadLogBatchNoCRC
			}
			lb, rest, err := read(append(append([]byte{}, tc.batch...), 0xAA))
			if tc.wantFail {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []byte{0xAA}, rest)
			assert.Equal(t, tc.magic, lb.Magic)
			assert.Equal(t, tc.epoch, lb.LeaderEpoch)
			assert.Equal(t, int16(3), lb.SchemaID)
			assert.Equal(t, int32(2), lb.RecordCount)
			assert.Equal(t, int32(1), lb.LastOffsetDelta)
			assert.Equal(t, int64(9), lb.WriterID)
			assert.Equal(t, int32(4), lb.BatchSequence)
			assert.Equal(t, "records!", string(lb.Records))
		})
	}
}
