//go:build faults

package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// verdict is what a write reported for one entry.
type verdict struct {
	ok        bool
	code      string
	applied   domain.Applied
	retryable bool
	msg       string
}

// sink writes rows {id, worker, payload} into one table and returns one
// verdict per row, in order. A non-nil error means the request as a whole
// was refused before any row was attempted (the writer's contract).
type sink interface {
	write(ctx context.Context, db, table string, op domain.WriteOp, ids []int64, worker int) ([]verdict, error)
	close()
	name() string
	diag() string
}

// newSink returns the HTTP sink when FLUSS_FAULTS_GATEWAY_URL is set (a
// gateway started by run.sh with the records route), else the writer port of
// adapters/fluss.Open.
func newSink(t *testing.T, e *faultEnv, opts writer.Options) sink {
	t.Helper()
	if u := os.Getenv("FLUSS_FAULTS_GATEWAY_URL"); u != "" {
		return &httpSink{base: strings.TrimRight(u, "/"), cluster: envOr("FLUSS_FAULTS_GATEWAY_CLUSTER", "default"),
			client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	}
	m := &retryCounter{codes: map[string]int{}}
	if opts.Metrics == nil {
		opts.Metrics = m
	}
	cl, err := fluss.Open(context.Background(), fluss.Config{
		ID: "faults", BootstrapServers: []string{e.bootstrap}, RequestTimeout: 30 * time.Second, Writer: opts,
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	sess, err := cl.Session(context.Background(), domain.Principal{Name: "faults"})
	require.NoError(t, err)
	return &writerSink{cl: cl, w: sess.Writer(), m: m}
}

// retryCounter is the writer's Metrics hook: batches retried by code.
type retryCounter struct {
	mu    sync.Mutex
	codes map[string]int
}

func (*retryCounter) BatchesSent(domain.TablePath, int, int, int)       {}
func (*retryCounter) EntriesDone(domain.TablePath, int, map[string]int) {}
func (*retryCounter) BufferUsage(int64, int64)                          {}
func (m *retryCounter) Retried(_ domain.TablePath, n int, code string) {
	m.mu.Lock()
	m.codes[code] += n
	m.mu.Unlock()
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// payloadBytes, when > 0, pads every payload to that many bytes (the
// backpressure test fills RocksDB memtables with it).
var payloadBytes int

func payload(id int64) []byte {
	p := []byte("payload-" + strconv.FormatInt(id, 10) + "-0123456789abcdef0123456789abcdef")
	for len(p) < payloadBytes {
		p = append(p, "-0123456789abcdefghijklmnopqrstuvwxyz"[:min(37, payloadBytes-len(p))]...)
	}
	return p
}

type writerSink struct {
	cl *fluss.Cluster
	w  domain.RowWriter
	m  *retryCounter
}

func (s *writerSink) diag() string {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return "writer batches retried by code: " + fmtCounts(s.m.codes)
}

func (s *writerSink) name() string {
	return "writer port (adapters/fluss.Open(...).Session().Writer())"
}

func (s *writerSink) write(ctx context.Context, db, table string, op domain.WriteOp, ids []int64, worker int) ([]verdict, error) {
	wb := &domain.WriteBatch{Table: domain.TablePath{Database: db, Table: table}}
	for _, id := range ids {
		wb.Entries = append(wb.Entries, domain.WriteEntry{Op: op, Row: []domain.Datum{
			{I64: id}, {I64: int64(worker)}, {Bytes: payload(id)},
		}})
	}
	res, err := s.w.Write(ctx, wb)
	if err != nil {
		return nil, err
	}
	if len(res) != len(ids) {
		return nil, fmt.Errorf("BUG: %d results for %d entries", len(res), len(ids))
	}
	out := make([]verdict, len(res))
	for i, r := range res {
		out[i] = verdict{ok: r.OK(), code: r.Code, applied: r.Applied, retryable: r.Retryable, msg: r.Message}
	}
	return out, nil
}

func (s *writerSink) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_ = s.cl.Close(ctx)
}

// httpSink posts to the gateway's records route:
// POST /v1/clusters/{c}/databases/{db}/tables/{t}/records
// {"entries":[{"id","upsert"|"append":{...}}]}.
type httpSink struct {
	base, cluster string
	client        *http.Client
}

func (s *httpSink) name() string { return "gateway HTTP records route at " + s.base }

func (s *httpSink) write(ctx context.Context, db, table string, op domain.WriteOp, ids []int64, worker int) ([]verdict, error) {
	opName := "upsert"
	if op == domain.OpAppend {
		opName = "append"
	}
	var body bytes.Buffer
	body.WriteString(`{"entries":[`)
	for i, id := range ids {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"id":"%d","%s":{"id":%d,"worker":%d,"payload":%q}}`, id, opName, id, worker, payload(id))
	}
	body.WriteString(`]}`)
	url := fmt.Sprintf("%s/v1/clusters/%s/databases/%s/tables/%s/records", s.base, s.cluster, db, table)
	// The deadline travels in X-Fluss-Request-Timeout; the gateway answers
	// by then. The client waits 3 s longer before it gives up on an answer.
	timeout := 30 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	return postRecords(s.client, url, body.Bytes(), table, timeout, ids)
}

// postRecords posts body (the entries of rows ids, each entry's id the row
// id) to the records route at url with the deadline in
// X-Fluss-Request-Timeout, the client waiting 3 s longer before it gives up
// on an answer, and returns one verdict per row, in order: every row
// `http_no_response` (applied unknown) when no answer came, a BUG_ code for
// a row with no verdict or two. A whole-request error (nothing was written,
// the API's contract: e.g. 429 admission refused or throttled by KV
// backpressure, 504 deadline before submission) is an *httpError. Answers
// later than the deadline are noted in lateAnswers.
func postRecords(client *http.Client, url string, body []byte, table string, timeout time.Duration, ids []int64) ([]verdict, error) {
	hctx, cancel := context.WithTimeout(context.Background(), timeout+3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(hctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Fluss-Request-Timeout", strconv.FormatInt(max(timeout.Milliseconds(), 1), 10))
	sent := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		// No answer: the gateway may have written any of them.
		out := make([]verdict, len(ids))
		for i := range out {
			out[i] = verdict{code: "http_no_response", applied: domain.AppliedUnknown}
		}
		return out, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	lateAnswers.noteIfLate(table, sent, timeout, resp, raw)
	if resp.StatusCode != http.StatusOK {
		return nil, &httpError{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: truncate(string(raw), 300)}
	}
	var r struct {
		Successes []struct {
			ID string `json:"id"`
		} `json:"successes"`
		Failures []struct {
			ID        string `json:"id"`
			ErrorCode string `json:"error_code"`
			Retryable bool   `json:"retryable"`
			Applied   string `json:"applied"`
			Message   string `json:"message"`
		} `json:"failures"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("http 200 with an unreadable body: %v", err)
	}
	byID := make(map[string]verdict, len(ids))
	for _, s := range r.Successes {
		if _, dup := byID[s.ID]; dup {
			byID[s.ID] = verdict{code: "BUG_two_verdicts"}
			continue
		}
		byID[s.ID] = verdict{ok: true}
	}
	for _, f := range r.Failures {
		if _, dup := byID[f.ID]; dup {
			byID[f.ID] = verdict{code: "BUG_two_verdicts"}
			continue
		}
		byID[f.ID] = verdict{code: f.ErrorCode, applied: domain.Applied(f.Applied), retryable: f.Retryable, msg: f.Message}
	}
	out := make([]verdict, len(ids))
	for i, id := range ids {
		v, ok := byID[strconv.FormatInt(id, 10)]
		if !ok {
			v = verdict{code: "BUG_no_verdict"}
		}
		out[i] = v
	}
	return out, nil
}

// lateAnswers keeps what the gateway answered when an answer came later
// than its deadline + lateSlack: the status, the request id (to find its
// access log line in the gateway's log), the Server-Timing (where the
// handler's time went) and the verdict codes, so that a run shows where
// lateness comes from. runFaults reports them.
var lateAnswers lateLog

type lateAnswer struct {
	at             time.Time
	table          string
	took, deadline time.Duration
	status         int
	requestID      string
	serverTiming   string
	outcome        string
}

type lateLog struct {
	mu   sync.Mutex
	list []lateAnswer // the first maxLateKept
	n    int
}

const maxLateKept = 40

// noteIfLate notes the answer resp (body raw) to a request to table sent at
// sent with a deadline of deadline, when it came later than lateSlack past it.
func (l *lateLog) noteIfLate(table string, sent time.Time, deadline time.Duration, resp *http.Response, raw []byte) {
	took := time.Since(sent)
	if took <= deadline+lateSlack {
		return
	}
	outcome := truncate(string(raw), 200)
	if resp.StatusCode == http.StatusOK {
		var r struct {
			Successes []json.RawMessage `json:"successes"`
			Failures  []struct {
				ErrorCode string `json:"error_code"`
				Applied   string `json:"applied"`
			} `json:"failures"`
		}
		if json.Unmarshal(raw, &r) == nil {
			codes := map[string]int{}
			for _, f := range r.Failures {
				codes[f.ErrorCode+"/"+f.Applied]++
			}
			outcome = fmt.Sprintf("successes=%d failures: %s", len(r.Successes), fmtCounts(codes))
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if len(l.list) < maxLateKept {
		l.list = append(l.list, lateAnswer{at: sent, table: table, took: took, deadline: deadline, status: resp.StatusCode,
			requestID: resp.Header.Get("X-Request-Id"), serverTiming: resp.Header.Get("Server-Timing"), outcome: outcome})
	}
}

// report logs the late answers noted so far (times relative to start) and
// forgets them.
func (l *lateLog) report(t *testing.T, start time.Time) {
	l.mu.Lock()
	list, n := l.list, l.n
	l.list, l.n = nil, 0
	l.mu.Unlock()
	if n == 0 {
		return
	}
	t.Logf("answers later than deadline + %s: %d (the first %d):", lateSlack, n, len(list))
	for _, a := range list {
		t.Logf("  sent t+%.1fs %s: %s after a %s deadline (+%s): %d %s; request id %s; Server-Timing: %s",
			a.at.Sub(start).Seconds(), a.table, a.took.Round(time.Millisecond), a.deadline.Round(time.Millisecond),
			(a.took - a.deadline).Round(time.Millisecond), a.status, a.outcome, a.requestID, a.serverTiming)
	}
}

// httpError is a whole-request HTTP error answer.
type httpError struct {
	status     int
	retryAfter string // the Retry-After header, "" when absent
	body       string
}

func (e *httpError) Error() string { return fmt.Sprintf("http %d: %s", e.status, e.body) }

func (s *httpSink) close() { s.client.CloseIdleConnections() }

func (s *httpSink) diag() string { return "" }

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// ---------------------------------------------------------------------------
// Tally
// ---------------------------------------------------------------------------

// class of a verdict for the read-back checks.
type class uint8

const (
	clsSuccess class = iota + 1
	clsNo            // applied "no" (or the request refused as a whole)
	clsUnknown
	clsBroken // no verdict, two verdicts, or a failure without `applied`
)

type tally struct {
	mu       sync.Mutex
	cls      map[int64]class
	doneAt   map[int64]float32 // seconds after start when the verdict came
	start    time.Time
	success  int
	no       map[string]int // by code
	unknown  map[string]int
	broken   map[string]int
	reqErrs  map[string]int
	requests int
	msgs     map[string]string // first message per applied/code
	late     int               // writes that returned more than lateSlack after their deadline
	maxOver  time.Duration     // largest return time past the deadline
	lat      []time.Duration
}

func newTally() *tally {
	return &tally{cls: make(map[int64]class), doneAt: make(map[int64]float32), start: time.Now(), no: map[string]int{}, unknown: map[string]int{},
		broken: map[string]int{}, reqErrs: map[string]int{}, msgs: map[string]string{}}
}

func (t *tally) record(ids []int64, vs []verdict, err error, took, deadline time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.requests++
	t.lat = append(t.lat, took)
	if over := took - deadline; over > t.maxOver {
		t.maxOver = over
	}
	if took > deadline+lateSlack {
		t.late++
	}
	if err != nil {
		key := err.Error()
		if de := domain.AsError(err); de != nil {
			key = de.Code()
		} else if strings.HasPrefix(key, "http ") {
			key = strings.SplitN(key, ":", 2)[0]
		}
		t.reqErrs[key] += len(ids)
		if t.msgs["request/"+key] == "" {
			t.msgs["request/"+key] = err.Error()
		}
		for _, id := range ids {
			t.set(id, clsNo)
		}
		return
	}
	for i, id := range ids {
		v := vs[i]
		if k := string(v.applied) + "/" + v.code; !v.ok && t.msgs[k] == "" {
			t.msgs[k] = v.msg
		}
		switch {
		case v.ok:
			t.success++
			t.set(id, clsSuccess)
		case strings.HasPrefix(v.code, "BUG"):
			t.broken[v.code]++
			t.set(id, clsBroken)
		case v.applied == domain.AppliedNo:
			t.no[v.code]++
			t.set(id, clsNo)
		case v.applied == domain.AppliedUnknown:
			t.unknown[v.code]++
			t.set(id, clsUnknown)
		default:
			t.broken["failure_without_applied:"+v.code]++
			t.set(id, clsBroken)
		}
	}
}

// unused reports whether no id of ids has a verdict yet: a test that writes
// an id twice cannot tell its two writes apart in the read-back (set counts
// such ids as broken "id_written_twice_by_test").
func (t *tally) unused(ids []int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		if _, ok := t.cls[id]; ok {
			return false
		}
	}
	return true
}

func (t *tally) set(id int64, c class) {
	if _, dup := t.cls[id]; dup {
		t.broken["id_written_twice_by_test"]++
	}
	t.cls[id] = c
	t.doneAt[id] = float32(time.Since(t.start).Seconds())
}

func fmtCounts(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	return b.String()
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func (t *tally) percentile(p float64) time.Duration {
	if len(t.lat) == 0 {
		return 0
	}
	l := append([]time.Duration(nil), t.lat...)
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	return l[min(len(l)-1, int(float64(len(l))*p))]
}

// ---------------------------------------------------------------------------
// Workload
// ---------------------------------------------------------------------------

type workload struct {
	db, table string
	op        domain.WriteOp
	workers   int
	batch     int
	rate      int // target rows per second over all workers
	deadline  time.Duration
}

// run writes until ctx ends; ids are unique (1, 2, 3, ...).
func (w workload) run(ctx context.Context, s sink, tl *tally) {
	var next atomic.Int64
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) * float64(w.batch*w.workers) / float64(w.rate))
	for worker := range w.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(interval)
			defer tick.Stop()
			// Spread the workers over the interval.
			time.Sleep(interval * time.Duration(worker) / time.Duration(w.workers))
			for ctx.Err() == nil {
				ids := make([]int64, w.batch)
				for i := range ids {
					ids[i] = next.Add(1)
				}
				rctx, cancel := context.WithTimeout(context.Background(), w.deadline)
				start := time.Now()
				vs, err := s.write(rctx, w.db, w.table, w.op, ids, worker)
				took := time.Since(start)
				cancel()
				tl.record(ids, vs, err, took, w.deadline)
				select {
				case <-ctx.Done():
				case <-tick.C:
				}
			}
		}()
	}
	wg.Wait()
}

// ---------------------------------------------------------------------------
// Read-back check
// ---------------------------------------------------------------------------

type checkResult struct {
	missingSuccess []int64 // reported success, absent
	presentNo      []int64 // reported applied "no", present
	unknownLanded  int
	unknownTotal   int
	duplicates     []int64 // applied more than once
	strangers      []int64 // present, never written by the test
	broken         int
}

func check(tl *tally, s scanned) checkResult {
	var r checkResult
	for id, c := range tl.cls {
		n := s.inserts[id]
		switch c {
		case clsSuccess:
			if n == 0 {
				r.missingSuccess = append(r.missingSuccess, id)
			}
		case clsNo:
			if n > 0 {
				r.presentNo = append(r.presentNo, id)
			}
		case clsUnknown:
			r.unknownTotal++
			if n > 0 {
				r.unknownLanded++
			}
		case clsBroken:
			r.broken++
		}
		if n > 1 {
			r.duplicates = append(r.duplicates, id)
		}
	}
	for id := range s.inserts {
		if _, ok := tl.cls[id]; !ok {
			r.strangers = append(r.strangers, id)
		}
	}
	for _, l := range [][]int64{r.missingSuccess, r.presentNo, r.duplicates, r.strangers} {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	}
	return r
}

func head(ids []int64, n int) []int64 {
	if len(ids) > n {
		return ids[:n]
	}
	return ids
}
