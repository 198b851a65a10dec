// Command soak drives a running gateway with a steady mix of writes,
// lookups and DDL for a long time and reports, per interval, the gateway
// process's resident memory and open file descriptors, its goroutines (from
// its Prometheus /metrics) and the p99 latency of each kind of request.
// Flat lines are the target: a leak shows as a slope. tests/soak/run.sh
// (make soak) runs it.
//
// Two phases:
//
//  1. calibrate (closed loop, -calibrate): -concurrency workers send the mix
//     back to back; the peak is the rate of requests answered 2xx.
//  2. soak (open loop, -duration): the mix at -fraction × that peak (or at
//     -rate), one DDL cycle every -ddl-every: create a table, write a row
//     into it, add a column, write a row naming it, drop the table.
//
// The mix: 70 % writes of -rows upserts of new ids, 30 % lookups of -rows
// ids already written (every one must be found). Rows are {"id": n, "v":
// "..."} in the primary-key table <db>.soak.
//
// It exits 1 when more than -max-errors of the soak's requests failed (429
// load shedding excepted), when a lookup missed a written row, or when the
// file descriptors or goroutines of the last interval exceed the first
// steady interval's by more than -max-fd-growth / -max-goroutine-growth.
//
//	go run ./tools/soak -url http://127.0.0.1:28082 -metrics http://127.0.0.1:28083/metrics -pid $PID -duration 1h
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/tools/internal/benchkit"
)

type config struct {
	url, metrics, cluster, db string
	pid                       int
	concurrency, rows         int
	calibrate, duration       time.Duration
	interval, ddlEvery        time.Duration
	timeout                   time.Duration
	fraction, rate            float64
	maxErrors                 float64
	maxFDGrowth, maxGRGrowth  int
}

func main() {
	var c config
	benchkit.Target{URL: &c.url, Cluster: &c.cluster, DB: &c.db, PID: &c.pid}.Register(flag.CommandLine,
		fmt.Sprintf("soak_%d", time.Now().Unix()), "database to create and use", "gateway process id (RSS and fds from /proc); 0: not reported")
	flag.StringVar(&c.metrics, "metrics", "", "the gateway's Prometheus /metrics URL (goroutines); empty: not reported")
	flag.IntVar(&c.concurrency, "concurrency", 16, "workers during calibration; at most this many requests in flight")
	flag.IntVar(&c.rows, "rows", 20, "rows per write, keys per lookup")
	flag.DurationVar(&c.calibrate, "calibrate", 20*time.Second, "calibration (closed loop) duration")
	flag.DurationVar(&c.duration, "duration", time.Hour, "soak duration")
	flag.DurationVar(&c.interval, "interval", time.Minute, "report interval")
	flag.DurationVar(&c.ddlEvery, "ddl-every", 10*time.Second, "one DDL cycle this often")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Second, "per-request deadline (X-Fluss-Request-Timeout)")
	flag.Float64Var(&c.fraction, "fraction", 0.5, "soak rate as a fraction of the calibrated peak")
	flag.Float64Var(&c.rate, "rate", 0, "fixed soak rate in requests/s (skips calibration)")
	flag.Float64Var(&c.maxErrors, "max-errors", 0.01, "largest tolerated share of failed soak requests (429 excepted)")
	flag.IntVar(&c.maxFDGrowth, "max-fd-growth", 64, "largest tolerated growth of open fds, first steady interval to last")
	flag.IntVar(&c.maxGRGrowth, "max-goroutine-growth", 200, "largest tolerated growth of goroutines, first steady interval to last")
	flag.Parse()
	log.SetFlags(0)
	if err := run(c); err != nil {
		log.Printf("soak: FAIL: %v", err)
		os.Exit(1)
	}
}

// kinds of request.
const (
	kindWrite = iota
	kindLookup
	kindDDL
	nKinds
)

var kindNames = [nKinds]string{"write", "lookup", "ddl"}

// window collects one interval's outcomes.
type window struct {
	mu       sync.Mutex
	lat      [nKinds][]time.Duration
	ok, fail [nKinds]int
	shed     int // 429
	missed   int // lookups that did not find a written row
	firstErr string
}

func (w *window) add(kind int, d time.Duration, status int, errText string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lat[kind] = append(w.lat[kind], d)
	switch {
	case status >= 200 && status < 300:
		w.ok[kind]++
	case status == http.StatusTooManyRequests:
		w.shed++
	default:
		w.fail[kind]++
		if w.firstErr == "" {
			w.firstErr = fmt.Sprintf("%s: %d %s", kindNames[kind], status, truncate(errText, 300))
		}
	}
}

func p99(l []time.Duration) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*99/100)]
}

type driver struct {
	c      config
	client *http.Client
	nextID atomic.Int64
	// written ids, for lookups (ids 1..written are all written
	// successfully once confirmedUpTo passes them).
	mu      sync.Mutex
	written []int64
	ddlSeq  atomic.Int64
}

func run(c config) error {
	d := &driver{c: c, client: &http.Client{Timeout: c.timeout + 5*time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: c.concurrency * 2}}}
	if err := d.setup(); err != nil {
		return err
	}
	defer d.teardown()

	rate := c.rate
	if rate <= 0 {
		w := &window{}
		peak := d.calibrate(w)
		rate = peak * c.fraction
		log.Printf("soak: calibration %s at concurrency %d: peak %.0f requests/s answered 2xx (%d failed, %d shed); soak rate %.0f/s (%.0f%%)",
			c.calibrate, c.concurrency, peak, sum(w.fail[:]), w.shed, rate, c.fraction*100)
		if rate < 1 {
			return fmt.Errorf("calibration found no sustainable rate (first error: %s)", w.firstErr)
		}
	}
	return d.soak(rate)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// do sends one JSON request and returns the status and body.
func (d *driver) do(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.c.timeout+5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, d.c.url+"/v1/clusters/"+d.c.cluster+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Fluss-Request-Timeout", strconv.FormatInt(d.c.timeout.Milliseconds(), 10))
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

func pkTable(name string) map[string]any {
	return map[string]any{
		"table_name": name,
		"columns": []any{
			map[string]any{"name": "id", "data_type": map[string]any{"type": "BIGINT"}},
			map[string]any{"name": "v", "data_type": map[string]any{"type": "STRING"}},
		},
		"primary_key":  []any{"id"},
		"distribution": map[string]any{"bucket_count": 3, "bucket_keys": []any{"id"}},
	}
}

func (d *driver) setup() error {
	if st, body, err := d.do(http.MethodPost, "/databases", map[string]any{"database": d.c.db}); err != nil || st/100 != 2 {
		return fmt.Errorf("create database %s: %d %s %v", d.c.db, st, body, err)
	}
	if st, body, err := d.do(http.MethodPost, "/databases/"+d.c.db+"/tables", pkTable("soak")); err != nil || st/100 != 2 {
		return fmt.Errorf("create table %s.soak: %d %s %v", d.c.db, st, body, err)
	}
	return nil
}

func (d *driver) teardown() {
	_, _, _ = d.do(http.MethodDelete, "/databases/"+d.c.db+"?cascade=true", nil)
}

// write upserts -rows new ids; the ids join the lookup pool on success.
func (d *driver) write(w *window) {
	ids := make([]int64, d.c.rows)
	entries := make([]any, d.c.rows)
	for i := range ids {
		ids[i] = d.nextID.Add(1)
		entries[i] = map[string]any{"id": strconv.FormatInt(ids[i], 10), "upsert": map[string]any{"id": ids[i], "v": "soak-" + strconv.FormatInt(ids[i], 10)}}
	}
	start := time.Now()
	st, body, err := d.do(http.MethodPost, "/databases/"+d.c.db+"/tables/soak/records", map[string]any{"entries": entries})
	took := time.Since(start)
	if err != nil {
		w.add(kindWrite, took, 0, err.Error())
		return
	}
	if st == http.StatusOK {
		var r struct {
			Successes []struct {
				ID string `json:"id"`
			} `json:"successes"`
			ErrorCount int `json:"error_count"`
		}
		if json.Unmarshal(body, &r) == nil && r.ErrorCount > 0 {
			st = 207 // counted as a failure below
		}
		d.mu.Lock()
		for _, s := range r.Successes {
			if id, err := strconv.ParseInt(s.ID, 10, 64); err == nil {
				d.written = append(d.written, id)
			}
		}
		d.mu.Unlock()
		if st == 207 {
			w.add(kindWrite, took, 207, string(body))
			return
		}
	}
	w.add(kindWrite, took, st, string(body))
}

// lookup looks -rows written ids up; each must be found.
func (d *driver) lookup(w *window, rng *rand.Rand) {
	d.mu.Lock()
	n := len(d.written)
	if n == 0 {
		d.mu.Unlock()
		return
	}
	keys := make([]any, 0, d.c.rows)
	for range d.c.rows {
		keys = append(keys, map[string]any{"id": d.written[rng.IntN(n)]})
	}
	d.mu.Unlock()
	start := time.Now()
	st, body, err := d.do(http.MethodPost, "/databases/"+d.c.db+"/tables/soak/records/lookup", map[string]any{"keys": keys})
	took := time.Since(start)
	if err != nil {
		w.add(kindLookup, took, 0, err.Error())
		return
	}
	if st == http.StatusOK {
		var r struct {
			Results []struct {
				Found bool `json:"found"`
			} `json:"results"`
		}
		if err := json.Unmarshal(body, &r); err == nil {
			for _, res := range r.Results {
				if !res.Found {
					w.mu.Lock()
					w.missed++
					w.mu.Unlock()
				}
			}
		}
	}
	w.add(kindLookup, took, st, string(body))
}

// ddl runs one cycle on a table of its own: create, write, add a column,
// write naming it, drop. Each step is one DDL sample.
func (d *driver) ddl(w *window) {
	name := fmt.Sprintf("ddl_%d", d.ddlSeq.Add(1))
	base := "/databases/" + d.c.db + "/tables/" + name
	step := func(method, path string, body any, want ...int) bool {
		start := time.Now()
		st, raw, err := d.do(method, path, body)
		if err != nil {
			w.add(kindDDL, time.Since(start), 0, err.Error())
			return false
		}
		w.add(kindDDL, time.Since(start), st, method+" "+path+": "+string(raw))
		return st/100 == 2
	}
	if !step(http.MethodPost, "/databases/"+d.c.db+"/tables", pkTable(name)) {
		return
	}
	defer step(http.MethodDelete, base, nil)
	if !step(http.MethodPost, base+"/records", map[string]any{"entries": []any{
		map[string]any{"id": "a", "upsert": map[string]any{"id": 1, "v": "x"}}}}) {
		return
	}
	if !step(http.MethodPatch, base, map[string]any{"changes": []any{
		map[string]any{"kind": "add_column", "name": "n", "data_type": map[string]any{"type": "BIGINT"}}}}) {
		return
	}
	step(http.MethodPost, base+"/records", map[string]any{"entries": []any{
		map[string]any{"id": "b", "upsert": map[string]any{"id": 2, "v": "y", "n": 7}}}})
}

// mixOne sends one request of the 70/30 write/lookup mix.
func (d *driver) mixOne(w *window, rng *rand.Rand) {
	if rng.IntN(10) < 7 {
		d.write(w)
	} else {
		d.lookup(w, rng)
	}
}

func (d *driver) calibrate(w *window) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), d.c.calibrate)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for i := range d.c.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for ctx.Err() == nil {
				d.mixOne(w, rng)
			}
		}()
	}
	wg.Wait()
	return float64(sum(w.ok[:])) / time.Since(start).Seconds()
}

// sample is one report line's process figures.
type sample struct {
	rss, fds, goroutines int64
}

func (d *driver) sample() sample {
	s := sample{rss: -1, fds: -1, goroutines: -1}
	if d.c.pid > 0 {
		s.rss = benchkit.Status(d.c.pid, "VmRSS")
		s.fds = int64(benchkit.FDs(d.c.pid))
	}
	if d.c.metrics != "" {
		if resp, err := d.client.Get(d.c.metrics); err == nil {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				line := sc.Text()
				if strings.HasPrefix(line, "go_goroutine_count") {
					if i := strings.LastIndexByte(line, ' '); i > 0 {
						if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
							s.goroutines = int64(v)
						}
					}
				}
			}
			_ = resp.Body.Close()
		}
	}
	return s
}

func (d *driver) soak(rate float64) error {
	log.Printf("soak: %s at %.0f requests/s (70%% writes of %d rows, 30%% lookups of %d keys), one DDL cycle every %s, report every %s",
		d.c.duration, rate, d.c.rows, d.c.rows, d.c.ddlEvery, d.c.interval)
	log.Printf("%8s %9s %6s %10s %8s %8s %8s %8s %8s %7s %6s", "t", "rss_MiB", "fds", "goroutines", "req/s",
		"p99_wr", "p99_lk", "p99_ddl", "failed", "shed", "missed")
	ctx, cancel := context.WithTimeout(context.Background(), d.c.duration)
	defer cancel()
	sem := make(chan struct{}, d.c.concurrency)
	var cur atomic.Pointer[window]
	cur.Store(&window{})
	var inflight sync.WaitGroup
	var skipped atomic.Int64

	// The DDL cycle.
	inflight.Add(1)
	go func() {
		defer inflight.Done()
		t := time.NewTicker(d.c.ddlEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				d.ddl(cur.Load())
			}
		}
	}()
	// The open-loop mix.
	inflight.Add(1)
	go func() {
		defer inflight.Done()
		every := time.Duration(float64(time.Second) / rate)
		t := time.NewTicker(max(every, 50*time.Microsecond))
		defer t.Stop()
		rng := rand.New(rand.NewPCG(42, 2))
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			select {
			case sem <- struct{}{}:
			default:
				skipped.Add(1)
				continue
			}
			seed := rng.Uint64()
			inflight.Add(1)
			go func() {
				defer inflight.Done()
				defer func() { <-sem }()
				d.mixOne(cur.Load(), rand.New(rand.NewPCG(seed, 3)))
			}()
		}
	}()

	start := time.Now()
	var first *sample
	var last sample
	var total, failed, shed, missed int
	report := func(w *window, elapsed time.Duration, final bool) {
		s := d.sample()
		w.mu.Lock()
		n := sum(w.ok[:]) + sum(w.fail[:]) + w.shed
		f := sum(w.fail[:])
		log.Printf("%8s %9.1f %6d %10d %8.1f %8s %8s %8s %8d %7d %6d", elapsed.Round(time.Second),
			float64(s.rss)/(1<<20), s.fds, s.goroutines, float64(n)/d.c.interval.Seconds(),
			p99(w.lat[kindWrite]).Round(time.Millisecond), p99(w.lat[kindLookup]).Round(time.Millisecond),
			p99(w.lat[kindDDL]).Round(time.Millisecond), f, w.shed, w.missed)
		if w.firstErr != "" {
			log.Printf("         first failure: %s", w.firstErr)
		}
		total, failed, shed, missed = total+n, failed+f, shed+w.shed, missed+w.missed
		w.mu.Unlock()
		if first == nil && !final {
			first = &s
		}
		last = s
	}
	tick := time.NewTicker(d.c.interval)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			report(cur.Swap(&window{}), time.Since(start), false)
		}
	}
	inflight.Wait()
	if w := cur.Swap(&window{}); sum(w.ok[:])+sum(w.fail[:]) > 0 {
		report(w, time.Since(start), true)
	}
	log.Printf("soak: %d requests, %d failed, %d shed (429), %d skipped at the in-flight cap, %d lookups missed a written row",
		total, failed, shed, skipped.Load(), missed)
	var problems []string
	if total > 0 && float64(failed)/float64(total) > d.c.maxErrors {
		problems = append(problems, fmt.Sprintf("%d of %d requests failed (more than %.1f%%)", failed, total, d.c.maxErrors*100))
	}
	if missed > 0 {
		problems = append(problems, fmt.Sprintf("%d lookups missed a row written with success", missed))
	}
	if first != nil {
		log.Printf("soak: first interval -> last: rss %.1f -> %.1f MiB, fds %d -> %d, goroutines %d -> %d",
			float64(first.rss)/(1<<20), float64(last.rss)/(1<<20), first.fds, last.fds, first.goroutines, last.goroutines)
		if first.fds >= 0 && last.fds-first.fds > int64(d.c.maxFDGrowth) {
			problems = append(problems, fmt.Sprintf("open fds grew by %d", last.fds-first.fds))
		}
		if first.goroutines >= 0 && last.goroutines-first.goroutines > int64(d.c.maxGRGrowth) {
			problems = append(problems, fmt.Sprintf("goroutines grew by %d", last.goroutines-first.goroutines))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	log.Printf("soak: PASS")
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
