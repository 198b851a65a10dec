//go:build faults

package faults

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestDeadlineFrozenCluster freezes every server of the cluster (SIGSTOP:
// connections stay open, nothing answers) under a warmed-up writer and
// writes more batches than the writer can have in flight (5 per bucket),
// in ten requests (forty of key-less log rows) with a 3 s deadline each.
// The write must return by its deadline with every entry failed `timeout`:
// applied "unknown" for rows in batches already sent, applied "no" for rows
// still queued. Then the cluster resumes (SIGCONT), the writer keeps retrying
// what it had sent, and the read-back must show none of the applied "no"
// rows (and reports how many "unknown" rows landed).
func TestDeadlineFrozenCluster(t *testing.T) {
	e := needCluster(t)
	t.Cleanup(func() { e.heal(t) })
	e.heal(t)
	db := e.database(t, "deadline")
	for _, tc := range []struct {
		name string
		pk   bool
		op   domain.WriteOp
	}{
		{"pk_upsert", true, domain.OpUpsert},
		{"log_append", false, domain.OpAppend},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.createTable(t, db, tc.name, tc.pk, 6)
			s := newSink(t, e, writer.Options{})
			defer s.close()

			// Warm up: metadata, writer id and connections are in place.
			tl := newTally()
			warm := make([]int64, 100)
			for i := range warm {
				warm[i] = int64(i + 1)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			vs, err := s.write(ctx, db, tc.name, tc.op, warm, 0)
			cancel()
			require.NoError(t, err)
			for i, v := range vs {
				require.True(t, v.ok, "warm-up entry %d: %+v", i, v)
			}
			tl.record(warm, vs, nil, 0, time.Minute)
			// The gateway caches a table definition for 5 s
			// (application.DefaultSchemaCacheTTL); a first write can take
			// longer (a 1.0 primary-key table's KV tablets starting), so one
			// more write right before the freeze makes sure the frozen
			// requests need no coordinator for it.
			ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
			refreshed := time.Now()
			vs, err = s.write(ctx, db, tc.name, tc.op, []int64{999}, 0)
			cancel()
			require.NoError(t, err)
			require.True(t, vs[0].ok, "second warm-up write: %+v", vs[0])
			tl.record([]int64{999}, vs, nil, 0, time.Minute)
			require.Less(t, time.Since(refreshed), 3*time.Second, "the second warm-up write must be quick (definition cache)")

			procs := append(append([]*proc(nil), e.servers...), e.coord)
			for _, p := range procs {
				require.NoError(t, p.signal(syscall.SIGSTOP))
			}
			frozen := time.Now()
			resumed := false
			resume := func() {
				if !resumed {
					for _, p := range procs {
						_ = p.signal(syscall.SIGCONT)
					}
					resumed = true
				}
			}
			defer resume()

			// Ten requests of 500 rows, further apart than the linger that
			// applies behind a batch in flight (writer.DefaultKvLinger for
			// PutKv rows): each adds one batch per bucket, so the sixth and
			// later find the bucket's 5 in-flight batches stuck and stay
			// queued. Key-less log rows (10 ms linger, 20 ms apart): each
			// request is one batch in the sticky bucket, which moves on with
			// every new batch; 40 requests put at least 7 batches in some
			// bucket of 6 (pigeonhole).
			const deadline = 3 * time.Second
			const rows = 500
			requests, apart := 10, writer.DefaultKvLinger+20*time.Millisecond
			if !tc.pk {
				requests, apart = 40, 20*time.Millisecond
			}
			type outcome struct {
				ids  []int64
				vs   []verdict
				err  error
				took time.Duration
			}
			outs := make([]outcome, requests)
			var wg sync.WaitGroup
			for r := range requests {
				outs[r].ids = make([]int64, rows)
				for i := range outs[r].ids {
					outs[r].ids[i] = int64(1000 + r*rows + i)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), deadline)
					defer cancel()
					start := time.Now()
					outs[r].vs, outs[r].err = s.write(ctx, db, tc.name, tc.op, outs[r].ids, 1)
					outs[r].took = time.Since(start)
				}()
				time.Sleep(apart)
			}
			wg.Wait()
			resume()
			no, unknown := 0, 0
			var took time.Duration
			for r, o := range outs {
				took = max(took, o.took)
				tl.record(o.ids, o.vs, o.err, o.took, deadline)
				assert.LessOrEqual(t, o.took, deadline+lateSlack, "request %d must return by its deadline", r)
				if !assert.NoError(t, o.err, "request %d", r) {
					continue
				}
				for i, v := range o.vs {
					if !assert.False(t, v.ok, "request %d entry %d succeeded while every server was frozen", r, i) {
						continue
					}
					assert.Equal(t, "timeout", v.code, "request %d entry %d", r, i)
					assert.True(t, v.retryable, "request %d entry %d", r, i)
					switch v.applied {
					case domain.AppliedNo:
						no++
					case domain.AppliedUnknown:
						unknown++
					default:
						t.Errorf("request %d entry %d: applied %q", r, i, v.applied)
					}
				}
			}
			t.Logf("frozen for %s; the slowest of %d writes returned after %s (deadline %s)",
				time.Since(frozen).Round(time.Millisecond), requests, took.Round(time.Millisecond), deadline)
			t.Logf("verdicts: timeout/no=%d timeout/unknown=%d", no, unknown)
			assert.Positive(t, no, "rows still queued at the deadline are applied \"no\"")

			// The cluster is back: the writer retries what it had sent
			// (same writer id and sequences); a new write succeeds. Each
			// attempt writes rows of its own: resending the rows of an
			// attempt whose verdicts were not all success would apply
			// its "unknown" rows twice (the client's at-least-once, not
			// the gateway's). Every attempt's verdicts are checked.
			// The ids of the attempts follow the frozen requests' (1000 up to
			// 1000+requests*rows): an attempt's rows must be told apart from a
			// frozen request's "unknown" rows that land after SIGCONT (40
			// requests of 500 rows reach id 20999; attempts from 10000 were
			// then read back twice, a frozen row and the attempt's).
			afterBase := int64(1000 + requests*rows)
			attempt := 0
			require.Eventually(t, func() bool {
				after := make([]int64, 100)
				for i := range after {
					after[i] = afterBase + int64(attempt*100+i)
				}
				attempt++
				if !assert.True(t, tl.unused(after), "attempt %d reuses ids of earlier writes", attempt) {
					return true // stop: the read-back could not tell the writes apart
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				avs, err := s.write(ctx, db, tc.name, tc.op, after, 2)
				if err != nil {
					// No verdicts: the rows may or may not have landed.
					unknown := make([]verdict, len(after))
					for i := range unknown {
						unknown[i] = verdict{code: "client_error", applied: domain.AppliedUnknown, msg: err.Error()}
					}
					tl.record(after, unknown, nil, 0, time.Minute)
					return false
				}
				tl.record(after, avs, nil, 0, time.Minute)
				for _, v := range avs {
					if !v.ok {
						return false
					}
				}
				return true
			}, 90*time.Second, time.Second, "writes succeed again after SIGCONT")
			time.Sleep(3 * time.Second) // let retried "unknown" batches land
			s.close()

			sc := e.scanIDs(t, db, tc.name)
			res := check(tl, sc)
			t.Logf("DEADLINE %s: %d rows in %d writes, slowest returned after %s (deadline %s); timeout/no=%d timeout/unknown=%d; "+
				"read back: %d records, unknown landed %d of %d, applied-no present %d %v, success missing %d",
				t.Name(), requests*rows, requests, took.Round(time.Millisecond), deadline, no, unknown, sc.records,
				res.unknownLanded, res.unknownTotal, len(res.presentNo), head(res.presentNo, 10), len(res.missingSuccess))
			assert.Empty(t, res.presentNo, "rows reported applied \"no\" must never appear")
			assert.Empty(t, res.missingSuccess, "rows reported success must be present")
			assert.Empty(t, res.duplicates, "no row applied twice")
			assert.Empty(t, res.strangers, "rows the test never wrote")
			assert.Zero(t, tl.broken["id_written_twice_by_test"], "the test wrote no id twice")
		})
	}
}
