// Command scanclient is the gateway side of the scan benchmark
// (tests/bench-native/scan.sh): it reads a whole table through
// POST .../records/scan, following the cursor chain from the earliest offset
// until an answer is empty and caught up, and prints one line of JSON: rows,
// seconds, requests. With -chains N > 1 it runs N chains at once, chain i
// reading the buckets b with b mod N = i (one consumer per bucket group, as
// a Kafka-style consumer group would split them).
//
// The client reads every answer whole and checks it is well-formed JSON
// while counting its records (a streaming tokenizer, as a consumer that
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
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

type answer struct {
	Records  int
	Cursor   string
	CaughtUp bool
}

// readAnswer reads a scan answer, {"records": [...], "cursor": "...",
// "caught_up": bool}, validating all of it and counting the records.
func readAnswer(r io.Reader) (answer, error) {
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
				if err := dec.SkipValue(); err != nil {
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

func chain(client *http.Client, url string, maxRows int, buckets []int) (rows, requests int, err error) {
	req := map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": maxRows}
	if buckets != nil {
		req["buckets"] = buckets
	}
	for {
		body, _ := json.Marshal(req)
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return rows, requests, err
		}
		a, err := readAnswer(resp.Body)
		resp.Body.Close()
		requests++
		if err != nil || resp.StatusCode != http.StatusOK {
			return rows, requests, fmt.Errorf("status %d: %v", resp.StatusCode, err)
		}
		rows += a.Records
		if a.Records == 0 && a.CaughtUp {
			return rows, requests, nil
		}
		req = map[string]any{"cursor": a.Cursor, "max_rows": maxRows}
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
	flag.Parse()
	url := fmt.Sprintf("%s/databases/%s/tables/%s/records/scan", *base, *db, *table)
	client := &http.Client{Timeout: 2 * time.Minute,
		Transport: &http.Transport{DisableCompression: !*gzip, MaxIdleConnsPerHost: *chains}}
	start := time.Now()
	var mu sync.Mutex
	var rows, requests int
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
			r, q, err := chain(client, url, *maxRows, mine)
			mu.Lock()
			defer mu.Unlock()
			rows, requests = rows+r, requests+q
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
	fmt.Printf("{\"rows\": %d, \"seconds\": %.3f, \"requests\": %d}\n", rows, time.Since(start).Seconds(), requests)
}
