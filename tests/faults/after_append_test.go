package faults

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestAnsweredAfterAppendIsNotAppliedNo is the regression test of a writer
// bug, since fixed (writer.mayHaveBeenAppended).
//
// A Fluss 0.9.1 leader appends a PutKv/ProduceLog batch to its log first and
// only then, for acks=all, waits for the followers in a DelayedWrite
// (fluss-server .../replica/delay/DelayedWrite.java, Replica
// #checkEnoughReplicasReachOffset). The per-bucket answer can then be an
// error although the batch is in the log and may be (or already is)
// committed:
//
//   - NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION (28): high watermark
//     reached, ISR smaller than min-in-sync — the batch IS committed;
//   - NOT_LEADER_OR_FOLLOWER (12): leadership moved while waiting — the
//     batch survives if the new leader had fetched it;
//   - REQUEST_TIME_OUT (25): the delayed write expired after timeout_ms.
//
// The writer takes every per-bucket answer as "not applied" (sender.go,
// send(): batchFailedLocked(..., ambiguous=false, ...)). When such a batch
// then waits for its retry and the request's deadline passes (here the
// retries meet NOT_LEADER_OR_FOLLOWER while the leadership moves), expire()
// (writer.go) drops it with applied "no", and failBatchLocked(adjust=true)
// hands its sequence to the bucket's next batch. That next batch is
// answered by the leader as a duplicate of the dropped one — success — and
// is never written:
//
//  1. rows 1..10 are reported applied "no" but are in the table;
//  2. rows 100..109 of the next request are reported success but are not.
//
// The fake server here applies the 0.9.1 idempotence rule (a batch whose
// sequence is one of the writer's last five is a successful duplicate).
func TestAnsweredAfterAppendIsNotAppliedNo(t *testing.T) {
	t.Parallel()
	for _, code := range []wire.ErrorCode{
		wire.CodeNotEnoughReplicasAfterAppendException,
		wire.CodeNotLeaderOrFollower,
		wire.CodeRequestTimeOut,
	} {
		t.Run(fmt.Sprintf("code_%d", code), func(t *testing.T) {
			t.Parallel()
			f := newKVFake(t, 1)
			var moving atomic.Bool
			moving.Store(true)
			appended := 0
			f.afterAppend = func(kvAttempt) int32 {
				appended++
				if appended == 1 {
					return int32(code) // the first batch is in the log, answered with an error
				}
				return 0
			}
			f.setAnswer(func(_ kvAttempt, n int) (int32, []byte) {
				if n > 1 && moving.Load() {
					// Retries meet the leadership change: rejected before
					// the append.
					return int32(wire.CodeNotLeaderOrFollower), nil
				}
				return 0, nil
			})
			w := openFake(t, f, 1, writer.Options{})

			first := kvRows(1, 10)
			resA, _ := writeWithin(t, w, first, 1500*time.Millisecond)
			moving.Store(false)
			second := kvRows(100, 10)
			resB, _ := writeWithin(t, w, second, 5*time.Second)
			_, applied := f.snapshot()
			attempts, _ := f.snapshot()

			noButApplied, okButMissing := 0, 0
			for i, r := range resA {
				id := first.Entries[i].Row[0].I64
				if !r.OK() && r.Applied == domain.AppliedNo && applied[id] > 0 {
					noButApplied++
				}
				if r.OK() && applied[id] == 0 {
					okButMissing++
				}
			}
			for i, r := range resB {
				id := second.Entries[i].Row[0].I64
				if r.OK() && applied[id] == 0 {
					okButMissing++
				}
				if !r.OK() && r.Applied == domain.AppliedNo && applied[id] > 0 {
					noButApplied++
				}
			}
			var seqs []int32
			for _, a := range attempts {
				seqs = append(seqs, a.seq)
			}
			t.Logf("first request: %q applied=%q (row 1 applied %d×); second request: ok=%v (row 100 applied %d×); batch sequences sent: %v",
				resA[0].Code, resA[0].Applied, applied[1], resB[0].OK(), applied[100], seqs)
			assert.Zero(t, noButApplied, "entries reported applied \"no\" are in the table (answer %s came after the append)", code)
			assert.Zero(t, okButMissing, "entries reported success are not in the table (their batch reused the dropped batch's sequence and was taken as a duplicate)")
		})
	}
}

// TestLateAnswerAfterAppendLosesNextBatch is the same bug without a retry:
// the request's deadline passes while its batch is in the air (its entries
// are correctly applied "unknown"); the leader then appends the batch and
// answers NOT_LEADER_OR_FOLLOWER (leadership moved during the DelayedWrite).
// The writer drops the orphan batch as never applied (sender.go,
// batchFailedLocked: `!bt.hasOwner()` and `!bt.ambiguous` →
// failBatchLocked(adjust=true)), so the next batch of the bucket reuses its
// sequence, is answered as a duplicate, and its rows are reported success
// without being written (KNOWN TO FAIL).
func TestLateAnswerAfterAppendLosesNextBatch(t *testing.T) {
	t.Parallel()
	f := newKVFake(t, 1)
	var calls atomic.Int32
	f.hold = func() {
		if calls.Add(1) == 1 {
			time.Sleep(1500 * time.Millisecond) // the first PutKv outlives its 1 s deadline
		}
	}
	appended := 0
	f.afterAppend = func(kvAttempt) int32 {
		appended++
		if appended == 1 {
			return int32(wire.CodeNotLeaderOrFollower)
		}
		return 0
	}
	w := openFake(t, f, 1, writer.Options{})
	first := kvRows(1, 10)
	resA, _ := writeWithin(t, w, first, time.Second)
	for i, r := range resA {
		assert.Equal(t, domain.AppliedUnknown, r.Applied, "entry %d was in the air at its deadline: %+v", i, r)
	}
	time.Sleep(time.Second) // the late answer arrives
	second := kvRows(100, 10)
	resB, _ := writeWithin(t, w, second, 5*time.Second)
	attempts, applied := f.snapshot()
	var seqs []int32
	for _, a := range attempts {
		seqs = append(seqs, a.seq)
	}
	okButMissing := 0
	for i, r := range resB {
		if r.OK() && applied[second.Entries[i].Row[0].I64] == 0 {
			okButMissing++
		}
	}
	t.Logf("row 1 applied %d×; second request ok=%v, row 100 applied %d×; batch sequences sent: %v",
		applied[1], resB[0].OK(), applied[100], seqs)
	assert.Zero(t, okButMissing, "entries reported success are not in the table (their batch reused the orphan batch's sequence)")
}
