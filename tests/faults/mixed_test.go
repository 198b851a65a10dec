//go:build faults

package faults

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// extended reports whether the extended fault form runs
// (FLUSS_FAULTS_EXTENDED=1, see run.sh): a killed coordinator, and a
// partitioned primary-key table written with upserts, deletes and partial
// updates under every fault.
func extended() bool { return os.Getenv("FLUSS_FAULTS_EXTENDED") == "1" }

// TestFaultsKillCoordinator is the workload of TestFaultsKillTabletServers
// (plus the mixed partitioned workload) while the coordinator is killed with
// SIGKILL and restarted: metadata, writer ids and partition creation go to
// the coordinator, writes to the tablet servers. Extended form only.
//
// Knobs: FLUSS_FAULTS_COORD_KILLS (20), FLUSS_FAULTS_UP, FLUSS_FAULTS_DOWN.
func TestFaultsKillCoordinator(t *testing.T) {
	if !extended() {
		t.Skip("extended fault form only (FLUSS_FAULTS_EXTENDED=1)")
	}
	e := needCluster(t)
	cycles := envInt("FLUSS_FAULTS_COORD_KILLS", 20)
	up := envDur("FLUSS_FAULTS_UP", 6*time.Second)
	down := envDur("FLUSS_FAULTS_DOWN", 12*time.Second)
	t.Logf("%d coordinator kill cycles: SIGKILL cs; restart after %s; next kill %s after it lists the tablet servers again", cycles, down, up)
	runFaults(t, e, cycles, up, func(start time.Time, _ map[string]*tally) []string {
		l := &faultLog{t: t, start: start}
		for i := range cycles {
			time.Sleep(up)
			pid := e.coord.pid()
			if err := e.coord.kill(); err != nil {
				return l.failed(i, err)
			}
			l.logf("SIGKILL cs (pid %d)", pid)
			time.Sleep(down)
			if err := e.coord.restart(); err != nil {
				return l.failed(i, err)
			}
			l.logf("restarted cs (pid %d)", e.coord.pid())
			e.waitServers(t, len(e.servers), 90*time.Second)
			l.logf("cs lists %d tablet servers", len(e.servers))
		}
		return l.events
	})
}

// mixedRun writes into a partitioned primary-key table
// {id BIGINT, part STRING, worker INT, payload STRING, note STRING},
// primary key (id, part), partitioned by part (p0..p3, created by the
// gateway's writes), through the gateway's records route: upserts of new ids,
// and for ids whose upsert succeeded either a partial update of `note` or a
// delete (each id at most one follow-up, so every verdict can be checked
// against the changelog).
type mixedRun struct {
	base, cluster, db, table string
	client                   *http.Client
	workers, batch           int
	deadline                 time.Duration

	ups, partials, deletes *tally
	next                   atomic.Int64
	mu                     sync.Mutex
	pool                   []int64 // upserted with success, no follow-up yet
}

const mixedTable = "pk_mixed"

func newMixedRun(t *testing.T, e *faultEnv, db string) *mixedRun {
	t.Helper()
	base := strings.TrimRight(os.Getenv("FLUSS_FAULTS_GATEWAY_URL"), "/")
	schema := `[{"name":"id","type":"bigint NOT NULL"},{"name":"part","type":"string NOT NULL"},{"name":"worker","type":"int"},` +
		`{"name":"payload","type":"string"},{"name":"note","type":"string"}]`
	e.peerRun(t, "create-table", db, mixedTable, "--schema", schema, "--primary-key", "id,part", "--partition-key", "part",
		"--bucket-key", "id", "--buckets", "3", "--properties", `{"table.replication.factor":"3"}`)
	return &mixedRun{base: base, cluster: envOr("FLUSS_FAULTS_GATEWAY_CLUSTER", "default"), db: db, table: mixedTable,
		client:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}},
		workers: envInt("FLUSS_FAULTS_MIXED_WORKERS", 4), batch: envInt("FLUSS_FAULTS_BATCH", 100),
		deadline: envDur("FLUSS_FAULTS_DEADLINE", 4*time.Second),
		ups:      newTally(), partials: newTally(), deletes: newTally()}
}

func part(id int64) string { return "p" + strconv.FormatInt(id%4, 10) }

// run writes until ctx ends, about 10 requests per second per worker.
func (m *mixedRun) run(ctx context.Context) {
	var wg sync.WaitGroup
	for w := range m.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for ctx.Err() == nil {
				kind := "upsert"
				if r := rng.IntN(10); r >= 6 {
					if ids := m.take(m.batch); ids != nil {
						kind = map[bool]string{true: "partial", false: "delete"}[r < 8]
						m.write(kind, ids, w)
					}
				}
				if kind == "upsert" {
					ids := make([]int64, m.batch)
					for i := range ids {
						ids[i] = m.next.Add(1)
					}
					m.write(kind, ids, w)
				}
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
}

func (m *mixedRun) take(n int) []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.pool) < n {
		return nil
	}
	ids := append([]int64(nil), m.pool[:n]...)
	m.pool = m.pool[n:]
	return ids
}

func (m *mixedRun) write(kind string, ids []int64, worker int) {
	var body bytes.Buffer
	body.WriteString(`{`)
	if kind == "partial" {
		body.WriteString(`"partial_update_columns":["id","part","note"],`)
	}
	body.WriteString(`"entries":[`)
	for i, id := range ids {
		if i > 0 {
			body.WriteByte(',')
		}
		switch kind {
		case "upsert":
			fmt.Fprintf(&body, `{"id":"%d","upsert":{"id":%d,"part":%q,"worker":%d,"payload":%q}}`, id, id, part(id), worker, payload(id))
		case "partial":
			fmt.Fprintf(&body, `{"id":"%d","upsert":{"id":%d,"part":%q,"note":"n-%d"}}`, id, id, part(id), id)
		case "delete":
			fmt.Fprintf(&body, `{"id":"%d","delete":{"id":%d,"part":%q}}`, id, id, part(id))
		}
	}
	body.WriteString(`]}`)
	tl := map[string]*tally{"upsert": m.ups, "partial": m.partials, "delete": m.deletes}[kind]
	start := time.Now()
	vs, err := m.post(body.Bytes(), ids)
	tl.record(ids, vs, err, time.Since(start), m.deadline)
	if kind == "upsert" && err == nil {
		m.mu.Lock()
		for i, v := range vs {
			if v.ok {
				m.pool = append(m.pool, ids[i])
			}
		}
		m.mu.Unlock()
	}
}

func (m *mixedRun) post(body []byte, ids []int64) ([]verdict, error) {
	url := fmt.Sprintf("%s/v1/clusters/%s/databases/%s/tables/%s/records", m.base, m.cluster, m.db, m.table)
	return postRecords(m.client, url, body, m.table, m.deadline, ids)
}

// verify checks every verdict of the mixed workload against the changelog:
// upsert success -> +I, no -> nothing at all; partial update success -> a +U
// with the note, no -> none; delete success -> -D, no -> none.
func (m *mixedRun) verify(t *testing.T, sc scanned) {
	t.Helper()
	var lost, phantom, twice []string
	checkOne := func(what string, tl *tally, landed func(id int64) int) {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		for id, c := range tl.cls {
			n := landed(id)
			switch {
			case c == clsSuccess && n == 0:
				lost = append(lost, fmt.Sprintf("%s:%d", what, id))
			case c == clsNo && n > 0:
				phantom = append(phantom, fmt.Sprintf("%s:%d", what, id))
			}
			if n > 1 {
				twice = append(twice, fmt.Sprintf("%s:%d", what, id))
			}
		}
		t.Logf("FAULTS %s %s: %d entries in %d requests; success=%d | applied no=%d (%s) | applied unknown=%d (%s) | request refused=%d (%s) | broken=%d (%s); later than deadline+%s: %d (max over deadline %s)",
			t.Name(), what, len(tl.cls), tl.requests, tl.success, sum(tl.no), fmtCounts(tl.no), sum(tl.unknown), fmtCounts(tl.unknown),
			sum(tl.reqErrs), fmtCounts(tl.reqErrs), sum(tl.broken), fmtCounts(tl.broken), lateSlack, tl.late, tl.maxOver.Round(time.Millisecond))
		for k, m := range tl.msgs {
			t.Logf("  %s: first message of %s: %s", what, k, truncate(m, 300))
		}
		assert.Zero(t, sum(tl.broken), "%s: broken verdicts", what)
		assert.Zero(t, tl.late, "%s: answers later than the deadline + %s", what, lateSlack)
	}
	checkOne("upsert", m.ups, func(id int64) int { return sc.byIDType[id]["+I"] })
	checkOne("partial_update", m.partials, func(id int64) int { return sc.notes[id] })
	checkOne("delete", m.deletes, func(id int64) int { return sc.byIDType[id]["-D"] })
	t.Logf("  mixed violations: lost=%d %v | phantom=%d %v | applied twice=%d %v",
		len(lost), headS(lost, 10), len(phantom), headS(phantom, 10), len(twice), headS(twice, 10))
	assert.Empty(t, lost, "reported success, not in the changelog")
	assert.Empty(t, phantom, "reported applied no, in the changelog")
	assert.Empty(t, twice, "applied twice")
	assert.Positive(t, m.ups.success)
}

func headS(l []string, n int) []string {
	if len(l) > n {
		return l[:n]
	}
	return l
}
