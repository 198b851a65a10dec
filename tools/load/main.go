// Command load drives the gateway's records route on loopback and reports
// throughput, latency, status codes, Retry-After values and the gateway's
// resident memory over time. tests/load/run.sh (make load) runs it.
//
// Two phases:
//
//  1. calibrate (closed loop): -concurrency workers send back to back for
//     -calibrate; the sustainable rate is the rate of requests answered 200
//     with every entry successful.
//  2. overload (open loop): requests are started at -factor × that rate for
//     -duration, whatever the answers (at most -max-inflight at a time; a
//     request that would exceed it is counted as "skipped"), so the gateway
//     sees more than it can serve and must shed load (429 + Retry-After)
//     while answering what it admits within its deadline.
//
// Rows are {"id": n, "worker": w, "payload": "..."} with unique ids, written
// as upserts (primary-key table) or appends (-op append).
//
//	go run ./tools/load -url http://127.0.0.1:28081 -db load -table t -pid $(pgrep -f fluss-gateway)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/tools/internal/benchkit"
)

type config struct {
	url, cluster, db, table, op string
	rows                        int
	concurrency                 int
	calibrate, duration         time.Duration
	factor                      float64
	rate                        float64 // fixed rate (skips calibration)
	timeout                     time.Duration
	maxInflight                 int
	pid                         int
	jsonOut                     string
	mode, schema                string
}

func main() {
	var c config
	benchkit.Target{URL: &c.url, Cluster: &c.cluster, DB: &c.db, PID: &c.pid}.Register(flag.CommandLine,
		"load", "database", "gateway pid: sample its VmRSS every second")
	flag.StringVar(&c.table, "table", "t", "table: id BIGINT (primary key for upserts), worker INT, payload STRING")
	flag.StringVar(&c.op, "op", "upsert", "upsert or append")
	flag.IntVar(&c.rows, "rows", 100, "entries per request")
	flag.IntVar(&c.concurrency, "concurrency", 32, "closed-loop workers of the calibration phase")
	flag.DurationVar(&c.calibrate, "calibrate", 15*time.Second, "calibration phase length (0 with -rate skips it)")
	flag.DurationVar(&c.duration, "duration", 60*time.Second, "overload phase length")
	flag.Float64Var(&c.factor, "factor", 2, "overload rate as a multiple of the calibrated rate")
	flag.Float64Var(&c.rate, "rate", 0, "overload rate in requests/s (instead of factor × calibrated)")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Second, "per-request deadline sent as X-Fluss-Request-Timeout")
	flag.IntVar(&c.maxInflight, "max-inflight", 4096, "open-loop bound on requests in flight")
	flag.StringVar(&c.jsonOut, "json", "", "write the report as JSON to this file too")
	flag.StringVar(&c.mode, "mode", "overload", "overload (calibrate + open-loop overload), bench (fixed row count, see bench.go) or bench-lookup (lookup.go)")
	flag.StringVar(&c.schema, "schema", "", "bench mode: row schema (bench10: the 10-column table of make bench-native)")
	var bc benchConfig
	flag.IntVar(&bc.warmupRows, "warmup-rows", 20_000, "bench mode: rows written before the measured part")
	flag.IntVar(&bc.totalRows, "total-rows", 200_000, "bench mode: rows in the measured part")
	flag.StringVar(&bc.flussPids, "fluss-pids", "", "bench mode: comma-separated pids of the Fluss processes whose CPU is reported")
	flag.IntVar(&bc.repeat, "repeat", 1, "bench mode: send the measured requests this many times (profiling runs)")
	flag.StringVar(&bc.pprofURL, "pprof", "", "bench and bench-lookup modes: base URL of the gateway's pprof listener; CPU and allocation profiles of the measured part")
	flag.StringVar(&bc.pprofOut, "pprof-out", "gateway-", "bench mode: file prefix of the profiles (<prefix>profile.pprof, <prefix>allocs.pprof)")
	flag.DurationVar(&bc.pprofFor, "pprof-seconds", 6*time.Second, "bench mode: profile length from the start of the measured part")
	flag.StringVar(&bc.body, "body", "json", "bench mode: request bodies: json (entries documents), ndjson (the same entries one per line, -rows lines a request), arrow (Arrow IPC streams, -op append) or arrow-zstd (Arrow IPC streams with ZSTD-compressed record batches, -op append)")
	var lc lookupConfig
	flag.IntVar(&lc.keysPerRequest, "keys", 128, "bench-lookup mode: keys (or prefixes) per request")
	flag.IntVar(&lc.totalKeys, "total-keys", 200_000, "bench-lookup mode: keys looked up in the measured part")
	flag.IntVar(&lc.warmupKeys, "warmup-keys", 20_000, "bench-lookup mode: keys looked up before the measured part")
	flag.Int64Var(&lc.tableRows, "table-rows", 0, "bench-lookup mode: the table holds ids 0..table-rows-1")
	flag.BoolVar(&lc.prefix, "prefix", false, "bench-lookup mode: prefix lookups by k (a pfx table) instead of primary-key lookups")
	selfProfile := flag.String("cpuprofile", "", "write the load generator's own CPU profile (the whole run) to this file")
	flag.Parse()
	if *selfProfile != "" {
		f, err := os.Create(*selfProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "load: -cpuprofile:", err)
			os.Exit(1)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if err := dispatch(c, bc, lc); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func dispatch(c config, bc benchConfig, lc lookupConfig) error {
	var err error
	switch c.mode {
	case "bench":
		err = runBench(c, bc)
	case "bench-lookup":
		err = runLookupBench(c, bc, lc)
	default:
		err = run(c)
	}
	return err
}

// stats collects the outcome of one phase.
type stats struct {
	mu          sync.Mutex
	status      map[string]int // "200", "429", "503", "client_timeout", ...
	retryAfter  map[string]int // Retry-After header values of non-200 answers
	lat200      []time.Duration
	latAll      []time.Duration
	okRequests  int // 200 with every entry successful
	entriesOK   int
	entriesFail map[string]int // by error_code/applied
	skipped     int
	started     time.Time
	ended       time.Time
}

func newStats() *stats {
	return &stats{status: map[string]int{}, retryAfter: map[string]int{}, entriesFail: map[string]int{}}
}

type result struct {
	status     string
	retryAfter string
	lat        time.Duration
	okEntries  int
	failures   map[string]int
}

func (s *stats) add(r result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status[r.status]++
	s.latAll = append(s.latAll, r.lat)
	if r.status == "200" {
		s.lat200 = append(s.lat200, r.lat)
		s.entriesOK += r.okEntries
		if len(r.failures) == 0 {
			s.okRequests++
		}
		for k, v := range r.failures {
			s.entriesFail[k] += v
		}
	} else if r.retryAfter != "" {
		s.retryAfter[r.retryAfter]++
	}
}

type client struct {
	c       config
	http    *http.Client
	nextID  atomic.Int64
	urlPath string
	// contentType of the bench mode's bodies.
	contentType string
}

func (cl *client) body(worker int) []byte {
	var b bytes.Buffer
	b.Grow(cl.c.rows * 96)
	b.WriteString(`{"entries":[`)
	for i := range cl.c.rows {
		id := cl.nextID.Add(1)
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"`)
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteString(`","`)
		b.WriteString(cl.c.op)
		b.WriteString(`":{"id":`)
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteString(`,"worker":`)
		b.WriteString(strconv.Itoa(worker))
		b.WriteString(`,"payload":"payload-`)
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteString(`-0123456789abcdef0123456789abcdef"}}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func (cl *client) do(worker int) result {
	body := cl.body(worker)
	ctx, cancel := context.WithTimeout(context.Background(), cl.c.timeout+5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cl.urlPath, bytes.NewReader(body))
	if err != nil {
		return result{status: "client_error"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Fluss-Request-Timeout", strconv.FormatInt(cl.c.timeout.Milliseconds(), 10))
	start := time.Now()
	resp, err := cl.http.Do(req)
	if err != nil {
		r := result{status: "client_error", lat: time.Since(start)}
		if ctx.Err() != nil {
			r.status = "client_timeout"
		}
		return r
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r := result{status: strconv.Itoa(resp.StatusCode), lat: time.Since(start), retryAfter: resp.Header.Get("Retry-After")}
	if resp.StatusCode == http.StatusOK {
		var wr struct {
			SuccessCount int `json:"success_count"`
			Failures     []struct {
				ErrorCode string `json:"error_code"`
				Applied   string `json:"applied"`
			} `json:"failures"`
		}
		if json.Unmarshal(raw, &wr) == nil {
			r.okEntries = wr.SuccessCount
			for _, f := range wr.Failures {
				if r.failures == nil {
					r.failures = map[string]int{}
				}
				r.failures[f.ErrorCode+"/"+f.Applied]++
			}
		}
	}
	return r
}

// unsolicited counts the net/http client's "Unsolicited response received on
// idle HTTP channel" log lines: answers the server wrote on a keep-alive
// connection that carried no request.
type unsolicited struct {
	mu    sync.Mutex
	n     int
	first string
}

func (u *unsolicited) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if bytes.Contains(p, []byte("Unsolicited response")) {
		u.n++
		if u.first == "" {
			u.first = strings.TrimSpace(string(p))
		}
		return len(p), nil
	}
	return os.Stderr.Write(p)
}

func run(c config) error {
	unsol := &unsolicited{}
	log.SetOutput(unsol)
	tr := &http.Transport{MaxIdleConns: c.maxInflight, MaxIdleConnsPerHost: c.maxInflight, IdleConnTimeout: 30 * time.Second}
	cl := &client{c: c, http: &http.Client{Transport: tr},
		urlPath: fmt.Sprintf("%s/v1/clusters/%s/databases/%s/tables/%s/records", strings.TrimRight(c.url, "/"), c.cluster, c.db, c.table)}

	// Probe: one request must be answered 200.
	if r := cl.do(0); r.status != "200" {
		return fmt.Errorf("probe request answered %s (is the records route there, does %s.%s exist?)", r.status, c.db, c.table)
	}

	rss := startRSS(c.pid)
	report := map[string]any{"config": map[string]any{
		"rows_per_request": c.rows, "concurrency": c.concurrency, "factor": c.factor,
		"deadline": c.timeout.String(), "duration": c.duration.String(), "op": c.op,
	}}

	rate := c.rate
	if rate <= 0 {
		fmt.Printf("== calibration: %d closed-loop workers for %s, %d rows/request, deadline %s\n", c.concurrency, c.calibrate, c.rows, c.timeout)
		cal := closedLoop(cl, c.concurrency, c.calibrate)
		printStats("calibration", cal, c.rows)
		report["calibration"] = statsJSON(cal, c.rows)
		sustainable := float64(cal.okRequests) / cal.ended.Sub(cal.started).Seconds()
		if sustainable <= 0 {
			return fmt.Errorf("calibration: no fully successful request")
		}
		rate = c.factor * sustainable
		fmt.Printf("sustainable: %.1f req/s (%.0f rows/s) fully successful; overload at %.1f× = %.1f req/s\n",
			sustainable, sustainable*float64(c.rows), c.factor, rate)
		report["sustainable_req_per_s"] = sustainable
	}
	report["overload_rate_req_per_s"] = rate

	fmt.Printf("== overload: open loop at %.1f req/s for %s (max %d in flight)\n", rate, c.duration, c.maxInflight)
	rss.mark("overload start")
	ov := openLoop(cl, rate, c.duration, c.maxInflight)
	rss.mark("overload end")
	printStats("overload", ov, c.rows)
	report["overload"] = statsJSON(ov, c.rows)

	if unsol.n > 0 {
		fmt.Printf("  unsolicited responses on idle keep-alive connections: %d, first: %s\n", unsol.n, truncate(unsol.first, 400))
		report["unsolicited_responses"] = unsol.n
	}

	// Idle for a while: memory after the load.
	time.Sleep(15 * time.Second)
	samples := rss.stop()
	if c.pid > 0 {
		printRSS(samples)
		report["rss_kb"] = samples
	}
	if c.jsonOut != "" {
		b, _ := json.MarshalIndent(report, "", "  ")
		if err := os.WriteFile(c.jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func closedLoop(cl *client, workers int, d time.Duration) *stats {
	st := newStats()
	st.started = time.Now()
	end := st.started.Add(d)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				st.add(cl.do(w))
			}
		}()
	}
	wg.Wait()
	st.ended = time.Now()
	return st
}

func openLoop(cl *client, rate float64, d time.Duration, maxInflight int) *stats {
	st := newStats()
	st.started = time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	sem := make(chan struct{}, maxInflight)
	var wg sync.WaitGroup
	next := st.started
	end := st.started.Add(d)
	for i := 0; next.Before(end); i++ {
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait)
		}
		next = next.Add(interval)
		select {
		case sem <- struct{}{}:
		default:
			st.mu.Lock()
			st.skipped++
			st.mu.Unlock()
			continue
		}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			st.add(cl.do(w))
			<-sem
		}(i % 1024)
	}
	wg.Wait()
	st.ended = time.Now()
	return st
}

func pct(l []time.Duration, p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func sortedCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s:%d", k, m[k])
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

func statusClasses(m map[string]int) (ok, tooMany, fiveXX, other int) {
	for k, v := range m {
		switch {
		case k == "200":
			ok += v
		case k == "429":
			tooMany += v
		case strings.HasPrefix(k, "5"):
			fiveXX += v
		default:
			other += v
		}
	}
	return
}

func printStats(name string, st *stats, rows int) {
	secs := st.ended.Sub(st.started).Seconds()
	total := len(st.latAll)
	ok, tooMany, fiveXX, other := statusClasses(st.status)
	fmt.Printf("%s: %d requests in %.1fs = %.1f req/s answered; 200: %d (%.1f/s, %.0f rows/s ok) | 429: %d | 5xx: %d | other: %d | skipped (max in flight): %d\n",
		name, total, secs, float64(total)/secs, ok, float64(ok)/secs, float64(st.entriesOK)/secs, tooMany, fiveXX, other, st.skipped)
	fmt.Printf("  statuses: %s\n", sortedCounts(st.status))
	fmt.Printf("  latency 200: p50 %s p99 %s max %s | all: p50 %s p99 %s\n",
		pct(st.lat200, 0.5).Round(time.Millisecond), pct(st.lat200, 0.99).Round(time.Millisecond), pct(st.lat200, 1).Round(time.Millisecond),
		pct(st.latAll, 0.5).Round(time.Millisecond), pct(st.latAll, 0.99).Round(time.Millisecond))
	fmt.Printf("  entries: ok %d, failed %s\n", st.entriesOK, sortedCounts(st.entriesFail))
	fmt.Printf("  Retry-After values (s:count): %s\n", sortedCounts(st.retryAfter))
}

func statsJSON(st *stats, rows int) map[string]any {
	secs := st.ended.Sub(st.started).Seconds()
	return map[string]any{
		"seconds": secs, "requests": len(st.latAll), "req_per_s": float64(len(st.latAll)) / secs,
		"status": st.status, "retry_after": st.retryAfter, "skipped": st.skipped,
		"p50_ms_200": pct(st.lat200, 0.5).Milliseconds(), "p99_ms_200": pct(st.lat200, 0.99).Milliseconds(),
		"p50_ms_all": pct(st.latAll, 0.5).Milliseconds(), "p99_ms_all": pct(st.latAll, 0.99).Milliseconds(),
		"entries_ok": st.entriesOK, "entries_failed": st.entriesFail, "rows_per_request": rows,
	}
}

// ---------------------------------------------------------------------------
// RSS sampling
// ---------------------------------------------------------------------------

type rssSample struct {
	T     float64 `json:"t"`
	KB    int     `json:"kb"`
	Label string  `json:"label,omitempty"`
}

type rssSampler struct {
	pid     int
	start   time.Time
	mu      sync.Mutex
	samples []rssSample
	done    chan struct{}
	wg      sync.WaitGroup
}

// vmRSS is the resident memory of pid in kB, -1 when unknown.
func vmRSS(pid int) int {
	if b := benchkit.Status(pid, "VmRSS"); b >= 0 {
		return int(b >> 10)
	}
	return -1
}

func startRSS(pid int) *rssSampler {
	s := &rssSampler{pid: pid, start: time.Now(), done: make(chan struct{})}
	if pid <= 0 {
		return s
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			s.mu.Lock()
			s.samples = append(s.samples, rssSample{T: time.Since(s.start).Seconds(), KB: vmRSS(pid)})
			s.mu.Unlock()
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) mark(label string) {
	if s.pid <= 0 {
		return
	}
	s.mu.Lock()
	s.samples = append(s.samples, rssSample{T: time.Since(s.start).Seconds(), KB: vmRSS(s.pid), Label: label})
	s.mu.Unlock()
}

func (s *rssSampler) stop() []rssSample {
	close(s.done)
	s.wg.Wait()
	return s.samples
}

func printRSS(samples []rssSample) {
	if len(samples) == 0 {
		return
	}
	lo, hi := samples[0].KB, samples[0].KB
	var b strings.Builder
	for i, s := range samples {
		lo, hi = min(lo, s.KB), max(hi, s.KB)
		if s.Label != "" {
			fmt.Fprintf(&b, " [%s]", s.Label)
			continue
		}
		if i%5 == 0 {
			fmt.Fprintf(&b, " %.0fs:%dM", s.T, s.KB/1024)
		}
	}
	fmt.Printf("gateway VmRSS: first %d kB, min %d kB, max %d kB, last %d kB (%d samples, 1/s)\n  every 5 s:%s\n",
		samples[0].KB, lo, hi, samples[len(samples)-1].KB, len(samples), b.String())
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
