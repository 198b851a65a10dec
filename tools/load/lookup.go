package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The lookup bench (-mode bench-lookup) is the gateway side of the lookup
// part of `make bench-native`: it looks keys of the 10-column benchmark
// table up through POST .../records/lookup (-keys keys per request), or
// through POST .../records/prefix-lookup by the bucket key k of a pfx table
// (-prefix; primary key (k, name), see BenchNative.java), with -concurrency
// closed-loop workers, after -warmup-keys keys that are not measured. Key j
// is the id BenchNative's lookup uses: (j × 7919) mod -table-rows, except
// every fourth, an id no row has. Every answer is checked: a present id must
// come back found with its row's k, name, qty and note as the generator
// makes them, a missing id not found (no rows for a prefix). It prints one
// JSON object: keys/s, request latency percentiles, the CPU of the gateway
// and of the Fluss processes over the timed part, the gateway's VmHWM and
// the number of wrong answers (any makes it fail).

// lookupConfig is the lookup bench's part of the command line.
type lookupConfig struct {
	keysPerRequest int
	totalKeys      int
	warmupKeys     int
	tableRows      int64
	prefix         bool
}

// lookupID mirrors BenchNative.lookupID.
func lookupID(j, tableRows int64) int64 {
	if j%4 == 3 {
		return 2_000_000_000 + j
	}
	return floorMod(j*7919, tableRows)
}

// lookupBodies returns the request bodies for keys first..first+n-1, per
// keys each, and the ids each body asks for.
func lookupBodies(lc lookupConfig, first, n int64) ([][]byte, [][]int64) {
	var bodies [][]byte
	var ids [][]int64
	for start := first; start < first+n; start += int64(lc.keysPerRequest) {
		end := min(start+int64(lc.keysPerRequest), first+n)
		b := []byte(`{"keys":[`)
		if lc.prefix {
			b = []byte(`{"prefix_columns":["k"],"prefixes":[`)
		}
		var these []int64
		for j := start; j < end; j++ {
			id := lookupID(j, lc.tableRows)
			if j > start {
				b = append(b, ',')
			}
			b = append(b, `{"k":`...)
			b = strconv.AppendInt(b, id, 10)
			b = append(b, '}')
			these = append(these, id)
		}
		bodies = append(bodies, append(b, "]}"...))
		ids = append(ids, these)
	}
	return bodies, ids
}

// benchRowFields are the columns of a looked-up row that are checked.
type benchRowFields struct {
	K    jsonInt `json:"k"`
	Name string  `json:"name"`
	Qty  jsonInt `json:"qty"`
	Note string  `json:"note"`
}

// jsonInt is an integer rendered as a JSON number or, for BIGINT (beyond
// JavaScript's safe integers), as a string.
type jsonInt int64

func (v *jsonInt) UnmarshalJSON(b []byte) error {
	n, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	*v = jsonInt(n)
	return err
}

func (r benchRowFields) matches(id int64) bool {
	return int64(r.K) == id && r.Name == "user-"+strconv.FormatInt(id, 10) && int64(r.Qty) == floorMod(id, 100_000) &&
		r.Note == "payload-"+strconv.FormatInt(id, 10)+"-0123456789abcdef0123456789abcdef"
}

// checkLookup counts the wrong answers in one lookup or prefix-lookup answer.
func checkLookup(raw []byte, ids []int64, tableRows int64, prefix bool) (bad int, err error) {
	var resp struct {
		Results []struct {
			InputIndex int             `json:"input_index"`
			Found      bool            `json:"found"`
			Row        *benchRowFields `json:"row"`
			RowCount   int             `json:"row_count"`
			Rows       []benchRowFields
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return len(ids), err
	}
	if len(resp.Results) != len(ids) {
		return len(ids), fmt.Errorf("%d results for %d keys", len(resp.Results), len(ids))
	}
	for _, r := range resp.Results {
		if r.InputIndex < 0 || r.InputIndex >= len(ids) {
			bad++
			continue
		}
		id := ids[r.InputIndex]
		present := id < tableRows
		var ok bool
		switch {
		case prefix && present:
			ok = r.RowCount == 1 && len(r.Rows) == 1 && r.Rows[0].matches(id)
		case prefix:
			ok = r.RowCount == 0 && len(r.Rows) == 0
		case present:
			ok = r.Found && r.Row != nil && r.Row.matches(id)
		default:
			ok = !r.Found && r.Row == nil
		}
		if !ok {
			bad++
		}
	}
	return bad, nil
}

func runLookupBench(c config, bc benchConfig, lc lookupConfig) error {
	if c.schema != "bench10" {
		return fmt.Errorf("-mode bench-lookup needs -schema bench10")
	}
	if lc.tableRows <= 0 {
		return fmt.Errorf("-table-rows must be positive")
	}
	route := "lookup"
	if lc.prefix {
		route = "prefix-lookup"
	}
	tr := &http.Transport{MaxIdleConns: c.concurrency, MaxIdleConnsPerHost: c.concurrency, IdleConnTimeout: 30 * time.Second,
		DisableCompression: true}
	hc := &http.Client{Transport: tr}
	url := fmt.Sprintf("%s/v1/clusters/%s/databases/%s/tables/%s/records/%s", strings.TrimRight(c.url, "/"), c.cluster, c.db, c.table, route)
	var flussPids []int
	for _, p := range strings.Split(bc.flussPids, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(p)); err == nil && n > 0 {
			flussPids = append(flussPids, n)
		}
	}
	type outcome struct {
		lat time.Duration
		bad int
		err string
	}
	post := func(body []byte, ids []int64) outcome {
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout+5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return outcome{bad: len(ids), err: err.Error()}
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Fluss-Request-Timeout", strconv.FormatInt(c.timeout.Milliseconds(), 10))
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return outcome{lat: time.Since(start), bad: len(ids), err: err.Error()}
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		o := outcome{lat: time.Since(start)}
		if resp.StatusCode != http.StatusOK {
			o.bad, o.err = len(ids), strconv.Itoa(resp.StatusCode)+" "+truncate(string(raw), 300)
			return o
		}
		var cerr error
		if o.bad, cerr = checkLookup(raw, ids, lc.tableRows, lc.prefix); cerr != nil {
			o.err = cerr.Error()
		} else if o.bad > 0 {
			o.err = fmt.Sprintf("%d wrong answers", o.bad)
		}
		return o
	}
	send := func(bodies [][]byte, ids [][]int64) []outcome {
		out := make([]outcome, len(bodies))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range c.concurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= len(bodies) {
						return
					}
					out[i] = post(bodies[i], ids[i])
				}
			}()
		}
		wg.Wait()
		return out
	}
	check := func(phase string, res []outcome) error {
		bad, first := 0, ""
		for _, r := range res {
			bad += r.bad
			if first == "" && r.err != "" {
				first = r.err
			}
		}
		if bad > 0 || first != "" {
			return fmt.Errorf("%s: %d wrong answers, first: %s", phase, bad, first)
		}
		return nil
	}
	wb, wids := lookupBodies(lc, 1_000_000_000, int64(lc.warmupKeys))
	if err := check("warm-up", send(wb, wids)); err != nil {
		return err
	}
	bodies, ids := lookupBodies(lc, 0, int64(lc.totalKeys))
	gw0, fl0, me0 := procTicks(c.pid), ticksOf(flussPids), procTicks(os.Getpid())
	t0 := time.Now()
	res := send(bodies, ids)
	secs := time.Since(t0).Seconds()
	gw1, fl1, me1 := procTicks(c.pid), ticksOf(flussPids), procTicks(os.Getpid())
	if err := check("timed", res); err != nil {
		return err
	}
	lat := make([]time.Duration, len(res))
	for i, r := range res {
		lat[i] = r.lat
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	out := map[string]any{
		"keys": lc.totalKeys, "requests": len(res), "keys_per_request": lc.keysPerRequest, "concurrency": c.concurrency,
		"prefix": lc.prefix, "seconds": secs, "keys_per_s": float64(lc.totalKeys) / secs,
		"p50_ms": ms(pct(lat, 0.50)), "p99_ms": ms(pct(lat, 0.99)), "bad": 0,
		"gateway_ticks": gw1 - gw0, "fluss_ticks": fl1 - fl0, "load_ticks": me1 - me0,
		"gateway_hwm_kb": procStatusKB(c.pid, "VmHWM"),
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return nil
}
