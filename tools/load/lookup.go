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

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fluss-gateway/fluss-gateway-go/internal/bench10"
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
	return bench10.FloorMod(j*7919, tableRows)
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
	K    int64
	Name string
	Qty  int64
	Note string
}

func (r benchRowFields) matches(id int64) bool {
	return r.K == id && r.Name == "user-"+strconv.FormatInt(id, 10) && r.Qty == bench10.FloorMod(id, 100_000) &&
		r.Note == "payload-"+strconv.FormatInt(id, 10)+"-0123456789abcdef0123456789abcdef"
}

// lookupResult is what checkLookup reads of one element of `results`.
type lookupResult struct {
	inputIndex int64
	found      bool
	row        *benchRowFields // `row`, nil when null or absent
	rowCount   int64
	rows       []benchRowFields
}

// decoders holds idle answer decoders (one is about 8 KiB).
var decoders sync.Pool

// checkLookup counts the wrong answers in one lookup or prefix-lookup answer.
// It walks the answer with a streaming tokenizer (jsontext) and reads only
// the fields it checks: on this 2-core machine the load generator shares
// the CPU with the gateway and Fluss, and decoding whole answers by
// reflection (encoding/json) cost it about as much CPU per prefix as the
// gateway spent answering it.
func checkLookup(raw []byte, ids []int64, tableRows int64, prefix bool) (bad int, err error) {
	dec, _ := decoders.Get().(*jsontext.Decoder)
	if dec == nil {
		dec = jsontext.NewDecoder(bytes.NewReader(nil))
	}
	defer decoders.Put(dec)
	dec.Reset(bytes.NewReader(raw))
	var results []lookupResult
	err = readObject(dec, func(name []byte) error {
		if string(name) != "results" {
			return dec.SkipValue()
		}
		results = make([]lookupResult, 0, len(ids))
		return readArray(dec, func() error {
			var r lookupResult
			err := readLookupResult(dec, &r)
			results = append(results, r)
			return err
		})
	})
	if err == nil {
		switch _, err = dec.ReadToken(); err {
		case io.EOF:
			err = nil
		case nil:
			err = fmt.Errorf("data after the answer")
		}
	}
	if err != nil {
		return len(ids), err
	}
	if len(results) != len(ids) {
		return len(ids), fmt.Errorf("%d results for %d keys", len(results), len(ids))
	}
	for _, r := range results {
		if r.inputIndex < 0 || r.inputIndex >= int64(len(ids)) {
			bad++
			continue
		}
		id := ids[r.inputIndex]
		present := id < tableRows
		var ok bool
		switch {
		case prefix && present:
			ok = r.rowCount == 1 && len(r.rows) == 1 && r.rows[0].matches(id)
		case prefix:
			ok = r.rowCount == 0 && len(r.rows) == 0
		case present:
			ok = r.found && r.row != nil && r.row.matches(id)
		default:
			ok = !r.found && r.row == nil
		}
		if !ok {
			bad++
		}
	}
	return bad, nil
}

func readLookupResult(dec *jsontext.Decoder, r *lookupResult) error {
	r.inputIndex = -1
	return readObject(dec, func(name []byte) error {
		var err error
		switch string(name) {
		case "input_index":
			r.inputIndex, err = readInt(dec)
		case "row_count":
			r.rowCount, err = readInt(dec)
		case "found":
			var v jsontext.Value
			if v, err = dec.ReadValue(); err == nil {
				r.found = string(v) == "true"
			}
		case "row":
			if dec.PeekKind() == 'n' {
				_, err = dec.ReadToken()
				return err
			}
			r.row = new(benchRowFields)
			err = readBenchRow(dec, r.row)
		case "rows":
			err = readArray(dec, func() error {
				r.rows = append(r.rows, benchRowFields{})
				return readBenchRow(dec, &r.rows[len(r.rows)-1])
			})
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

func readBenchRow(dec *jsontext.Decoder, row *benchRowFields) error {
	return readObject(dec, func(name []byte) error {
		var err error
		switch string(name) {
		case "k":
			row.K, err = readInt(dec)
		case "qty":
			row.Qty, err = readInt(dec)
		case "name":
			row.Name, err = readString(dec)
		case "note":
			row.Note, err = readString(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// readObject reads one JSON object, calling field for each member name with
// the decoder before its value (which field must consume).
func readObject(dec *jsontext.Decoder, field func(name []byte) error) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("expected an object, got %v", tok.Kind())
	}
	for dec.PeekKind() != '}' {
		// The name as read (quoted); the names checked have no escapes,
		// and a name that spells one with escapes is skipped as unknown.
		name, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := field(name[1 : len(name)-1]); err != nil {
			return err
		}
	}
	_, err = dec.ReadToken()
	return err
}

// readArray reads one JSON array, calling elem for each element.
func readArray(dec *jsontext.Decoder, elem func() error) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '[' {
		return fmt.Errorf("expected an array, got %v", tok.Kind())
	}
	for dec.PeekKind() != ']' {
		if err := elem(); err != nil {
			return err
		}
	}
	_, err = dec.ReadToken()
	return err
}

// readInt reads an integer rendered as a JSON number or, for BIGINT (beyond
// JavaScript's safe integers), as a string.
func readInt(dec *jsontext.Decoder) (int64, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return 0, err
	}
	switch tok.Kind() {
	case '0':
		return strconv.ParseInt(tok.String(), 10, 64)
	case '"':
		return strconv.ParseInt(tok.String(), 10, 64)
	}
	return 0, fmt.Errorf("expected an integer, got %v", tok.Kind())
}

func readString(dec *jsontext.Decoder) (string, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return "", err
	}
	if tok.Kind() != '"' {
		return "", fmt.Errorf("expected a string, got %v", tok.Kind())
	}
	return tok.String(), nil
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
	profiled := startProfiles(bc)
	t0 := time.Now()
	res := send(bodies, ids)
	secs := time.Since(t0).Seconds()
	gw1, fl1, me1 := procTicks(c.pid), ticksOf(flussPids), procTicks(os.Getpid())
	if err := profiled(); err != nil {
		return err
	}
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
