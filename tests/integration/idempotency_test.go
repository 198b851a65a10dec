//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// idemGateway is an in-process gateway whose Idempotency-Key use case the
// test may adjust (clock, a hook between writing and recording).
type idemGateway struct {
	t    *testing.T
	base string // http://127.0.0.1:port/v1/clusters/default
}

// idemOptions adjust the use case of one gateway instance.
type idemOptions struct {
	now        func() time.Time
	afterWrite func(ctx context.Context, key application.IdempotencyKey) error
}

// idemLedger is the tests' ledger (created by the first test that needs
// it; keys are unique per run).
var idemLedger = domain.TablePath{Database: "gw_idem_ledger", Table: "keys"}

func startIdemGateway(t *testing.T, o idemOptions, extraEnv ...string) *idemGateway {
	t.Helper()
	env := map[string]string{
		"FLUSS_GATEWAY__CLUSTERS":                             "default",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS": wrBootstrap(t),
		"FLUSS_GATEWAY__REST__LISTEN":                         "127.0.0.1:0",
		"FLUSS_GATEWAY__METRICS__ENABLED":                     "false",
		"FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE":            "0s",
		"FLUSS_GATEWAY__IDEMPOTENCY__DATABASE":                idemLedger.Database,
		"FLUSS_GATEWAY__IDEMPOTENCY__TABLE":                   idemLedger.Table,
	}
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := config.Load(config.Options{Env: env})
	require.NoError(t, err)
	var opts []fx.Option
	if o.now != nil || o.afterWrite != nil {
		opts = append(opts, fx.Decorate(func(r *application.RecordService) *application.IdempotentWrites {
			return application.NewIdempotentWrites(r, application.IdempotencyOptions{
				Ledger: domain.TablePath{Database: cfg.Idempotency.Database, Table: cfg.Idempotency.Table}, Window: cfg.Idempotency.Window, Lease: cfg.Idempotency.Lease,
				Now: o.now, AfterWrite: o.afterWrite,
			})
		}))
	}
	base := runGateway(t, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)), opts...)
	return &idemGateway{t: t, base: base + "/v1/clusters/default"}
}

// idemAnswer is one HTTP answer, its body kept as bytes.
type idemAnswer struct {
	status     int
	body       []byte
	replayed   string
	retryAfter string
}

func (a idemAnswer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.body, &m), "%s", a.body)
	return m
}

// post sends body (JSON) with header pairs; it never fails the test (it
// runs in goroutines), errors come back in the answer's status 0.
func (g *idemGateway) post(path string, body []byte, headers ...string) (idemAnswer, error) {
	req, err := http.NewRequest(http.MethodPost, g.base+path, bytes.NewReader(body))
	if err != nil {
		return idemAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return idemAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return idemAnswer{status: resp.StatusCode, body: b, replayed: resp.Header.Get("Idempotent-Replayed"),
		retryAfter: resp.Header.Get("Retry-After")}, err
}

func (g *idemGateway) mustPost(path string, body []byte, headers ...string) idemAnswer {
	g.t.Helper()
	a, err := g.post(path, body, headers...)
	require.NoError(g.t, err)
	return a
}

// idemLogTable creates a log table (id INTEGER, tag STRING) through the
// gateway and returns its records path.
func idemLogTable(t *testing.T, g *idemGateway, db, table string, headers ...string) string {
	t.Helper()
	if db != "" {
		st, body := httpJSON(t, http.MethodPost, g.base+"/databases", map[string]any{"database": db}, headers...)
		require.Contains(t, []int{http.StatusCreated, http.StatusConflict}, st, "%v", body)
		if st == http.StatusCreated {
			t.Cleanup(func() { httpJSON(t, http.MethodDelete, g.base+"/databases/"+db+"?cascade=true", nil, headers...) })
		}
	}
	return createTable(t, g.base, db, table, columns("id INTEGER", "tag STRING"),
		map[string]any{"distribution": map[string]any{"bucket_count": 2}}, headers...)
}

// idemBody is a log append of n rows with ids from..from+n-1 tagged tag.
func idemBody(from, n int, tag string) []byte {
	var entries []any
	for i := from; i < from+n; i++ {
		entries = append(entries, map[string]any{"id": fmt.Sprint(i), "append": map[string]any{"id": i, "tag": tag}})
	}
	b, _ := json.Marshal(map[string]any{"entries": entries})
	return b
}

// idemCount counts, with the independent peer client, the rows of table
// per tag.
func idemCount(t *testing.T, db, table string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range peerScan(t, db, table) {
		out[r["row"].(map[string]any)["tag"].(string)]++
	}
	return out
}

// TestIdempotencyKeyReplay: the same key and body twice answers the same
// bytes, the second with Idempotent-Replayed and nothing written (the peer
// client counts the rows once); the same key with another body is a 422;
// the key of another table or another principal does not collide.
func TestIdempotencyKeyReplay(t *testing.T) {
	g := startIdemGateway(t, idemOptions{}, "FLUSS_GATEWAY__SECURITY__AUTHENTICATION=trusted-header")
	db := gwName("gw_idem")
	alice, bob := []string{"X-Forwarded-User", "alice"}, []string{"X-Forwarded-User", "bob"}
	recA := idemLogTable(t, g, db, "a", alice...)
	recB := idemLogTable(t, g, db, "b", alice...)
	key := "replay-" + gwName("k")
	body := idemBody(1, 5, "first")
	hdr := func(who []string) []string { return append([]string{"Idempotency-Key", key}, who...) }

	first := g.mustPost(recA, body, hdr(alice)...)
	require.Equal(t, http.StatusOK, first.status, "%s", first.body)
	assert.Empty(t, first.replayed)
	require.EqualValues(t, 5, first.json(t)["success_count"])

	// Same key, same body, other JSON spacing: the recorded answer.
	spaced := bytes.ReplaceAll(body, []byte(","), []byte(", "))
	second := g.mustPost(recA, spaced, hdr(alice)...)
	require.Equal(t, http.StatusOK, second.status, "%s", second.body)
	assert.Equal(t, "true", second.replayed)
	assert.Equal(t, string(first.body), string(second.body), "the replay answers the recorded bytes")

	// Same key, another body: 422, nothing written.
	other := g.mustPost(recA, idemBody(100, 1, "other"), hdr(alice)...)
	require.Equal(t, http.StatusUnprocessableEntity, other.status, "%s", other.body)
	assert.Equal(t, "invalid_argument", other.json(t)["error"].(map[string]any)["code"])
	assert.Contains(t, other.json(t)["error"].(map[string]any)["message"], "was used for another request")

	// The same key on another table and by another principal: new writes.
	onB := g.mustPost(recB, body, hdr(alice)...)
	require.Equal(t, http.StatusOK, onB.status, "%s", onB.body)
	assert.Empty(t, onB.replayed)
	byBob := g.mustPost(recA, body, hdr(bob)...)
	require.Equal(t, http.StatusOK, byBob.status, "%s", byBob.body)
	assert.Empty(t, byBob.replayed)

	// An invalid key is a 400 and writes nothing.
	bad := g.mustPost(recA, body, append([]string{"Idempotency-Key", "has space"}, alice...)...)
	assert.Equal(t, http.StatusBadRequest, bad.status, "%s", bad.body)

	assert.Equal(t, map[string]int{"first": 10}, idemCount(t, db, "a"), "alice's and bob's writes, once each")
	assert.Equal(t, map[string]int{"first": 5}, idemCount(t, db, "b"))
}

// TestIdempotencyKeyRace: two gateway instances, 8 concurrent identical
// requests with one new key, several rounds: the rows land exactly once;
// every answer is the recorded one (200, equal verdicts), or a 409 with
// Retry-After followed by a successful replay.
func TestIdempotencyKeyRace(t *testing.T) {
	a := startIdemGateway(t, idemOptions{})
	b := startIdemGateway(t, idemOptions{})
	db := gwName("gw_idem_race")
	rec := idemLogTable(t, a, db, "events")
	const rounds, clients = 6, 8
	var conflicts atomic.Int32
	for round := range rounds {
		key := fmt.Sprintf("race-%d-%s", round, gwName("k"))
		body := idemBody(round*10, 10, fmt.Sprint("r", round))
		answers := make([]idemAnswer, clients)
		var wg sync.WaitGroup
		for i := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g := a
				if i%2 == 1 {
					g = b
				}
				for attempt := 0; attempt < 50; attempt++ {
					ans, err := g.post(rec, body, "Idempotency-Key", key, "X-Fluss-Request-Timeout", "10s")
					if err == nil && ans.status == http.StatusConflict {
						conflicts.Add(1)
						if ans.retryAfter == "" {
							answers[i] = ans // no Retry-After: reported below
							return
						}
						time.Sleep(200 * time.Millisecond)
						continue
					}
					answers[i] = ans
					return
				}
			}()
		}
		wg.Wait()
		var fresh int
		for i, ans := range answers {
			require.Equal(t, http.StatusOK, ans.status, "round %d client %d: %s", round, i, ans.body)
			if ans.replayed == "" {
				fresh++
			}
			assert.Equal(t, string(answers[0].body), string(ans.body), "round %d client %d answers the recorded verdicts", round, i)
			assert.EqualValues(t, 10, ans.json(t)["success_count"])
		}
		assert.Equal(t, 1, fresh, "round %d: exactly one request wrote", round)
	}
	counts := idemCount(t, db, "events")
	for round := range rounds {
		assert.Equal(t, 10, counts[fmt.Sprint("r", round)], "round %d: rows once", round)
	}
	t.Logf("409 answers (then replayed): %d", conflicts.Load())
}

// TestIdempotencyKeyDeadAttempt: a gateway that stops between writing the
// rows and recording the answer (the hook fails the request there, as a
// crash would leave it); a retry on another instance waits for the dead
// attempt's lease and gets the documented answer: every entry
// outcome_unknown, applied unknown, recorded (a further retry replays it);
// the rows are never written a second time.
func TestIdempotencyKeyDeadAttempt(t *testing.T) {
	crash := errors.New("simulated gateway crash after the write")
	dying := startIdemGateway(t, idemOptions{afterWrite: func(context.Context, application.IdempotencyKey) error { return crash }})
	other := startIdemGateway(t, idemOptions{})
	db := gwName("gw_idem_dead")
	rec := idemLogTable(t, other, db, "events")
	key := "dead-" + gwName("k")
	body := idemBody(1, 4, "dead")

	died := dying.mustPost(rec, body, "Idempotency-Key", key, "X-Fluss-Request-Timeout", "4s")
	require.Equal(t, http.StatusInternalServerError, died.status, "%s", died.body)

	start := time.Now()
	retry := other.mustPost(rec, body, "Idempotency-Key", key, "X-Fluss-Request-Timeout", "20s")
	require.Equal(t, http.StatusOK, retry.status, "%s", retry.body)
	assert.Equal(t, "true", retry.replayed)
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "the retry waited for the dead attempt's lease")
	m := retry.json(t)
	assert.EqualValues(t, 0, m["success_count"])
	require.EqualValues(t, 4, m["error_count"], "%s", retry.body)
	for _, f := range m["failures"].([]any) {
		f := f.(map[string]any)
		assert.Equal(t, "unknown", f["applied"])
		assert.Equal(t, false, f["retryable"])
		assert.Contains(t, f["message"], "may or may not have been written")
	}
	again := dying.mustPost(rec, body, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, again.status, "%s", again.body)
	assert.Equal(t, string(retry.body), string(again.body), "the outcome is recorded")
	assert.Equal(t, map[string]int{"dead": 4}, idemCount(t, db, "events"), "the rows landed once (by the dead attempt)")
}

// TestIdempotencyKeyExpiry: a key is forgotten once its ledger partition
// leaves the window (window 1 minute: hourly partitions; the instance's
// clock is moved past the next hour): the same key then writes again.
func TestIdempotencyKeyExpiry(t *testing.T) {
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	// Its own ledger: a 1-minute window makes an hourly one.
	g := startIdemGateway(t, idemOptions{now: now}, "FLUSS_GATEWAY__IDEMPOTENCY__WINDOW=1m", "FLUSS_GATEWAY__IDEMPOTENCY__TABLE=keys_1m")
	db := gwName("gw_idem_exp")
	rec := idemLogTable(t, g, db, "events")
	key := "expiry-" + gwName("k")
	body := idemBody(1, 3, "x")

	first := g.mustPost(rec, body, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, first.status, "%s", first.body)
	replay := g.mustPost(rec, body, "Idempotency-Key", key)
	require.Equal(t, "true", replay.replayed)

	// Two minutes into the next hour (a partition Fluss pre-creates).
	next := time.Now().UTC().Truncate(time.Hour).Add(time.Hour + 2*time.Minute)
	offset.Store(int64(time.Until(next)))
	later := g.mustPost(rec, body, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, later.status, "%s", later.body)
	assert.Empty(t, later.replayed, "the key expired: a new write")
	assert.Equal(t, map[string]int{"x": 6}, idemCount(t, db, "events"))
}

// TestIdempotencyKeyInFlight: while the key's owner is still writing (here
// held 3 s between its write and its answer), a request with the same key
// on another instance waits up to its own deadline, then answers 409 with
// Retry-After; once the owner answered, the retry is the replay.
func TestIdempotencyKeyInFlight(t *testing.T) {
	slow := startIdemGateway(t, idemOptions{afterWrite: func(context.Context, application.IdempotencyKey) error {
		time.Sleep(3 * time.Second)
		return nil
	}})
	other := startIdemGateway(t, idemOptions{})
	db := gwName("gw_idem_busy")
	rec := idemLogTable(t, other, db, "events")
	key := "busy-" + gwName("k")
	body := idemBody(1, 2, "busy")

	done := make(chan idemAnswer, 1)
	go func() {
		a, _ := slow.post(rec, body, "Idempotency-Key", key, "X-Fluss-Request-Timeout", "20s")
		done <- a
	}()
	time.Sleep(time.Second) // the owner has claimed and written
	busy := other.mustPost(rec, body, "Idempotency-Key", key, "X-Fluss-Request-Timeout", "500ms")
	require.Equal(t, http.StatusConflict, busy.status, "%s", busy.body)
	assert.NotEmpty(t, busy.retryAfter)
	assert.Contains(t, busy.json(t)["error"].(map[string]any)["message"], "still in progress")

	owner := <-done
	require.Equal(t, http.StatusOK, owner.status, "%s", owner.body)
	replay := other.mustPost(rec, body, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, replay.status, "%s", replay.body)
	assert.Equal(t, "true", replay.replayed)
	assert.Equal(t, string(owner.body), string(replay.body))
	assert.Equal(t, map[string]int{"busy": 2}, idemCount(t, db, "events"))
}

// TestFirstRowMergeEngine checks the primitive the ledger is built on, on
// the running Fluss version: in a primary-key table with
// `table.merge-engine = first_row`, the first upsert of a key wins and later
// ones are acknowledged but ignored, also when 16 upserts of one key race
// from two gateway instances (every lookup, the gateways' and the peer
// client's, then shows the same one of them); a delete leaves the row
// (0.9.1 acknowledges and ignores it: apache/fluss FirstRowRowMerger refuses
// deletes, and the table's delete behavior ignores them before that).
func TestFirstRowMergeEngine(t *testing.T) {
	a := startIdemGateway(t, idemOptions{})
	b := startIdemGateway(t, idemOptions{})
	db := gwName("gw_first_row")
	st, body := httpJSON(t, http.MethodPost, a.base+"/databases", map[string]any{"database": db})
	require.Equal(t, http.StatusCreated, st, "%v", body)
	t.Cleanup(func() { httpJSON(t, http.MethodDelete, a.base+"/databases/"+db+"?cascade=true", nil) })
	rec := createTable(t, a.base, db, "claims", columns("id INTEGER", "tag STRING"), map[string]any{
		"primary_key":  []any{"id"},
		"distribution": map[string]any{"bucket_count": 2},
		"configs":      map[string]any{"table.merge-engine": "first_row"},
	})
	upsert := func(g *idemGateway, id int, tag string) idemAnswer {
		b, _ := json.Marshal(map[string]any{"entries": []any{map[string]any{"id": "e", "upsert": map[string]any{"id": id, "tag": tag}}}})
		a, err := g.post(rec, b)
		if err != nil {
			return idemAnswer{body: []byte(err.Error())}
		}
		return a
	}
	lookup := func(g *idemGateway, id int) string {
		st, body := httpJSON(t, http.MethodPost, g.base+rec+"/lookup", map[string]any{"keys": []any{map[string]any{"id": id}}})
		require.Equal(t, http.StatusOK, st, "%v", body)
		r := body["results"].([]any)[0].(map[string]any)
		require.Equal(t, true, r["found"], "%v", body)
		return r["row"].(map[string]any)["tag"].(string)
	}

	// Sequential: the first write wins.
	for _, tag := range []string{"first", "second", "third"} {
		ans := upsert(a, 1, tag)
		require.Equal(t, http.StatusOK, ans.status, "%s", ans.body)
		require.EqualValues(t, 1, ans.json(t)["success_count"], "%s", ans.body)
	}
	assert.Equal(t, "first", lookup(a, 1))
	assert.Equal(t, "first", lookup(b, 1))

	// Concurrent, from two instances: one of them wins, for every reader.
	var wg sync.WaitGroup
	answers := make([]idemAnswer, 16)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := a
			if i%2 == 1 {
				g = b
			}
			answers[i] = upsert(g, 2, fmt.Sprint("g", i))
		}()
	}
	wg.Wait()
	for i, ans := range answers {
		require.Equal(t, http.StatusOK, ans.status, "upsert %d: %s", i, ans.body)
		require.EqualValues(t, 1, ans.json(t)["success_count"], "upsert %d: %s", i, ans.body)
	}
	winner := lookup(a, 2)
	assert.Regexp(t, `^g\d+$`, winner)
	for range 3 {
		assert.Equal(t, winner, lookup(b, 2))
		assert.Equal(t, winner, lookup(a, 2))
	}
	assert.Equal(t, winner, peerCmd(t, "lookup", db, "claims", "--key", `{"id": 2}`)["row"].(map[string]any)["tag"], "the peer client sees the same winner")
	// (No changelog scan: the ignored upserts still advance the log offsets
	// with batches that hold no change, which the peer's scan waits for.)
	assert.Equal(t, "first", peerCmd(t, "lookup", db, "claims", "--key", `{"id": 1}`)["row"].(map[string]any)["tag"])

	// A delete does not remove the first row.
	b2, _ := json.Marshal(map[string]any{"entries": []any{map[string]any{"id": "d", "delete": map[string]any{"id": 1}}}})
	del := a.mustPost(rec, b2)
	t.Logf("delete on a first_row table: %d %s", del.status, del.body)
	assert.Equal(t, "first", lookup(a, 1), "the row stays")
}

// TestIdempotencyKeyStress (IDEM_STRESS=<requests>, not in CI): requests of
// 2 rows each with their own key, sent by 16 clients to two instances, one
// of which "dies" (the hook fails the request after the write) on every
// 10th of its writes; each client retries on 409, 5xx and transport errors
// until it gets an answer, then sends the request twice more. The peer
// client then finds every row exactly once: 0 duplicates.
func TestIdempotencyKeyStress(t *testing.T) {
	n := 0
	if v := os.Getenv("IDEM_STRESS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	if n <= 0 {
		t.Skip("set IDEM_STRESS=<requests> to run")
	}
	var writes atomic.Int64
	dying := startIdemGateway(t, idemOptions{afterWrite: func(context.Context, application.IdempotencyKey) error {
		if writes.Add(1)%10 == 0 {
			return errors.New("simulated crash")
		}
		return nil
	}})
	healthy := startIdemGateway(t, idemOptions{})
	db := gwName("gw_idem_stress")
	rec := idemLogTable(t, healthy, db, "events")
	run := gwName("s")
	var sent, retries, unknown, conflicts atomic.Int64
	jobs := make(chan int)
	var wg sync.WaitGroup
	for c := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				key := fmt.Sprintf("%s-%d", run, i)
				body := idemBody(i*2, 2, "s")
				var final idemAnswer
				for copyN := 0; copyN < 3; copyN++ {
					for attempt := 0; ; attempt++ {
						g := dying
						if (c+attempt+copyN)%2 == 1 {
							g = healthy
						}
						sent.Add(1)
						ans, err := g.post(rec, body, "Idempotency-Key", key, "X-Fluss-Request-Timeout", "1s")
						if err != nil || ans.status == http.StatusConflict || ans.status >= 500 {
							if ans.status == http.StatusConflict {
								conflicts.Add(1)
							}
							retries.Add(1)
							time.Sleep(100 * time.Millisecond)
							continue
						}
						if ans.status != http.StatusOK {
							t.Errorf("request %d: %d %s", i, ans.status, ans.body)
						}
						if copyN == 0 {
							final = ans
							if strings.Contains(string(ans.body), "may or may not have been written") {
								unknown.Add(1)
							}
						} else if string(ans.body) != string(final.body) {
							t.Errorf("request %d: retry %d answered %s, first %s", i, copyN, ans.body, final.body)
						}
						break
					}
				}
			}
		}()
	}
	start := time.Now()
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)
	seen := map[float64]int{}
	for _, r := range peerScan(t, db, "events") {
		seen[r["row"].(map[string]any)["id"].(float64)]++
	}
	dups := 0
	for _, c := range seen {
		if c > 1 {
			dups++
		}
	}
	t.Logf("%d keyed requests (%d HTTP requests, %d retries, %d 409s, %d outcome_unknown answers) in %s; %d distinct rows, %d duplicated",
		n, sent.Load(), retries.Load(), conflicts.Load(), unknown.Load(), elapsed.Round(time.Millisecond), len(seen), dups)
	assert.Zero(t, dups, "no row written twice")
	assert.Len(t, seen, 2*n, "every request's rows landed (the dead attempts wrote theirs)")
}

// TestIdempotencyKeyLatency (IDEM_MEASURE=<requests>, not in CI): p50 and
// p90 of sequential one-row writes without a key, with a new key, and of
// replays, through one in-process instance (a rough, relative figure: the
// machine is shared).
func TestIdempotencyKeyLatency(t *testing.T) {
	n := 0
	if v := os.Getenv("IDEM_MEASURE"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	if n <= 0 {
		t.Skip("set IDEM_MEASURE=<requests> to run")
	}
	g := startIdemGateway(t, idemOptions{})
	db := gwName("gw_idem_lat")
	rec := idemLogTable(t, g, db, "events")
	run := gwName("m")
	measure := func(name, tag string, headers func(i int) []string) {
		var d []time.Duration
		for i := range n + 20 {
			body := idemBody(i, 1, tag)
			start := time.Now()
			ans := g.mustPost(rec, body, headers(i)...)
			el := time.Since(start)
			require.Equal(t, http.StatusOK, ans.status, "%s", ans.body)
			if i >= 20 { // warm-up
				d = append(d, el)
			}
		}
		slices.Sort(d)
		t.Logf("%-8s n=%d p50=%s p90=%s p99=%s", name, n, d[len(d)/2].Round(10*time.Microsecond),
			d[len(d)*9/10].Round(10*time.Microsecond), d[len(d)*99/100].Round(10*time.Microsecond))
	}
	measure("nokey", "nokey", func(int) []string { return nil })
	measure("key", "key", func(i int) []string { return []string{"Idempotency-Key", fmt.Sprintf("%s-%d", run, i)} })
	measure("replay", "key", func(i int) []string { return []string{"Idempotency-Key", fmt.Sprintf("%s-%d", run, i)} })
}
