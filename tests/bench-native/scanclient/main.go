// Command scanclient is the gateway side of the scan benchmark
// (tests/bench-native/scan.sh): it reads a whole table through
// POST .../records/scan, following the cursor chain from the earliest offset
// until an answer is empty and caught up, and prints one line of JSON: rows,
// seconds, requests. With -chains N > 1 it runs N chains at once, chain i
// reading the buckets b with b mod N = i (one consumer per bucket group, as
// a Kafka-style consumer group would split them).
//
// With -ndjson the answers are streamed NDJSON, read record by record as
// they arrive (the gateway renders and sends them in runs).
//
// With -prefetch, a chain sends its next request as soon as an answer's
// headers carry the cursor (X-Fluss-Scan-Cursor, an extension) and reads
// the answer's records meanwhile, as the Java client's LogScanner fetches
// ahead while the application handles its records; the answers are still
// read in chain order.
//
// Every row exactly once: the client reads each record's "bucket" and
// "offset" and fails unless every bucket's offsets run 0, 1, 2, ... without a
// gap or a repeat (a log table's offsets are dense), so rows == the rows
// written means each was read once. The client reads every answer whole and
// checks it is well-formed JSON while counting its records (a streaming tokenizer, as a consumer that
// hands each record on would; the Java side's LogScanner likewise hands
// out rows without rendering them). Answers are not gzip'd unless -gzip:
// both sides read over loopback, and the Java client's fetches are not
// recompressed either (their Arrow batches are ZSTD as stored).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

type answer struct {
	Records  int
	Cursor   string
	CaughtUp bool
}

// offsets holds the next offset each bucket must show (one chain's buckets).
type offsets map[int64]int64

// readRecord reads one record object (validated whole: well-formed, no
// name twice), checking its bucket's offset is the next one.
func (next offsets) readRecord(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return next.check(v)
}

// check checks that the record v (a whole, valid JSON value) is its
// bucket's next offset.
func (next offsets) check(v jsontext.Value) error {
	var err error
	if v.Kind() != '{' {
		return errors.New("record: not an object")
	}
	bucket, offset, ok := leadingPosition(v)
	if !ok {
		if bucket, offset, err = position(jsontext.NewDecoder(bytes.NewReader(v))); err != nil {
			return err
		}
	}
	if offset != next[bucket] {
		return fmt.Errorf("bucket %d: offset %d where %d was due (a row lost or read twice)", bucket, offset, next[bucket])
	}
	next[bucket] = offset + 1
	return nil
}

// leadingPosition reads the bucket and offset of a record that starts as
// the gateway renders it, {"partition":"…",} (optional, without escapes)
// "bucket":N,"offset":M,…; ok is false for any other start. The record is
// valid JSON without duplicate names (ReadValue checked it), so these are
// its only "bucket" and "offset".
func leadingPosition(v []byte) (bucket, offset int64, ok bool) {
	rest, found := bytes.CutPrefix(v, []byte(`{`))
	if p, has := bytes.CutPrefix(rest, []byte(`"partition":"`)); has {
		end := bytes.IndexByte(p, '"')
		if end < 0 || bytes.IndexByte(p[:end], '\\') >= 0 || len(p) <= end+1 || p[end+1] != ',' {
			return 0, 0, false
		}
		rest = p[end+2:]
	}
	number := func(name string) (int64, bool) {
		var ok bool
		if rest, ok = bytes.CutPrefix(rest, []byte(`"`+name+`":`)); !ok {
			return 0, false
		}
		n, digits := int64(0), 0
		for digits < len(rest) && digits < 18 && rest[digits] >= '0' && rest[digits] <= '9' {
			n = 10*n + int64(rest[digits]-'0')
			digits++
		}
		if digits == 0 || digits >= len(rest) || rest[digits] != ',' || (rest[0] == '0' && digits > 1) {
			return 0, false
		}
		rest = rest[digits+1:]
		return n, true
	}
	if !found {
		return 0, 0, false
	}
	if bucket, ok = number("bucket"); !ok {
		return 0, 0, false
	}
	if offset, ok = number("offset"); !ok {
		return 0, 0, false
	}
	return bucket, offset, true
}

// position reads the bucket and offset of one record object, token by
// token.
func position(dec *jsontext.Decoder) (int64, int64, error) {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return 0, 0, fmt.Errorf("record: not an object: %v", err)
	}
	bucket, offset := int64(-1), int64(-1)
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return 0, 0, err
		}
		switch key := name.String(); key {
		case "bucket", "offset":
			tok, err := dec.ReadToken()
			if err != nil || tok.Kind() != '0' {
				return 0, 0, fmt.Errorf("record %s: not a number: %v", key, err)
			}
			n, err := tok.Int()
			if err != nil {
				return 0, 0, fmt.Errorf("record %s: %v", key, err)
			}
			if key == "bucket" {
				bucket = n
			} else {
				offset = n
			}
		default:
			if err := dec.SkipValue(); err != nil {
				return 0, 0, err
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return 0, 0, err
	}
	if bucket < 0 || offset < 0 {
		return 0, 0, errors.New("record without bucket or offset")
	}
	return bucket, offset, nil
}

// readAnswer reads a scan answer, {"records": [...], "cursor": "...",
// "caught_up": bool}, validating all of it, counting the records and
// checking their offsets against next.
func readAnswer(r io.Reader, next offsets) (answer, error) {
	var a answer
	dec := jsontext.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return a, fmt.Errorf("not a JSON object: %v", err)
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return a, err
		}
		switch name.String() {
		case "records":
			if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
				return a, fmt.Errorf("records: not an array: %v", err)
			}
			for dec.PeekKind() != ']' {
				if err := next.readRecord(dec); err != nil {
					return a, err
				}
				a.Records++
			}
			if _, err := dec.ReadToken(); err != nil {
				return a, err
			}
		case "cursor":
			tok, err := dec.ReadToken()
			if err != nil {
				return a, err
			}
			a.Cursor = tok.String()
		case "caught_up":
			tok, err := dec.ReadToken()
			if err != nil {
				return a, err
			}
			a.CaughtUp = tok.Kind() == 't'
		default:
			if err := dec.SkipValue(); err != nil {
				return a, err
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return a, err
	}
	if a.Cursor == "" {
		return a, errors.New("no cursor")
	}
	return a, nil
}

// sent is a request of a chain under way.
type sent struct {
	t0   time.Time
	resp *http.Response
	err  error
}

// ndjson: the chains ask for streamed NDJSON answers (-ndjson).
var ndjson bool

// send posts req and returns where its answer (headers) will come.
func send(client *http.Client, url string, req map[string]any) <-chan sent {
	body, _ := json.Marshal(req)
	out := make(chan sent, 1)
	go func() {
		t0 := time.Now()
		r, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			out <- sent{t0: t0, err: err}
			return
		}
		r.Header.Set("Content-Type", "application/json")
		if ndjson {
			r.Header.Set("Accept", "application/x-ndjson")
		}
		resp, err := client.Do(r)
		out <- sent{t0: t0, resp: resp, err: err}
	}()
	return out
}

// chain follows one cursor chain to its end. With prefetch, the next request
// is sent as soon as an answer's headers carry its cursor
// (X-Fluss-Scan-Cursor, not caught up), and the answer's records are read
// while the gateway reads the next ones; the answers are still read one
// after the other, in chain order, and each body's cursor must be the
// header's.
// readNDJSON reads a streamed NDJSON scan answer: one record per line,
// each validated whole and checked against next, then the line
// {"cursor":…,"caught_up":…} last (a line {"error":…} fails).
func readNDJSON(r io.Reader, next offsets) (answer, error) {
	var a answer
	dec := jsontext.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	for {
		v, err := dec.ReadValue()
		if err == io.EOF {
			return a, errors.New("no cursor line")
		}
		if err != nil {
			return a, err
		}
		if bytes.HasPrefix(v, []byte(`{"cursor":`)) || bytes.HasPrefix(v, []byte(`{"error":`)) {
			var tail struct {
				Cursor   string          `json:"cursor"`
				CaughtUp bool            `json:"caught_up"`
				Error    json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(v, &tail); err != nil {
				return a, err
			}
			if tail.Error != nil || tail.Cursor == "" {
				return a, fmt.Errorf("the answer ended with %s", v)
			}
			if _, err := dec.ReadValue(); err != io.EOF {
				return a, fmt.Errorf("a line after the cursor line: %v", err)
			}
			a.Cursor, a.CaughtUp = tail.Cursor, tail.CaughtUp
			return a, nil
		}
		if err := next.check(v); err != nil {
			return a, err
		}
		a.Records++
	}
}

func chain(client *http.Client, url string, maxRows int, buckets []int, prefetch bool, took *[]time.Duration) (rows, requests int, err error) {
	req := map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": maxRows}
	if buckets != nil {
		req["buckets"] = buckets
	}
	next := offsets{}
	cur := send(client, url, req)
	for {
		s := <-cur
		if s.err != nil {
			return rows, requests, s.err
		}
		var ahead <-chan sent
		headerCursor := s.resp.Header.Get("X-Fluss-Scan-Cursor")
		if prefetch && s.resp.StatusCode == http.StatusOK && headerCursor != "" && s.resp.Header.Get("X-Fluss-Scan-Caught-Up") == "false" {
			ahead = send(client, url, map[string]any{"cursor": headerCursor, "max_rows": maxRows})
		}
		read := readAnswer
		if ndjson {
			read = readNDJSON
		}
		a, err := read(s.resp.Body, next)
		s.resp.Body.Close()
		*took = append(*took, time.Since(s.t0))
		requests++
		if err == nil && ahead != nil && a.Cursor != headerCursor {
			err = fmt.Errorf("the body's cursor %q is not the header's %q", a.Cursor, headerCursor)
		}
		if err != nil || s.resp.StatusCode != http.StatusOK {
			discard(ahead)
			return rows, requests, fmt.Errorf("status %d: %v", s.resp.StatusCode, err)
		}
		rows += a.Records
		if a.Records == 0 && a.CaughtUp {
			discard(ahead) // never: no request is sent ahead of a caught-up answer
			return rows, requests, nil
		}
		if ahead == nil {
			ahead = send(client, url, map[string]any{"cursor": a.Cursor, "max_rows": maxRows})
		}
		cur = ahead
	}
}

// discard waits for a request sent ahead and drops its answer.
func discard(ahead <-chan sent) {
	if ahead == nil {
		return
	}
	if s := <-ahead; s.err == nil {
		_, _ = io.Copy(io.Discard, s.resp.Body)
		s.resp.Body.Close()
	}
}

func main() {
	base := flag.String("url", "http://127.0.0.1:28088/v1/clusters/default", "cluster base URL")
	db := flag.String("db", "", "database")
	table := flag.String("table", "", "table")
	maxRows := flag.Int("max-rows", 10000, "max_rows per request")
	chains := flag.Int("chains", 1, "cursor chains run at once, over disjoint bucket groups")
	buckets := flag.Int("buckets", 4, "bucket count of the table (with -chains > 1)")
	gzip := flag.Bool("gzip", false, "ask for gzip'd answers (Accept-Encoding: gzip)")
	flag.BoolVar(&ndjson, "ndjson", false, "ask for streamed NDJSON answers (Accept: application/x-ndjson), read line by line as they arrive")
	prefetch := flag.Bool("prefetch", false, "send a chain's next request as soon as an answer's headers carry its cursor (X-Fluss-Scan-Cursor)")
	flag.Parse()
	url := fmt.Sprintf("%s/databases/%s/tables/%s/records/scan", *base, *db, *table)
	client := &http.Client{Timeout: 2 * time.Minute,
		Transport: &http.Transport{DisableCompression: !*gzip, MaxIdleConnsPerHost: 2 * *chains}}
	start := time.Now()
	var mu sync.Mutex
	var rows, requests int
	var took []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	for i := range *chains {
		var mine []int
		if *chains > 1 {
			for b := i; b < *buckets; b += *chains {
				mine = append(mine, b)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mineTook []time.Duration
			r, q, err := chain(client, url, *maxRows, mine, *prefetch, &mineTook)
			mu.Lock()
			defer mu.Unlock()
			rows, requests = rows+r, requests+q
			took = append(took, mineTook...)
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		fmt.Fprintln(os.Stderr, "scanclient:", firstErr)
		os.Exit(1)
	}
	secs := time.Since(start).Seconds()
	slices.Sort(took)
	pct := func(p float64) float64 {
		if len(took) == 0 {
			return 0
		}
		return float64(took[int(p*float64(len(took)-1))].Microseconds()) / 1000
	}
	fmt.Printf("{\"rows\": %d, \"seconds\": %.3f, \"requests\": %d, \"p50_ms\": %.1f, \"p99_ms\": %.1f}\n",
		rows, secs, requests, pct(0.50), pct(0.99))
}
