//go:build faults

package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestBackpressureRealCluster drives a real Fluss 1.0 tablet server into
// cooperative KV backpressure (apache/fluss PR #3463) through the gateway's
// records route and checks what the gateway made of it. tests/faults/
// backpressure.sh (`make test-backpressure`) starts the cluster with options
// that make RocksDB L0 files pile up (a low kv.backpressure.l0-slowdown-
// trigger, tiny memtables, one compaction thread) and the gateway with its
// Prometheus endpoint (FLUSS_BP_METRICS_URL).
//
// Two phases write unique primary keys with large payloads into a
// one-bucket primary-key table: a light one (a few small requests per
// second) and a heavy one (many large requests
// in parallel, each worker waiting Retry-After after a 429, as a cooperative
// client does). It prints the requests, the entries per verdict, p50/p99
// latency of the requests that were in flight while the gateway received a
// pressure signal and of those that were not, the throttle time and the
// pressure signals the gateway counted, the 429s with their Retry-After
// values, and the read-back check with the peer client: no row reported
// success may be missing, none reported applied "no" (a 429 included) may
// be present, none applied twice; every answer by its deadline + lateSlack (250 ms); and
// the server must really have signalled pressure.
//
// Knobs: FLUSS_BP_DURATION (heavy phase, 40s), FLUSS_BP_WORKERS (8),
// FLUSS_BP_BATCH rows per request (400), FLUSS_BP_PAYLOAD bytes per row
// (2048), FLUSS_BP_DEADLINE (3s), FLUSS_BP_LIGHT (light phase, 8s).
func TestBackpressureRealCluster(t *testing.T) {
	e := needServers(t, 1)
	base := os.Getenv("FLUSS_FAULTS_GATEWAY_URL")
	metricsURL := os.Getenv("FLUSS_BP_METRICS_URL")
	if base == "" || metricsURL == "" {
		t.Skip("FLUSS_FAULTS_GATEWAY_URL and FLUSS_BP_METRICS_URL not set; run tests/faults/backpressure.sh")
	}
	heavyFor := envDur("FLUSS_BP_DURATION", 40*time.Second)
	lightFor := envDur("FLUSS_BP_LIGHT", 8*time.Second)
	workers := envInt("FLUSS_BP_WORKERS", 8)
	batch := envInt("FLUSS_BP_BATCH", 400)
	deadline := envDur("FLUSS_BP_DEADLINE", 3*time.Second)
	payloadBytes = envInt("FLUSS_BP_PAYLOAD", 2048)
	ignoreRetryAfter := os.Getenv("FLUSS_BP_IGNORE_RETRY_AFTER") == "1"
	defer func() { payloadBytes = 0 }()

	db := e.database(t, "bp")
	const table = "kv"
	e.createTableRF(t, db, table, true, 1, 1)
	s := newSink(t, e, writer.Options{})
	defer s.close()
	_, isHTTP := s.(*httpSink)
	require.True(t, isHTTP, "needs the gateway's records route")

	smp := &sampler{url: metricsURL}
	require.NoError(t, smp.sample(), "gateway metrics at %s", metricsURL)
	stopSampling := smp.run(200 * time.Millisecond)

	tl := newTally()
	var (
		mu   sync.Mutex
		reqs []reqRecord
		next atomic.Int64
	)
	drive := func(phase string, n, rows int, basePause, d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		var wg sync.WaitGroup
		for w := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var pause time.Duration
				for ctx.Err() == nil {
					ids := make([]int64, rows)
					for i := range ids {
						ids[i] = next.Add(1)
					}
					rctx, rcancel := context.WithTimeout(context.Background(), deadline)
					start := time.Now()
					vs, err := s.write(rctx, db, table, domain.OpUpsert, ids, w)
					end := time.Now()
					rcancel()
					tl.record(ids, vs, err, end.Sub(start), deadline)
					rr := reqRecord{phase: phase, start: start, end: end, status: 200}
					var he *httpError
					if errors.As(err, &he) {
						rr.status, rr.retryAfter = he.status, he.retryAfter
					} else if err != nil {
						rr.status = -1
					}
					mu.Lock()
					reqs = append(reqs, rr)
					mu.Unlock()
					// A cooperative client: after a 429 it waits Retry-After
					// (FLUSS_BP_IGNORE_RETRY_AFTER=1: it does not).
					if n, err := strconv.Atoi(rr.retryAfter); err == nil && n > 0 && !ignoreRetryAfter {
						pause = time.Duration(n) * time.Second
					} else {
						pause = basePause
					}
					if pause > 0 {
						select {
						case <-ctx.Done():
						case <-time.After(pause):
						}
					}
				}
			}()
		}
		wg.Wait()
	}
	t0 := time.Now()
	drive("light", 1, 20, 200*time.Millisecond, lightFor)
	lightEnd := smp.last()
	drive("heavy", workers, batch, 0, heavyFor)
	stopSampling()
	took := time.Since(t0)

	scan := e.scanIDs(t, db, table)
	r := check(tl, scan)

	// Classify the requests: "with pressure" when a pressure signal
	// (PutKv pressure > 0 or a code 72) was counted while in flight.
	var with, without []time.Duration
	statuses := map[int]int{}
	retryAfter := map[string]int{}
	for _, rr := range reqs {
		statuses[rr.status]++
		if rr.status == http.StatusTooManyRequests {
			retryAfter[rr.retryAfter+"s"]++
		}
		if smp.signalsBetween(rr.start, rr.end.Add(smp.every)) > 0 {
			with = append(with, rr.end.Sub(rr.start))
		} else {
			without = append(without, rr.end.Sub(rr.start))
		}
	}
	first, final := smp.first(), smp.last()
	signals := final.pressureCount - first.pressureCount
	lightSignals := lightEnd.pressureCount - first.pressureCount
	throttle := time.Duration((final.throttleSeconds - first.throttleSeconds) * float64(time.Second))
	rejections := final.retries72 - first.retries72

	report := []string{
		fmt.Sprintf("backpressure run on %s: %s (light %s + heavy %s: %d workers x %d rows x %d B, deadline %s)",
			e.bootstrap, took.Round(time.Second), lightFor, heavyFor, workers, batch, payloadBytes, deadline),
		fmt.Sprintf("requests: %d (HTTP status: %s)", len(reqs), fmtIntCounts(statuses)),
		fmt.Sprintf("entries: %d success, applied no: %s; applied unknown: %s; whole-request errors (rows): %s; broken: %s",
			tl.success, fmtCounts(tl.no), fmtCounts(tl.unknown), fmtCounts(tl.reqErrs), fmtCounts(tl.broken)),
		fmt.Sprintf("latency without pressure: %d requests, p50 %s, p99 %s", len(without), pct(without, 0.5), pct(without, 0.99)),
		fmt.Sprintf("latency with pressure:    %d requests, p50 %s, p99 %s", len(with), pct(with, 0.5), pct(with, 0.99)),
		fmt.Sprintf("pressure signals counted by the gateway: %.0f (light phase %.0f; mean pressure %.3f; by bucket %s); code 72 batch retries: %.0f",
			signals, lightSignals, final.meanPressure(first), final.pressureBuckets(first), rejections),
		fmt.Sprintf("total throttle time: %s", throttle.Round(time.Millisecond)),
		fmt.Sprintf("429s: %d, Retry-After values: %s", statuses[http.StatusTooManyRequests], fmtCounts(retryAfter)),
		fmt.Sprintf("answers later than deadline + %s: %d (max over deadline %s)", lateSlack, tl.late, tl.maxOver.Round(time.Millisecond)),
		fmt.Sprintf("peer read-back (%d changelog records): lost (success, absent) %d, phantom (applied no, present) %d, applied twice %d, never written %d; unknown landed %d of %d",
			scan.records, len(r.missingSuccess), len(r.presentNo), len(r.duplicates), len(r.strangers), r.unknownLanded, r.unknownTotal),
	}
	for _, l := range report {
		t.Log("BP: " + l)
	}
	for k, m := range tl.msgs {
		t.Logf("first message of %s: %s", k, truncate(m, 400))
	}
	assert.Empty(t, r.missingSuccess, "rows reported success but absent: %v", head(r.missingSuccess, 10))
	assert.Empty(t, r.presentNo, "rows reported applied no but present: %v", head(r.presentNo, 10))
	assert.Empty(t, r.duplicates, "rows applied twice: %v", head(r.duplicates, 10))
	assert.Empty(t, r.strangers, "rows never written: %v", head(r.strangers, 10))
	assert.Zero(t, r.broken, "broken verdicts: %s", fmtCounts(tl.broken))
	assert.Zero(t, tl.late, "answers later than deadline + %s", lateSlack)
	assert.Positive(t, signals, "the tablet server never signalled pressure: the suite did not test backpressure")
	assert.Positive(t, throttle, "the writer never throttled")
	for v := range retryAfter {
		n, err := strconv.Atoi(strings.TrimSuffix(v, "s"))
		assert.True(t, err == nil && n >= 1 && n <= 3, "Retry-After %q: whole seconds within the 3 s max throttle", v)
	}
}

type reqRecord struct {
	phase      string
	start, end time.Time
	status     int
	retryAfter string
}

func pct(l []time.Duration, p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	l = append([]time.Duration(nil), l...)
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	return l[min(len(l)-1, int(float64(len(l))*p))].Round(time.Millisecond)
}

func fmtIntCounts(m map[int]int) string {
	s := make(map[string]int, len(m))
	for k, v := range m {
		s[strconv.Itoa(k)] = v
	}
	return fmtCounts(s)
}

// sampler polls the gateway's Prometheus endpoint for the writer's KV
// backpressure families (adapters/telemetry): the pressure histogram
// fluss_client_writer_kv_pressure, the throttle counter
// fluss_client_writer_kv_throttle_seconds_total and the retries by code.
type sampler struct {
	url   string
	every time.Duration

	mu      sync.Mutex
	samples []metricSample
}

type metricSample struct {
	at              time.Time
	pressureCount   float64
	pressureSum     float64
	buckets         map[string]float64 // le -> cumulative count
	throttleSeconds float64
	retries72       float64
}

func (s *sampler) sample() error {
	resp, err := http.Get(s.url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("metrics: http %d", resp.StatusCode)
	}
	m := metricSample{at: time.Now(), buckets: map[string]float64{}}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		name, labels := line[:sp], ""
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name, labels = name[:i], name[i:]
		}
		switch name {
		case "fluss_client_writer_kv_pressure_count":
			m.pressureCount += v
		case "fluss_client_writer_kv_pressure_sum":
			m.pressureSum += v
		case "fluss_client_writer_kv_pressure_bucket":
			if i := strings.Index(labels, `le="`); i >= 0 {
				le := labels[i+4:]
				m.buckets[le[:strings.IndexByte(le, '"')]] += v
			}
		case "fluss_client_writer_kv_throttle_seconds_total":
			m.throttleSeconds += v
		case "fluss_client_writer_retries_total":
			if strings.Contains(labels, `code="storage_backpressure"`) {
				m.retries72 += v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	s.samples = append(s.samples, m)
	s.mu.Unlock()
	return nil
}

// run samples every d until the returned function is called (which takes a
// last sample).
func (s *sampler) run(d time.Duration) func() {
	s.every = d
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				_ = s.sample()
				return
			case <-tick.C:
				_ = s.sample()
			}
		}
	}()
	return func() { close(stop); <-done }
}

func (s *sampler) first() metricSample { s.mu.Lock(); defer s.mu.Unlock(); return s.samples[0] }
func (s *sampler) last() metricSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples[len(s.samples)-1]
}

// signalsBetween returns the pressure signals counted between the last
// sample at or before from and the first sample at or after to.
func (s *sampler) signalsBetween(from, to time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	lo, hi := s.samples[0].pressureCount, s.samples[len(s.samples)-1].pressureCount
	for _, m := range s.samples {
		if !m.at.After(from) {
			lo = m.pressureCount
		}
	}
	for i := len(s.samples) - 1; i >= 0; i-- {
		if !s.samples[i].at.Before(to) {
			hi = s.samples[i].pressureCount
		}
	}
	return hi - lo
}

func (m metricSample) meanPressure(since metricSample) float64 {
	n := m.pressureCount - since.pressureCount
	if n <= 0 {
		return 0
	}
	return (m.pressureSum - since.pressureSum) / n
}

// pressureBuckets renders the signals per pressure range of the histogram.
func (m metricSample) pressureBuckets(since metricSample) string {
	les := make([]string, 0, len(m.buckets))
	for le := range m.buckets {
		les = append(les, le)
	}
	sort.Slice(les, func(i, j int) bool { return leValue(les[i]) < leValue(les[j]) })
	var b strings.Builder
	prev := 0.0
	for _, le := range les {
		c := m.buckets[le] - since.buckets[le]
		if c-prev > 0 {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "<=%s: %.0f", le, c-prev)
		}
		prev = c
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

func leValue(le string) float64 {
	if le == "+Inf" {
		return 1e18
	}
	v, _ := strconv.ParseFloat(le, 64)
	return v
}
