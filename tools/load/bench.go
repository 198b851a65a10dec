package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/internal/bench10"
)

// The bench mode (-mode bench) is the gateway side of `make bench-native`
// (tests/bench-native/run.sh): it writes a fixed number of rows of the
// 10-column benchmark table (-schema bench10, the rows BenchNative.java
// writes with the official Java client: the generators must agree) with
// -concurrency closed-loop workers (or at -rate requests/s, open loop),
// after a warm-up that is not measured, and prints one JSON object: rows/s,
// request latency percentiles, the latency the gateway adds (request time
// minus the writer's delivery time from the Server-Timing header), the CPU of
// the gateway, of this generator and of the Fluss processes over the timed
// part (utime+stime from /proc/<pid>/stat) and the gateway's peak RSS
// (VmHWM). Request bodies are built before the timed part, so the generator
// spends its CPU on HTTP only.

// benchConfig is the bench mode's part of the command line.
type benchConfig struct {
	warmupRows int
	totalRows  int
	flussPids  string
	repeat     int           // the measured bodies are sent this many times
	pprofURL   string        // base URL of the gateway's pprof listener
	pprofOut   string        // file prefix: <prefix>cpu.pprof, <prefix>allocs.pprof
	pprofFor   time.Duration // profile length, from the start of the measured part
	body       string        // json (entries documents) or arrow (Arrow IPC streams, arrowbody.go)
}

// benchBodies returns the request bodies for ids from..to-1, per entries.
func benchBodies(op string, from, to int64, per int) [][]byte {
	return buildBodies(op, from, to, per, false)
}

// benchNDJSONBodies is benchBodies as NDJSON bodies (application/x-ndjson,
// a gateway-go extension): the same entries, one per line, per lines a
// request. They are built directly, not converted from the JSON documents:
// the documents would be garbage the generator's collector frees during the
// timed part, on the CPUs the gateway runs on.
func benchNDJSONBodies(op string, from, to int64, per int) [][]byte {
	return buildBodies(op, from, to, per, true)
}

// buildBodies writes the entries of ids from..to-1, per a request, as
// {"entries":[…]} documents or, with ndjson, one entry a line.
func buildBodies(op string, from, to int64, per int, ndjson bool) [][]byte {
	var out [][]byte
	for start := from; start < to; start += int64(per) {
		end := min(start+int64(per), to)
		b := make([]byte, 0, (end-start)*300+16)
		if !ndjson {
			b = append(b, `{"entries":[`...)
		}
		for i := start; i < end; i++ {
			if i > start && !ndjson {
				b = append(b, ',')
			}
			b = append(b, `{"id":"`...)
			b = strconv.AppendInt(b, i, 10)
			b = append(b, `","`...)
			b = append(b, op...)
			b = append(b, `":`...)
			b = bench10.AppendRow(b, i)
			b = append(b, '}')
			if ndjson {
				b = append(b, '\n')
			}
		}
		if !ndjson {
			b = append(b, "]}"...)
		}
		out = append(out, b)
	}
	return out
}

// benchResult is one request's outcome.
type benchResult struct {
	lat, added time.Duration
	status     int
	failed     int
	firstErr   string
	timing     string // the answer's Server-Timing header (the writer's timeline)
	retryAfter string // the answer's Retry-After header
	retried429 int    // how many 429 answers post waited out and resent
}

// maxRetries429 bounds how often post resends a body answered 429.
const maxRetries429 = 30

// post sends body and reads its answer. A 429 (the gateway refused the whole
// body before any row was sent: memory budget, rate limit, quota) is waited
// out as its Retry-After says (1 s when absent) and the same body sent
// again, as a well-behaved client does; the latency counts from the first
// attempt and the result counts the retries (retried429).
func (cl *client) post(body []byte) benchResult {
	start := time.Now()
	for retries := 0; ; retries++ {
		r := cl.postOnce(body)
		if r.status != http.StatusTooManyRequests || retries == maxRetries429 {
			r.lat, r.retried429 = time.Since(start), retries
			r.added = r.lat - serverTiming(r.timing, "delivery")
			return r
		}
		wait := time.Second
		if s, err := strconv.Atoi(r.retryAfter); err == nil && s >= 0 {
			wait = time.Duration(s) * time.Second
		}
		time.Sleep(wait)
	}
}

func (cl *client) postOnce(body []byte) benchResult {
	ctx, cancel := context.WithTimeout(context.Background(), cl.c.timeout+5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cl.urlPath, bytes.NewReader(body))
	if err != nil {
		return benchResult{firstErr: err.Error()}
	}
	req.Header.Set("Content-Type", cl.contentType)
	req.Header.Set("X-Fluss-Request-Timeout", strconv.FormatInt(cl.c.timeout.Milliseconds(), 10))
	start := time.Now()
	resp, err := cl.http.Do(req)
	if err != nil {
		return benchResult{lat: time.Since(start), firstErr: err.Error()}
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r := benchResult{lat: time.Since(start), status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	r.timing = resp.Header.Get("Server-Timing")
	r.added = r.lat - serverTiming(r.timing, "delivery")
	if resp.StatusCode != http.StatusOK {
		r.firstErr = strconv.Itoa(resp.StatusCode) + " " + truncate(string(raw), 300)
		return r
	}
	type failure struct {
		ErrorCode string `json:"error_code"`
		Message   string `json:"message"`
	}
	var wr struct {
		ErrorCount int       `json:"error_count"`
		Failures   []failure `json:"failures"`
		// Arrow IPC answers: failures per record batch.
		Batches []struct {
			Failures []failure `json:"failures"`
		} `json:"batches"`
	}
	if err := json.Unmarshal(raw, &wr); err != nil {
		r.firstErr = "response: " + err.Error()
		return r
	}
	r.failed = wr.ErrorCount
	for _, b := range wr.Batches {
		wr.Failures = append(wr.Failures, b.Failures...)
	}
	if len(wr.Failures) > 0 {
		r.firstErr = wr.Failures[0].ErrorCode + ": " + wr.Failures[0].Message
	}
	return r
}

// serverTiming returns the dur of metric name in a Server-Timing header
// value (RFC: W3C Server Timing), 0 when absent.
func serverTiming(h, name string) time.Duration {
	for _, m := range strings.Split(h, ",") {
		parts := strings.Split(strings.TrimSpace(m), ";")
		if strings.TrimSpace(parts[0]) != name {
			continue
		}
		for _, p := range parts[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "dur="); ok {
				ms, _ := strconv.ParseFloat(v, 64)
				return time.Duration(ms * float64(time.Millisecond))
			}
		}
	}
	return 0
}

// timelineMetrics are the Server-Timing durations of a write's answer (see
// adapters/http serverTiming): the handler's and the writer's phases.
var timelineMetrics = []string{"handler", "delivery", "w-encode", "w-queue", "w-slot", "w-build", "w-fluss", "w-resolve"}

// timeline summarizes the requests' Server-Timing: p50/p99 ms of each
// duration metric, of the request outside the handler ("outside": HTTP,
// body transfer, the answer), and the means of the w-batch counts (rows per
// last batch, its bucket's in-flight batches, batches per request).
func timeline(res []benchResult) map[string]any {
	out := map[string]any{}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	add := func(name string, v []time.Duration) {
		slices.Sort(v)
		out[name] = map[string]float64{"p50_ms": ms(pct(v, 0.50)), "p99_ms": ms(pct(v, 0.99))}
	}
	for _, m := range timelineMetrics {
		v := make([]time.Duration, len(res))
		for i, r := range res {
			v[i] = serverTiming(r.timing, m)
		}
		add(m, v)
	}
	outside := make([]time.Duration, len(res))
	for i, r := range res {
		outside[i] = r.lat - serverTiming(r.timing, "handler")
	}
	add("outside", outside)
	sums := map[string]float64{}
	for _, r := range res {
		i := strings.Index(r.timing, `w-batch;desc="`)
		if i < 0 {
			continue
		}
		desc, _, _ := strings.Cut(r.timing[i+len(`w-batch;desc="`):], `"`)
		for _, kv := range strings.Fields(desc) {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseFloat(v, 64)
			sums[k] += n
		}
	}
	for k, v := range sums {
		out["mean_"+k] = v / float64(max(len(res), 1))
	}
	return out
}

// send posts bodies with workers closed-loop workers, or open loop at rate
// requests/s when rate > 0 (at most workers in flight).
func (cl *client) send(bodies [][]byte, workers int, rate float64) []benchResult {
	out := make([]benchResult, len(bodies))
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(bodies) {
					return
				}
				if rate > 0 {
					time.Sleep(time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
				}
				out[i] = cl.post(bodies[i])
			}
		}()
	}
	wg.Wait()
	return out
}

// procTicks returns utime+stime of pid in clock ticks (fields 14, 15 of
// /proc/<pid>/stat), -1 when unreadable.
func procTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

func ticksOf(pids []int) int64 {
	var t int64
	for _, p := range pids {
		if v := procTicks(p); v > 0 {
			t += v
		}
	}
	return t
}

func procStatusKB(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return -1
}

func runBench(c config, bc benchConfig) error {
	if c.schema != "bench10" {
		return fmt.Errorf("-mode bench needs -schema bench10")
	}
	tr := &http.Transport{MaxIdleConns: c.concurrency, MaxIdleConnsPerHost: c.concurrency, IdleConnTimeout: 30 * time.Second,
		DisableCompression: true}
	cl := &client{c: c, http: &http.Client{Transport: tr},
		urlPath: fmt.Sprintf("%s/v1/clusters/%s/databases/%s/tables/%s/records", strings.TrimRight(c.url, "/"), c.cluster, c.db, c.table)}
	var flussPids []int
	for _, p := range strings.Split(bc.flussPids, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(p)); err == nil && n > 0 {
			flussPids = append(flussPids, n)
		}
	}
	var warm, timed [][]byte
	switch bc.body {
	case "arrow", "arrow-zstd":
		if c.op != "append" {
			return fmt.Errorf("-body %s needs -op append", bc.body)
		}
		cl.contentType = "application/vnd.apache.arrow.stream"
		zstd := bc.body == "arrow-zstd"
		var err error
		if warm, err = benchArrowBodies(-int64(bc.warmupRows), 0, c.rows, zstd); err != nil {
			return err
		}
		if timed, err = benchArrowBodies(0, int64(bc.totalRows), c.rows, zstd); err != nil {
			return err
		}
	case "ndjson":
		cl.contentType = "application/x-ndjson"
		warm = benchNDJSONBodies(c.op, -int64(bc.warmupRows), 0, c.rows)
		timed = benchNDJSONBodies(c.op, 0, int64(bc.totalRows), c.rows)
	default:
		cl.contentType = "application/json"
		warm = benchBodies(c.op, -int64(bc.warmupRows), 0, c.rows)
		timed = benchBodies(c.op, 0, int64(bc.totalRows), c.rows)
	}
	// What building the bodies left to collect is collected now, not
	// during the timed part (the same for every body kind).
	runtime.GC()
	if bc.repeat > 1 {
		one := timed
		for range bc.repeat - 1 {
			timed = append(timed, one...)
		}
	}
	rows := bc.totalRows * max(bc.repeat, 1)
	if err := check("warm-up", cl.send(warm, c.concurrency, 0)); err != nil {
		return err
	}
	self := os.Getpid()
	gw0, fl0, me0 := procTicks(c.pid), ticksOf(flussPids), procTicks(self)
	profiled := startProfiles(bc)
	t0 := time.Now()
	res := cl.send(timed, c.concurrency, c.rate)
	secs := time.Since(t0).Seconds()
	gw1, fl1, me1 := procTicks(c.pid), ticksOf(flussPids), procTicks(self)
	if err := profiled(); err != nil {
		return err
	}
	if err := check("timed", res); err != nil {
		return err
	}
	lat := make([]time.Duration, len(res))
	added := make([]time.Duration, len(res))
	for i, r := range res {
		lat[i], added[i] = r.lat, r.added
	}
	slices.Sort(lat)
	slices.Sort(added)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	out := map[string]any{
		"rows": rows, "requests": len(res), "entries": c.rows, "concurrency": c.concurrency, "rate": c.rate,
		"seconds": secs, "rows_per_s": float64(rows) / secs,
		"p50_ms": ms(pct(lat, 0.50)), "p99_ms": ms(pct(lat, 0.99)),
		"added_p50_ms": ms(pct(added, 0.50)), "added_p99_ms": ms(pct(added, 0.99)),
		"gateway_ticks": gw1 - gw0, "fluss_ticks": fl1 - fl0, "load_ticks": me1 - me0,
		"gateway_hwm_kb": procStatusKB(c.pid, "VmHWM"), "gateway_rss_kb": procStatusKB(c.pid, "VmRSS"),
		"timeline": timeline(res), "retried_429": retried429(res),
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	if c.jsonOut != "" {
		return os.WriteFile(c.jsonOut, b, 0o644)
	}
	return nil
}

// retried429 is the number of 429 answers the requests waited out.
func retried429(res []benchResult) int {
	n := 0
	for _, r := range res {
		n += r.retried429
	}
	return n
}

// check fails when any request was not answered 200 with every entry
// successful.
func check(phase string, res []benchResult) error {
	bad, failed, first := 0, 0, ""
	for _, r := range res {
		if r.status != http.StatusOK || r.failed > 0 {
			bad++
			failed += r.failed
			if first == "" {
				first = r.firstErr
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%s: %d of %d requests not fully successful (%d failed entries), first: %s", phase, bad, len(res), failed, first)
	}
	return nil
}

// fetchTo GETs url into the file path.
func fetchTo(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// startProfiles fetches the gateway's CPU and allocation profiles of the
// next bc.pprofFor (nothing when bc.pprofURL is empty) into
// <bc.pprofOut>profile.pprof and <bc.pprofOut>allocs.pprof; the function it
// returns waits for both and returns the first error.
func startProfiles(bc benchConfig) func() error {
	var prof sync.WaitGroup
	var profErr atomic.Value
	if bc.pprofURL != "" {
		secs := strconv.Itoa(int(bc.pprofFor.Seconds()))
		for _, p := range []string{"profile", "allocs"} {
			prof.Go(func() {
				if err := fetchTo(bc.pprofURL+"/debug/pprof/"+p+"?seconds="+secs, bc.pprofOut+p+".pprof"); err != nil {
					profErr.Store(err)
				}
			})
		}
	}
	return func() error {
		prof.Wait()
		if err, ok := profErr.Load().(error); ok {
			return fmt.Errorf("pprof: %w", err)
		}
		return nil
	}
}
