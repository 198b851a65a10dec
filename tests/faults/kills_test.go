//go:build faults

package faults

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
		return v
	}
	return def
}

func envDur(k string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(k)); err == nil && d > 0 {
		return d
	}
	return def
}

// faultLog is the timeline a fault injector returns: each event stamped
// with the time since start, and logged.
type faultLog struct {
	t      *testing.T
	start  time.Time
	events []string
}

func (l *faultLog) logf(format string, a ...any) {
	ev := fmt.Sprintf("t+%5.1fs ", time.Since(l.start).Seconds()) + fmt.Sprintf(format, a...)
	l.events = append(l.events, ev)
	l.t.Log(ev)
}

// failed fails the test with the error of fault cycle i and returns the
// events so far (the injector stops).
func (l *faultLog) failed(i int, err error) []string {
	l.t.Errorf("cycle %d: %v", i, err)
	return l.events
}

// chaos kills tablet servers with SIGKILL in turn (ts0, ts1, ts2, ts0, ...)
// and restarts each one after down, leaving up between a restart and the
// next kill. It returns a log of what it did.
func chaos(t *testing.T, e *faultEnv, cycles int, up, down time.Duration, start time.Time) []string {
	l := &faultLog{t: t, start: start}
	for i := range cycles {
		time.Sleep(up)
		p := e.servers[i%len(e.servers)]
		pid := p.pid()
		if err := p.kill(); err != nil {
			return l.failed(i, err)
		}
		l.logf("SIGKILL %s (pid %d)", p.name, pid)
		// Longer than the ZooKeeper session timeout (10 s): the restarted
		// server cannot register while its old ephemeral node exists.
		time.Sleep(down)
		before := p.registrations()
		if err := p.restart(); err != nil {
			return l.failed(i, err)
		}
		l.logf("restarted %s (pid %d)", p.name, p.pid())
		if err := p.waitRegistered(before, 60*time.Second); err != nil {
			return l.failed(i, err)
		}
		e.waitServers(t, len(e.servers), 90*time.Second)
		l.logf("%s registered again", p.name)
	}
	return l.events
}

// TestFaultsKillTabletServers writes primary-key upserts into one table and
// log appends into another, concurrently, with unique ids and a per-request
// deadline, while tablet servers of a 3-server cluster (tables with
// replication factor 3) are killed with SIGKILL and restarted; then it reads
// both tables back with the peer client and checks the honesty of every
// verdict:
//
//   - every entry reported as success is present,
//   - no entry reported applied "no" is present,
//   - every entry got exactly one verdict, and every failure says applied
//     "no" or "unknown",
//   - every write returned by its deadline (+lateSlack, 250 ms),
//   - no row was applied twice (idempotent writer).
//
// Knobs: FLUSS_FAULTS_CYCLES (6), FLUSS_FAULTS_UP (6s), FLUSS_FAULTS_DOWN
// (12s), FLUSS_FAULTS_DEADLINE (4s), FLUSS_FAULTS_RATE rows/s per table
// (1000), FLUSS_FAULTS_WORKERS per table (12), FLUSS_FAULTS_BATCH rows per
// request (100), FLUSS_FAULTS_ONLY=pk_upsert|log_append.
func TestFaultsKillTabletServers(t *testing.T) {
	e := needCluster(t)
	cycles := envInt("FLUSS_FAULTS_CYCLES", 6)
	up := envDur("FLUSS_FAULTS_UP", 6*time.Second)
	down := envDur("FLUSS_FAULTS_DOWN", 12*time.Second)
	t.Logf("%d kill cycles: SIGKILL ts0, ts1, ts2, ... in turn; restart after %s; next kill %s after the restarted server registered",
		cycles, down, up)
	runFaults(t, e, cycles, up, func(start time.Time, _ map[string]*tally) []string { return chaos(t, e, cycles, up, down, start) })
}

// TestFaultsFreezeTabletServers is the same workload while tablet servers
// are frozen (SIGSTOP) one at a time for longer than the ZooKeeper session
// timeout, then resumed (SIGCONT): the coordinator moves leadership away
// while the frozen server still holds client requests, which it answers
// after resuming (per-bucket NOT_LEADER_OR_FOLLOWER or REQUEST_TIME_OUT
// for batches it may already have appended and replicated).
//
// Knobs: FLUSS_FAULTS_FREEZES (3), FLUSS_FAULTS_FREEZE (14s), and the
// workload knobs of TestFaultsKillTabletServers.
func TestFaultsFreezeTabletServers(t *testing.T) {
	e := needCluster(t)
	cycles := envInt("FLUSS_FAULTS_FREEZES", 3)
	up := envDur("FLUSS_FAULTS_UP", 6*time.Second)
	frozen := envDur("FLUSS_FAULTS_FREEZE", 14*time.Second)
	t.Logf("%d freeze cycles: SIGSTOP ts0, ts1, ts2, ... in turn for %s, SIGCONT; next freeze %s after all servers are listed",
		cycles, frozen, up)
	runFaults(t, e, cycles, up, func(start time.Time, _ map[string]*tally) []string {
		l := &faultLog{t: t, start: start}
		for i := range cycles {
			time.Sleep(up)
			p := e.servers[i%len(e.servers)]
			if err := p.signal(syscall.SIGSTOP); err != nil {
				return l.failed(i, err)
			}
			l.logf("SIGSTOP %s (pid %d)", p.name, p.pid())
			time.Sleep(frozen)
			if err := p.signal(syscall.SIGCONT); err != nil {
				return l.failed(i, err)
			}
			l.logf("SIGCONT %s", p.name)
			e.waitServers(t, len(e.servers), 90*time.Second)
			l.logf("%d tablet servers listed", len(e.servers))
		}
		return l.events
	})
}

// runFaults runs the pk_upsert and log_append workloads concurrently while
// fault() injects faults, then reads both tables back and verifies them. It
// returns the tallies of the workloads by name.
// fault gets the tallies too (by workload name), to wait for a healthy load.
func runFaults(t *testing.T, e *faultEnv, cycles int, up time.Duration, fault func(start time.Time, tallies map[string]*tally) []string) map[string]*tally {
	t.Cleanup(func() { e.heal(t) })
	e.heal(t)
	db := e.database(t, "faults")

	type run struct {
		name string
		wl   workload
		tl   *tally
		s    sink
	}
	var runs []*run
	for _, tc := range []struct {
		name string
		pk   bool
		op   domain.WriteOp
	}{
		{"pk_upsert", true, domain.OpUpsert},
		{"log_append", false, domain.OpAppend},
	} {
		if only := os.Getenv("FLUSS_FAULTS_ONLY"); only != "" && only != tc.name {
			continue
		}
		r := &run{name: tc.name, tl: newTally(), wl: workload{
			db: db, table: tc.name, op: tc.op,
			workers:  envInt("FLUSS_FAULTS_WORKERS", 12),
			batch:    envInt("FLUSS_FAULTS_BATCH", 100),
			rate:     envInt("FLUSS_FAULTS_RATE", 1000),
			deadline: envDur("FLUSS_FAULTS_DEADLINE", 4*time.Second),
		}}
		e.createTable(t, db, tc.name, tc.pk, 6)
		// One writer per table: each has its own writer id and buffer, as
		// two gateway replicas would.
		r.s = newSink(t, e, writer.Options{})
		t.Logf("%s: writing into %s.%s through the %s: %d workers × %d rows, target %d rows/s, deadline %s",
			r.name, db, r.wl.table, r.s.name(), r.wl.workers, r.wl.batch, r.wl.rate, r.wl.deadline)
		runs = append(runs, r)
	}

	var mixed *mixedRun
	if extended() && os.Getenv("FLUSS_FAULTS_GATEWAY_URL") != "" {
		mixed = newMixedRun(t, e, db)
		t.Logf("pk_mixed: upserts, partial updates and deletes into the partitioned %s.%s through the gateway: %d workers x %d rows, deadline %s",
			db, mixed.table, mixed.workers, mixed.batch, mixed.deadline)
	}

	start := time.Now()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() { defer wg.Done(); r.wl.run(ctx, r.s, r.tl) }()
	}
	if mixed != nil {
		wg.Add(1)
		go func() { defer wg.Done(); mixed.run(ctx) }()
	}
	tallies := make(map[string]*tally, len(runs))
	for _, r := range runs {
		tallies[r.name] = r.tl
	}
	events := fault(start, tallies)
	time.Sleep(up) // a last healthy stretch
	stop()
	wg.Wait()
	writeTime := time.Since(start)
	for _, r := range runs {
		r.s.close()
	}
	for _, ev := range events {
		t.Log("  " + ev)
	}
	lateAnswers.report(t, start)
	assert.Len(t, events, cycles*3, "every fault cycle completed")

	// Let the cluster settle: every server up, leaders elected.
	e.heal(t)
	time.Sleep(3 * time.Second)
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			readStart := time.Now()
			sc := e.scanIDs(t, db, r.wl.table)
			if d := r.s.diag(); d != "" {
				t.Log("  " + d)
			}
			res := verify(t, r.tl, sc, writeTime, time.Since(readStart), cycles)
			if len(res.missingSuccess) > 0 {
				e.explainMissing(t, r.tl, db, r.wl.table, r.wl.op == domain.OpUpsert, res.missingSuccess, start)
			}
		})
	}
	if mixed != nil {
		t.Run("pk_mixed", func(t *testing.T) { mixed.verify(t, e.scanIDs(t, db, mixed.table)) })
	}
	return tallies
}

// verify logs the verdict counts and asserts the read-back checks.
func verify(t *testing.T, tl *tally, sc scanned, writeTime, readTime time.Duration, kills int) checkResult {
	res := check(tl, sc)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	total := len(tl.cls)
	t.Logf("FAULTS %s: %d entries in %d requests over %s (%.0f rows/s); fault cycles: %d",
		t.Name(), total, tl.requests, writeTime.Round(time.Second), float64(total)/writeTime.Seconds(), kills)
	t.Logf("  verdicts: success=%d | applied no=%d (%s) | applied unknown=%d (%s) | request refused=%d (%s) | broken=%d (%s)",
		tl.success, sum(tl.no), fmtCounts(tl.no), sum(tl.unknown), fmtCounts(tl.unknown),
		sum(tl.reqErrs), fmtCounts(tl.reqErrs), sum(tl.broken), fmtCounts(tl.broken))
	t.Logf("  write latency: p50 %s p99 %s max over deadline %s; writes later than deadline+%s: %d",
		tl.percentile(0.5).Round(time.Millisecond), tl.percentile(0.99).Round(time.Millisecond),
		tl.maxOver.Round(time.Millisecond), lateSlack, tl.late)
	t.Logf("  read back (peer scan, %s): %d records %v; unknown landed %d of %d",
		readTime.Round(time.Second), sc.records, sc.byType, res.unknownLanded, res.unknownTotal)
	t.Logf("  violations: success missing=%d %v | applied-no present=%d %v | applied twice=%d %v | strangers=%d %v",
		len(res.missingSuccess), head(res.missingSuccess, 10), len(res.presentNo), head(res.presentNo, 10),
		len(res.duplicates), head(res.duplicates, 10), len(res.strangers), head(res.strangers, 10))

	assert.Empty(t, res.missingSuccess, "entries reported success must be present")
	assert.Empty(t, res.presentNo, "entries reported applied \"no\" must be absent")
	assert.Zero(t, sum(tl.broken), "every entry gets exactly one verdict with applied no|unknown on failure: %s", fmtCounts(tl.broken))
	assert.Zero(t, tl.late, "writes must return by their deadline (+%s)", lateSlack)
	assert.Empty(t, res.duplicates, "the idempotent writer must not apply a row twice")
	assert.Empty(t, res.strangers, "rows the test never wrote")
	assert.Greater(t, tl.success, 0)
	return res
}

// explainMissing logs when the missing successes got their verdicts and,
// for a primary-key table, whether a peer lookup finds them (a row in the
// KV state but not in the changelog would point at the read-back, not at
// the write).
func (e *faultEnv) explainMissing(t *testing.T, tl *tally, db, table string, pk bool, missing []int64, start time.Time) {
	tl.mu.Lock()
	lo, hi := float32(1e9), float32(0)
	for _, id := range missing {
		lo, hi = min(lo, tl.doneAt[id]), max(hi, tl.doneAt[id])
	}
	tl.mu.Unlock()
	t.Logf("  missing successes: ids %d..%d, verdicts given between t+%.1fs and t+%.1fs (tally start %s before the fault clock)",
		missing[0], missing[len(missing)-1], lo, hi, tl.start.Sub(start).Round(time.Millisecond))
	if !pk {
		return
	}
	for _, id := range head(missing, 5) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := e.peerTry(ctx, "lookup", db, table, "--key", fmt.Sprintf(`{"id":%d}`, id))
		cancel()
		t.Logf("  peer lookup id %d: %s (err %v)", id, bytes.TrimSpace(out), err)
	}
}
