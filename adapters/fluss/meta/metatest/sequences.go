package metatest

import (
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
)

// retainedBatches is how many of a writer's last batches a bucket leader
// remembers to answer resends (apache/fluss: WriterStateEntry's batch
// metadata queue; docs/fluss-writer.md).
const retainedBatches = 5

// Sequences applies a bucket leader's batch-sequence rule, per bucket (of
// any comparable key type) and writer id, as the Fluss server does
// (apache/fluss@ff3bcd5: fluss-server/src/main/java/org/apache/fluss/server/
// log/WriterAppendInfo.java, maybeValidateDataBatch and inSequence): a batch
// is appended when its sequence follows the writer's last appended one (the
// first must be 0); a resend of one of the last retainedBatches batches is
// answered as a success without being appended again; any other sequence is
// OUT_OF_ORDER_SEQUENCE. Batches without a writer id are always appended.
// Both fakes use it (Cluster here, flussfake's data plane); Contract holds
// them, and the real server, to it. Not safe for concurrent use.
type Sequences[B comparable] struct {
	state map[B]map[int64][]int32
}

// Check applies the rule to one batch and returns its answer code and
// whether it is appended.
func (s *Sequences[B]) Check(b B, writer int64, seq int32) (wire.ErrorCode, bool) {
	if writer == record.NoWriterID {
		return wire.CodeNone, true
	}
	if s.state == nil {
		s.state = make(map[B]map[int64][]int32)
	}
	ws, ok := s.state[b]
	if !ok {
		ws = make(map[int64][]int32)
		s.state[b] = ws
	}
	seqs := ws[writer]
	for _, r := range seqs {
		if r == seq {
			return wire.CodeNone, false // a resend of a recent batch: success, not applied again
		}
	}
	last := int32(-1)
	if len(seqs) > 0 {
		last = seqs[len(seqs)-1]
	}
	if seq != last+1 {
		return wire.CodeOutOfOrderSequenceException, false
	}
	seqs = append(seqs, seq)
	if len(seqs) > retainedBatches {
		seqs = seqs[1:]
	}
	ws[writer] = seqs
	return wire.CodeNone, true
}
