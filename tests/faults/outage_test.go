//go:build faults

package faults

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestFaultsCoordinatorOutage kills the coordinator with SIGKILL under the
// pk_upsert and log_append load and keeps it down for FLUSS_FAULTS_OUTAGE
// (60 s) before restarting it. The tables' definitions, writer ids and
// bucket leaders are known before the outage, and the tablet servers keep
// answering: writes must go on. Besides the read-back checks of every fault
// test (no violations), at least FLUSS_FAULTS_OUTAGE_MIN_OK (99) percent of
// the entries answered during the outage must have succeeded.
//
// Knobs: FLUSS_FAULTS_OUTAGE, FLUSS_FAULTS_OUTAGE_MIN_OK, FLUSS_FAULTS_UP and
// the workload knobs of TestFaultsKillTabletServers.
func TestFaultsCoordinatorOutage(t *testing.T) {
	e := needCluster(t)
	outage := envDur("FLUSS_FAULTS_OUTAGE", 60*time.Second)
	minOK := float64(envInt("FLUSS_FAULTS_OUTAGE_MIN_OK", 99))
	up := envDur("FLUSS_FAULTS_UP", 6*time.Second)
	var killedAt, restartedAt time.Time // wall clock
	t.Logf("coordinator outage: SIGKILL cs after %s of load, restart after %s", up, outage)
	tallies := runFaults(t, e, 1, up, func(start time.Time, tls map[string]*tally) []string {
		var events []string
		logf := func(format string, a ...any) {
			ev := fmt.Sprintf("t+%5.1fs ", time.Since(start).Seconds()) + fmt.Sprintf(format, a...)
			events = append(events, ev)
			t.Log(ev)
		}
		time.Sleep(up)
		// The tables are new: let their buckets get leaders and the load
		// run cleanly first, so the outage alone is measured.
		// A window longer than the request deadline: no request sent while
		// the tables were warming up is still in flight at the kill.
		healthyFor := envDur("FLUSS_FAULTS_DEADLINE", 4*time.Second) + time.Second
		if err := waitHealthy(tls, healthyFor, 120*time.Second); err != nil {
			t.Error(err)
			return events
		}
		t.Logf("t+%5.1fs load healthy: every verdict of the last %s a success", time.Since(start).Seconds(), healthyFor)
		pid := e.coord.pid()
		if err := e.coord.kill(); err != nil {
			t.Error(err)
			return events
		}
		killedAt = time.Now()
		logf("SIGKILL cs (pid %d)", pid)
		time.Sleep(outage)
		restartedAt = time.Now()
		if err := e.coord.restart(); err != nil {
			t.Error(err)
			return events
		}
		logf("restarted cs (pid %d)", e.coord.pid())
		e.waitServers(t, len(e.servers), 90*time.Second)
		logf("cs lists %d tablet servers", len(e.servers))
		return events
	})
	for name, tl := range tallies {
		tl.mu.Lock()
		total, ok := 0, 0
		// doneAt counts from the tally's start (before the tables were
		// created), not from the workload's.
		from, to := killedAt.Sub(tl.start), restartedAt.Sub(tl.start)
		for id, at := range tl.doneAt {
			if d := time.Duration(float64(at) * float64(time.Second)); d > from && d <= to {
				total++
				if tl.cls[id] == clsSuccess {
					ok++
				}
			}
		}
		tl.mu.Unlock()
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(ok) / float64(total)
		}
		t.Logf("FAULTS %s %s: during the %s outage %d of %d entries succeeded (%.2f%%)", t.Name(), name, outage, ok, total, pct)
		t.Logf("  %s timeline (5 s steps from the tally's start; kill at %.1fs, restart at %.1fs: success/failed): %s",
			name, from.Seconds(), to.Seconds(), timeline(tl, 5*time.Second))
		tl.mu.Lock()
		for k, m := range tl.msgs {
			t.Logf("  %s: first message of %s: %s", name, k, truncate(m, 400))
		}
		tl.mu.Unlock()
		assert.Positive(t, total, "%s: entries were answered during the outage", name)
		assert.GreaterOrEqual(t, pct, minOK, "%s: share of entries that succeeded while the coordinator was down", name)
	}
}

// waitHealthy waits until every tally has verdicts in the last window and
// all of them are successes, at most limit.
func waitHealthy(tallies map[string]*tally, window, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		healthy := true
		for _, tl := range tallies {
			tl.mu.Lock()
			since := float32((time.Since(tl.start) - window).Seconds())
			n, bad := 0, 0
			for id, at := range tl.doneAt {
				if at >= since {
					n++
					if tl.cls[id] != clsSuccess {
						bad++
					}
				}
			}
			tl.mu.Unlock()
			healthy = healthy && n > 0 && bad == 0
		}
		if healthy {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the load did not become healthy within %s", limit)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// timeline renders the verdicts per step after the tally's start.
func timeline(tl *tally, step time.Duration) string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	type cnt struct{ ok, bad int }
	var steps []cnt
	for id, at := range tl.doneAt {
		i := int(float64(at) * float64(time.Second) / float64(step))
		for len(steps) <= i {
			steps = append(steps, cnt{})
		}
		if tl.cls[id] == clsSuccess {
			steps[i].ok++
		} else {
			steps[i].bad++
		}
	}
	out := ""
	for i, c := range steps {
		out += fmt.Sprintf(" %ds:%d/%d", i*int(step/time.Second), c.ok, c.bad)
	}
	return out
}
