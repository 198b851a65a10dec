// Command resbench is the gateway's resource benchmark (issue 21; `make
// bench-resources`, tests/resources/run.sh). Against a running gateway (and
// its pid, for /proc) it runs, one after the other:
//
//   - writes of -points (entries per request × concurrent requests) into a
//     fresh primary-key table and a fresh log table each (10 columns),
//     429 answers retried after their Retry-After;
//   - lookups of 128 keys (duplicates included) × 64 concurrent on a table
//     of wide rows (256 KiB each);
//   - 32 MiB write bodies (8 concurrent), gzip bodies that expand 300×
//     (8 concurrent);
//   - unauthenticated requests declaring a 32 MiB body (headers and 16 KiB
//     only; -password mode), 32 connections;
//   - descriptor exhaustion: -fd-conns connections declaring bodies over the
//     limit, then how long /health takes once they are closed.
//
// For each point it prints the gateway's peak RSS (VmHWM, reset between
// points through /proc/<pid>/clear_refs, after waiting up to 10 s for the RSS
// to settle near its idle value), the peak of its open descriptors,
// rows/s, 429 answers, and whether every acknowledged row landed exactly once
// (the independent peer client's end offsets: one change-log record per new
// key or appended row). With -assert-rss-mib it fails when a point's peak RSS
// exceeds it, when /health takes more than 1 s after exhaustion, or when a
// row is lost or duplicated.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/internal/bench10"
	"github.com/fluss-gateway/fluss-gateway-go/tools/internal/benchkit"
)

type config struct {
	url, cluster, db    string
	user, password      string
	pid                 int
	points, kinds       string
	rowsPerPoint        int
	peer                string
	fdConns             int
	unauthConns         int
	bigBodies, gzBodies int
	lookupConc          int
	assertRSSMiB        int
}

func main() {
	var c config
	benchkit.Target{URL: &c.url, Cluster: &c.cluster, DB: &c.db, PID: &c.pid}.Register(flag.CommandLine,
		"resbench", "database (created)", "gateway pid (for /proc)")
	flag.StringVar(&c.user, "user", "", "Basic user (password mode)")
	flag.StringVar(&c.password, "password", "", "Basic password (password mode)")
	flag.StringVar(&c.points, "points", "500x16,2000x16,10000x16,500x64,2000x64,10000x64", "entries×concurrency points")
	flag.StringVar(&c.kinds, "kinds", "pk,log", "table kinds")
	flag.IntVar(&c.rowsPerPoint, "rows", 200_000, "rows per write point (at least one round of requests)")
	flag.StringVar(&c.peer, "peer", os.Getenv("FLUSS_PEER"), "peer client (tests/peer/peer.sh) to count landed rows; empty: not checked")
	flag.IntVar(&c.fdConns, "fd-conns", 1100, "connections of the descriptor-exhaustion point (0: skip)")
	flag.IntVar(&c.unauthConns, "unauth-conns", 32, "connections of the unauthenticated point (needs -password; 0: skip)")
	flag.IntVar(&c.bigBodies, "big-bodies", 8, "concurrent 32 MiB bodies (0: skip)")
	flag.IntVar(&c.gzBodies, "gzip-bodies", 8, "concurrent gzip bodies (0: skip)")
	flag.IntVar(&c.lookupConc, "lookup-concurrency", 64, "concurrent 128-key lookups (0: skip)")
	flag.IntVar(&c.assertRSSMiB, "assert-rss-mib", 0, "fail when a point's peak RSS exceeds this (0: report only)")
	flag.Parse()
	if c.pid == 0 {
		log.Fatal("-pid is required")
	}
	b := &bench{c: c, client: &http.Client{Timeout: 120 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	if err := b.run(); err != nil {
		log.Fatal(err)
	}
}

type bench struct {
	c      config
	client *http.Client
	rows   []result
	failed []string
}

// result is one line of the table.
type result struct {
	point            string
	rows, requests   int64
	seconds          float64
	status429        int64
	otherStatus      map[int]int64
	peakRSS, peakFDs int64
	startRSS         int64
	landed           string
	note             string
}

func (b *bench) run() error {
	if err := b.do("POST", "/databases", `{"database":"`+b.c.db+`"}`, nil); err != nil && !strings.Contains(err.Error(), "409") {
		return err
	}
	idle := readStatus(b.c.pid, "VmRSS")
	idleRSS = idle
	fmt.Printf("gateway pid %d, idle RSS %d MiB, fds %d\n", b.c.pid, idle>>20, countFDs(b.c.pid))
	for _, kind := range strings.FieldsFunc(b.c.kinds, isComma) {
		for _, p := range strings.FieldsFunc(b.c.points, isComma) {
			var entries, conc int
			if _, err := fmt.Sscanf(p, "%dx%d", &entries, &conc); err != nil {
				return fmt.Errorf("point %q: %w", p, err)
			}
			if err := b.writePoint(kind, entries, conc); err != nil {
				return err
			}
		}
	}
	if b.c.lookupConc > 0 {
		if err := b.lookupPoint(); err != nil {
			return err
		}
	}
	if b.c.bigBodies > 0 {
		if err := b.bigBodyPoint(); err != nil {
			return err
		}
	}
	if b.c.gzBodies > 0 {
		if err := b.gzipPoint(); err != nil {
			return err
		}
	}
	if b.c.unauthConns > 0 && b.c.password != "" {
		b.unauthPoint()
	}
	if b.c.fdConns > 0 {
		b.fdPoint()
	}
	b.print()
	fmt.Printf("idle RSS after the run: %d MiB (was %d MiB before)\n", readStatus(b.c.pid, "VmRSS")>>20, idle>>20)
	if len(b.failed) > 0 {
		for _, f := range b.failed {
			fmt.Println("FAIL:", f)
		}
		return fmt.Errorf("%d check(s) failed", len(b.failed))
	}
	return nil
}

// sampler tracks the gateway's peak RSS (VmHWM, reset at start) and peak
// descriptors while a point runs.
type sampler struct {
	pid    int
	start  int64
	peakFD atomic.Int64
	stop   chan struct{}
	done   chan struct{}
}

func startSampler(pid int) *sampler {
	settle(pid)
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
	s := &sampler{pid: pid, start: readStatus(pid, "VmRSS"), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if n := int64(countFDs(pid)); n > s.peakFD.Load() {
				s.peakFD.Store(n)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// idleRSS is the gateway's RSS before the first point.
var idleRSS int64

// settle waits, at most 10 s, for the gateway's RSS to come back within
// 48 MiB of its idle RSS (the reclaimer returns a burst's heap once the
// memory budget has been idle for 5 s), so that each point's peak starts from
// a settled process rather than from the previous point's high-water mark.
func settle(pid int) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && readStatus(pid, "VmRSS") > idleRSS+48<<20 {
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *sampler) finish(r *result) {
	close(s.stop)
	<-s.done
	r.peakRSS = readStatus(s.pid, "VmHWM")
	r.startRSS = s.start
	r.peakFDs = s.peakFD.Load()
}

// progress prints a point as soon as it is measured (the table follows at
// the end).
func progress(r *result) {
	fmt.Printf("  done: %s: %d rows in %.1fs, %d×429, RSS %d → %d MiB, %d fds, %s %s\n", r.point, r.rows, r.seconds,
		r.status429, r.startRSS>>20, r.peakRSS>>20, r.peakFDs, r.landed, r.note)
}

func (b *bench) checkRSS(r *result) {
	progress(r)
	if b.c.assertRSSMiB > 0 && r.peakRSS > int64(b.c.assertRSSMiB)<<20 {
		b.failed = append(b.failed, fmt.Sprintf("%s: peak RSS %d MiB exceeds %d MiB", r.point, r.peakRSS>>20, b.c.assertRSSMiB))
	}
}

// Tables.

func (b *bench) createTable(name, columns, pk string, buckets int) error {
	body := `{"table_name":"` + name + `","columns":` + columns + `,"distribution":{"bucket_count":` + strconv.Itoa(buckets) + `}`
	if pk != "" {
		body += `,"primary_key":["` + pk + `"]`
	}
	body += `}`
	return b.do("POST", "/databases/"+b.c.db+"/tables", body, nil)
}

func row(b []byte, i int64) []byte {
	b = append(b, `{"k":`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `,"name":"user-`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `","amount":"`...)
	b = strconv.AppendInt(b, i%1_000_000, 10)
	b = append(b, `.25","qty":`...)
	b = strconv.AppendInt(b, i%100_000, 10)
	b = append(b, `,"price":`...)
	b = strconv.AppendFloat(b, float64(i)*0.25, 'g', -1, 64)
	b = append(b, `,"flag":`...)
	b = strconv.AppendBool(b, i%2 == 0)
	b = append(b, `,"day":"`...)
	b = time.Unix((19000+i%1000)*86400, 0).UTC().AppendFormat(b, "2006-01-02")
	b = append(b, `","ts":"`...)
	b = time.UnixMilli(1_700_000_000_000+i).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = append(b, `","note":"payload-0123456789abcdef0123456789abcdef","raw":"`...)
	var raw [16]byte
	for k := range 16 {
		raw[k] = byte(i >> (k % 8 * 8))
	}
	b = base64.StdEncoding.AppendEncode(b, raw[:])
	return append(b, `"}`...)
}

// writeBody is one request of n entries starting at key first.
func writeBody(kind string, first int64, n int) []byte {
	op := "upsert"
	if kind == "log" {
		op = "append"
	}
	b := make([]byte, 0, n*260)
	b = append(b, `{"entries":[`...)
	for i := range int64(n) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":"`...)
		b = strconv.AppendInt(b, first+i, 10)
		b = append(b, `","`+op+`":`...)
		b = row(b, first+i)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// rows counts the entries of a write body (its "id" members).
func rows(body []byte) int { return bytes.Count(body, []byte(`{"id":`)) }

// writeOutcome is what one write request achieved after its retries.
type writeOutcome struct {
	ok, unknown, failed int
	status429           int
	other               map[int]int
}

// write sends body until it is not refused with 429 (after Retry-After),
// and counts its verdicts.
func (b *bench) write(table string, body []byte, gz bool) (writeOutcome, error) {
	var out writeOutcome
	out.other = map[int]int{}
	for attempt := 0; attempt < 200; attempt++ {
		req, _ := http.NewRequest("POST", b.path("/databases/"+b.c.db+"/tables/"+table+"/records"), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if gz {
			req.Header.Set("Content-Encoding", "gzip")
		}
		b.auth(req)
		resp, err := b.client.Do(req)
		if err != nil {
			return out, err
		}
		data, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == 429 {
			out.status429++
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(wait, 1)) * time.Second / 4)
			continue
		}
		if resp.StatusCode != 200 {
			out.other[resp.StatusCode]++
			if resp.StatusCode == 504 || resp.StatusCode >= 500 && resp.StatusCode != 501 {
				// A timeout or a server error after the rows may have been
				// sent: they may or may not have landed (never retried,
				// which could write them twice).
				out.unknown = rows(body)
			}
			return out, nil
		}
		var ans struct {
			Failures []struct {
				Applied string `json:"applied"`
			} `json:"failures"`
			SuccessCount int `json:"success_count"`
		}
		if err := json.Unmarshal(data, &ans); err != nil {
			return out, fmt.Errorf("answer: %w: %.200s", err, data)
		}
		out.ok = ans.SuccessCount
		for _, f := range ans.Failures {
			if f.Applied == "no" {
				out.failed++
			} else {
				out.unknown++
			}
		}
		return out, nil
	}
	return out, fmt.Errorf("write to %s refused with 429 200 times", table)
}

func (b *bench) writePoint(kind string, entries, conc int) error {
	name := fmt.Sprintf("w_%s_%d_%d", kind, entries, conc)
	pk := "k"
	if kind == "log" {
		pk = ""
	}
	if err := b.createTable(name, bench10.ColumnsJSON, pk, 4); err != nil {
		return err
	}
	requests := max(b.c.rowsPerPoint/entries, conc)
	// Bodies are built per worker and request, before the timed part only
	// for one round: building all would make the driver's memory the figure.
	r := result{point: fmt.Sprintf("write %s %d×%d", kind, entries, conc), otherStatus: map[int]int64{}}
	var next atomic.Int64
	var ok, unknown, failed, s429 atomic.Int64
	var mu sync.Mutex
	var firstErr error
	s := startSampler(b.c.pid)
	start := time.Now()
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1) - 1
				if n >= int64(requests) {
					return
				}
				out, err := b.write(name, writeBody(kind, n*int64(entries), entries), false)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				for code, k := range out.other {
					r.otherStatus[code] += int64(k)
				}
				mu.Unlock()
				ok.Add(int64(out.ok))
				unknown.Add(int64(out.unknown))
				failed.Add(int64(out.failed))
				s429.Add(int64(out.status429))
			}
		}()
	}
	wg.Wait()
	r.seconds = time.Since(start).Seconds()
	s.finish(&r)
	if firstErr != nil {
		return fmt.Errorf("%s: %w", r.point, firstErr)
	}
	r.rows, r.requests, r.status429 = ok.Load(), int64(requests), s429.Load()
	if unknown.Load() > 0 || failed.Load() > 0 {
		r.note = fmt.Sprintf("%d failed, %d unknown", failed.Load(), unknown.Load())
	}
	r.landed = b.checkLanded(name, ok.Load(), unknown.Load(), int64(requests*entries), &r)
	b.checkRSS(&r)
	b.rows = append(b.rows, r)
	return nil
}

// checkLanded compares the peer client's change-log count with the rows
// acknowledged: one record per new key or appended row.
func (b *bench) checkLanded(table string, acked, unknown, sent int64, r *result) string {
	if b.c.peer == "" {
		return "not checked"
	}
	out, err := exec.Command(b.c.peer, "offsets", b.c.db, table).Output()
	if err != nil {
		b.failed = append(b.failed, fmt.Sprintf("%s: peer offsets: %v", r.point, err))
		return "peer failed"
	}
	var offs struct {
		Buckets []struct {
			Earliest int64 `json:"earliest"`
			Latest   int64 `json:"latest"`
		} `json:"buckets"`
	}
	if err := json.Unmarshal(out, &offs); err != nil {
		b.failed = append(b.failed, fmt.Sprintf("%s: peer offsets: %v: %.200s", r.point, err, out))
		return "peer failed"
	}
	var landed int64
	for _, x := range offs.Buckets {
		landed += x.Latest - x.Earliest
	}
	if landed < acked || landed > acked+unknown {
		b.failed = append(b.failed, fmt.Sprintf("%s: %d records landed, %d rows acknowledged (%d unknown, %d sent)", r.point, landed, acked, unknown, sent))
		return fmt.Sprintf("MISMATCH %d/%d", landed, acked)
	}
	if acked+unknown < sent {
		// Rows refused with an error other than 429 (4xx, failed entries):
		// not written, and the caller was told so.
		r.note = strings.TrimSpace(r.note + fmt.Sprintf(" %d rows refused (not 429)", sent-acked-unknown))
	}
	if unknown > 0 {
		return fmt.Sprintf("%d/%d (%d unknown)", landed, acked, unknown)
	}
	return fmt.Sprintf("%d/%d once", landed, sent)
}

// lookupPoint: a table with rows of 256 KiB, 64 concurrent lookups of 128
// keys (each key 16 times).
func (b *bench) lookupPoint() error {
	cols := `[{"name":"k","data_type":{"type":"BIGINT"},"nullable":false},{"name":"blob","data_type":{"type":"BYTES"}}]`
	if err := b.createTable("wide", cols, "k", 2); err != nil {
		return err
	}
	blob := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xab}, 256<<10))
	var body strings.Builder
	body.WriteString(`{"entries":[`)
	for i := range 8 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"id":"%d","upsert":{"k":%d,"blob":"%s"}}`, i, i, blob)
	}
	body.WriteString(`]}`)
	if out, err := b.write("wide", []byte(body.String()), false); err != nil || out.ok != 8 {
		return fmt.Errorf("wide rows: %v %+v", err, out)
	}
	var keys []string
	for i := range 128 {
		keys = append(keys, fmt.Sprintf(`{"k":%d}`, i%8))
	}
	req := []byte(`{"keys":[` + strings.Join(keys, ",") + `]}`)
	r := result{point: fmt.Sprintf("lookup 128 keys (256 KiB rows) × %d", b.c.lookupConc), otherStatus: map[int]int64{}}
	s := startSampler(b.c.pid)
	start := time.Now()
	codes := b.burst(b.c.lookupConc, 4, func() (int, error) {
		return b.post("/databases/"+b.c.db+"/tables/wide/records/lookup", req, nil)
	})
	r.seconds = time.Since(start).Seconds()
	s.finish(&r)
	r.fill(codes)
	r.landed = "-"
	b.checkRSS(&r)
	b.rows = append(b.rows, r)
	return nil
}

// burst runs conc workers doing n calls each and counts the statuses.
func (b *bench) burst(conc, n int, call func() (int, error)) map[int]int64 {
	codes := map[int]int64{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				code, err := call()
				if err != nil {
					code = -1
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return codes
}

func (r *result) fill(codes map[int]int64) {
	for code, n := range codes {
		r.requests += n
		if code == 429 {
			r.status429 += n
		} else if code != 200 {
			r.otherStatus[code] += n
		}
	}
}

// bigBodyPoint: concurrent write bodies just under 32 MiB of valid rows
// (8,000 rows of 4 KiB, within the default 10,000 rows per request).
func (b *bench) bigBodyPoint() error {
	cols := `[{"name":"k","data_type":{"type":"BIGINT"},"nullable":false},{"name":"note","data_type":{"type":"STRING"}}]`
	if err := b.createTable("big", cols, "", 4); err != nil {
		return err
	}
	const entries = 8000
	note := strings.Repeat("n", (32<<20-64<<10)/entries-64)
	var body bytes.Buffer
	body.WriteString(`{"entries":[`)
	for i := range entries {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"id":"%d","append":{"k":%d,"note":"%s"}}`, i, i, note)
	}
	body.WriteString(`]}`)
	return b.bodyBurst(fmt.Sprintf("%d MiB bodies × %d", body.Len()>>20, b.c.bigBodies), "big", body.Bytes(), false, b.c.bigBodies, entries)
}

// gzipPoint: concurrent gzip bodies that expand about 300 times (rows whose
// note is a long run of one letter), held to the 32 MiB decoded limit.
func (b *bench) gzipPoint() error {
	cols := `[{"name":"k","data_type":{"type":"BIGINT"},"nullable":false},{"name":"note","data_type":{"type":"STRING"}}]`
	if err := b.createTable("gz", cols, "", 4); err != nil {
		return err
	}
	note := strings.Repeat("z", 64<<10)
	var raw bytes.Buffer
	raw.WriteString(`{"entries":[`)
	const entries = 400 // ~26 MiB decoded
	for i := range entries {
		if i > 0 {
			raw.WriteByte(',')
		}
		fmt.Fprintf(&raw, `{"id":"%d","append":{"k":%d,"note":"%s"}}`, i, i, note)
	}
	raw.WriteString(`]}`)
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = zw.Write(raw.Bytes())
	_ = zw.Close()
	return b.bodyBurst(fmt.Sprintf("gzip bodies %d KiB → %d MiB × %d", gz.Len()>>10, raw.Len()>>20, b.c.gzBodies), "gz", gz.Bytes(), true, b.c.gzBodies, entries)
}

// bodyBurst sends body to table from n concurrent senders, once each
// (b.burst), and records the point: rows acknowledged, 429s, other statuses,
// whether the acknowledged rows landed (entries rows per body) and the RSS.
func (b *bench) bodyBurst(point, table string, body []byte, gzipped bool, n, entries int) error {
	r := result{point: point, otherStatus: map[int]int64{}}
	var ok, unknown, s429 atomic.Int64
	s := startSampler(b.c.pid)
	start := time.Now()
	codes := b.burst(n, 1, func() (int, error) {
		out, err := b.write(table, body, gzipped)
		ok.Add(int64(out.ok))
		unknown.Add(int64(out.unknown))
		s429.Add(int64(out.status429))
		for code := range out.other {
			return code, err
		}
		return 200, err
	})
	r.seconds = time.Since(start).Seconds()
	s.finish(&r)
	r.fill(codes)
	r.rows, r.status429 = ok.Load(), r.status429+s429.Load()
	r.landed = b.checkLanded(table, ok.Load(), unknown.Load(), int64(n*entries), &r)
	b.checkRSS(&r)
	b.rows = append(b.rows, r)
	return nil
}

// rawHead opens a connection and sends a request head declaring a body of
// length bytes, then 16 KiB of it.
func (b *bench) rawHead(path string, length int, withAuth bool) (net.Conn, error) {
	host := strings.TrimPrefix(strings.TrimPrefix(b.c.url, "http://"), "https://")
	c, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		return nil, err
	}
	head := "POST " + path + " HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(length) + "\r\n"
	if withAuth {
		head += "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(b.c.user+":"+b.c.password)) + "\r\n"
	}
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, head+"\r\n"+`{"entries":[`+strings.Repeat(" ", 16<<10)); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// unauthPoint: connections without credentials declaring 32 MiB bodies.
func (b *bench) unauthPoint() {
	r := result{point: fmt.Sprintf("unauthenticated 32 MiB Content-Length × %d", b.c.unauthConns), otherStatus: map[int]int64{}, landed: "-"}
	s := startSampler(b.c.pid)
	before := readStatus(b.c.pid, "VmRSS")
	var conns []net.Conn
	codes := map[int]int64{}
	for range b.c.unauthConns {
		c, err := b.rawHead(b.apiPath("/databases/"+b.c.db+"/tables/big/records"), 32<<20, false)
		if err != nil {
			codes[-1]++
			continue
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		codes[statusOf(c)]++
	}
	s.finish(&r)
	for _, c := range conns {
		_ = c.Close()
	}
	r.fill(codes)
	perConn := (r.peakRSS - before) / int64(max(len(conns), 1))
	r.note = fmt.Sprintf("%d KiB per connection", max(perConn, 0)>>10)
	if perConn > 1<<20 {
		b.failed = append(b.failed, fmt.Sprintf("%s: %d KiB per unauthenticated request (> 1 MiB)", r.point, perConn>>10))
	}
	b.checkRSS(&r)
	b.rows = append(b.rows, r)
}

// fdPoint: -fd-conns connections declaring bodies over the limit (with
// credentials); then they are closed and /health must answer within 1 s.
func (b *bench) fdPoint() {
	r := result{point: fmt.Sprintf("descriptor exhaustion × %d connections", b.c.fdConns), otherStatus: map[int]int64{}, landed: "-"}
	s := startSampler(b.c.pid)
	var conns []net.Conn
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for range b.c.fdConns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := b.rawHead(b.apiPath("/databases/"+b.c.db+"/tables/big/records"), 64<<20, b.c.password != "")
			if err == nil {
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	time.Sleep(time.Second)
	for _, c := range conns {
		_ = c.Close()
	}
	end := time.Now()
	var healthy time.Duration = -1
	for time.Since(end) < 10*time.Second {
		hc := &http.Client{Timeout: time.Second}
		resp, err := hc.Get(strings.TrimRight(b.c.url, "/") + "/health")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				healthy = time.Since(end)
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.finish(&r)
	r.requests = int64(len(conns))
	r.note = fmt.Sprintf("/health %v after the connections closed", healthy.Round(time.Millisecond))
	if healthy < 0 || healthy > time.Second {
		b.failed = append(b.failed, fmt.Sprintf("%s: /health answered %v after exhaustion ended (limit 1s)", r.point, healthy))
	}
	b.checkRSS(&r)
	b.rows = append(b.rows, r)
}

// statusOf reads the status code of the answer on c (-1: none within 5 s).
func statusOf(c net.Conn) int {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, _ := io.ReadAtLeast(c, buf, 12)
	if n < 12 {
		return -1
	}
	code, err := strconv.Atoi(string(buf[9:12]))
	if err != nil {
		return -1
	}
	return code
}

func (b *bench) print() {
	fmt.Println()
	fmt.Printf("| %-48s | %9s | %8s | %6s | %-14s | %16s | %6s | %-16s | %s\n", "point", "rows/s", "requests", "429s", "other statuses", "RSS start→peak", "fds", "rows landed", "note")
	fmt.Println("|" + strings.Repeat("-", 50) + "|-----------|----------|--------|----------------|------------------|--------|------------------|-----")
	for _, r := range b.rows {
		rps := "-"
		if r.rows > 0 && r.seconds > 0 {
			rps = strconv.FormatFloat(float64(r.rows)/r.seconds, 'f', 0, 64)
		}
		var other []string
		for code, n := range r.otherStatus {
			other = append(other, fmt.Sprintf("%d:%d", code, n))
		}
		fmt.Printf("| %-48s | %9s | %8d | %6d | %-14s | %4d → %4d MiB | %6d | %-16s | %s\n", r.point, rps, r.requests, r.status429,
			strings.Join(other, " "), r.startRSS>>20, r.peakRSS>>20, r.peakFDs, r.landed, r.note)
	}
}

// HTTP helpers.

func (b *bench) apiPath(p string) string { return "/v1/clusters/" + b.c.cluster + p }

func (b *bench) path(p string) string { return strings.TrimRight(b.c.url, "/") + b.apiPath(p) }

func (b *bench) auth(req *http.Request) {
	if b.c.password != "" {
		req.SetBasicAuth(b.c.user, b.c.password)
	}
}

func (b *bench) post(p string, body []byte, hdr map[string]string) (int, error) {
	req, _ := http.NewRequestWithContext(context.Background(), "POST", b.path(p), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	b.auth(req)
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

func (b *bench) do(method, p, body string, out any) error {
	req, _ := http.NewRequest(method, b.path(p), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	b.auth(req)
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %.300s", method, p, resp.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// /proc helpers.

// readStatus is a /proc/<pid>/status size in bytes, 0 when unknown.
func readStatus(pid int, field string) int64 { return max(benchkit.Status(pid, field), 0) }

// countFDs is the open descriptors of pid, 0 when unknown.
func countFDs(pid int) int { return max(benchkit.FDs(pid), 0) }

func isComma(r rune) bool { return r == ',' }
