//go:build integration

package integration

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestLookupCoalescesConcurrentCalls runs many Lookup and PrefixLookup calls
// at once against rows the peer client wrote: every call gets exactly its
// own keys' answers (found, missing, every row of a prefix), and the calls
// that found a request in flight went together, so fewer requests than
// calls reached the tablet server (adapters/fluss/lookup/coalesce.go).
func TestLookupCoalescesConcurrentCalls(t *testing.T) {
	db := lkDatabase(t)
	cols := [][2]string{{"a", "int NOT NULL"}, {"b", "string NOT NULL"}, {"v", "string"}}
	path := lkCreateTable(t, db, "coalesced", cols, "--primary-key", "a,b", "--bucket-key", "a", "--buckets", "3")
	const present = 60 // a in [0, 60) has rows b = "x" and "y"; larger a has none
	var rows []map[string]any
	for a := range present {
		for _, b := range []string{"x", "y"} {
			rows = append(rows, map[string]any{"a": a, "b": b, "v": fmt.Sprintf("%d%s", a, b)})
		}
	}
	lkUpsert(t, path, rows)
	e := lkNewEnv(t)
	ctx := lkCtx(t, 90*time.Second)

	const workers, perWorker = 24, 6
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			<-start
			for i := range perWorker {
				base := (w*perWorker + i) % 80 // some of each call's keys are missing (a >= 60)
				if w%2 == 0 {
					keys := make([][]domain.Datum, 8)
					for k := range keys {
						b := []string{"x", "y", "z"}[k%3] // "z" never exists
						keys[k] = []domain.Datum{{I64: int64(base + k)}, {Bytes: []byte(b)}}
					}
					resp, err := e.lk.Lookup(ctx, &domain.LookupRequest{Table: path, Keys: keys})
					if !assert.NoError(t, err) || !assert.Len(t, resp.Results, len(keys)) {
						return
					}
					for k, key := range keys {
						r := resp.Results[k]
						a, b := key[0].I64, string(key[1].Bytes)
						if !assert.Nil(t, r.Err, "key (%d, %s)", a, b) {
							continue
						}
						if a >= present || b == "z" {
							assert.Nil(t, r.Row, "key (%d, %s) has no row", a, b)
							continue
						}
						if assert.NotNil(t, r.Row, "key (%d, %s)", a, b) {
							assert.Equal(t, fmt.Sprintf("%d%s", a, b), string(r.Row[2].Bytes), "key (%d, %s)", a, b)
						}
					}
					continue
				}
				prefixes := make([][]domain.Datum, 4)
				for k := range prefixes {
					prefixes[k] = []domain.Datum{{I64: int64(base + 5*k)}}
				}
				resp, err := e.lk.PrefixLookup(ctx, &domain.PrefixLookupRequest{Table: path, PrefixColumns: []string{"a"}, Prefixes: prefixes})
				if !assert.NoError(t, err) || !assert.Len(t, resp.Results, len(prefixes)) {
					return
				}
				for k, p := range prefixes {
					r := resp.Results[k]
					a := p[0].I64
					if !assert.Nil(t, r.Err, "prefix %d", a) {
						continue
					}
					if a >= present {
						assert.Empty(t, r.Rows, "prefix %d has no rows", a)
						continue
					}
					got := map[string]bool{}
					for _, row := range r.Rows {
						assert.Equal(t, a, row[0].I64, "prefix %d", a)
						got[string(row[2].Bytes)] = true
					}
					assert.Equal(t, map[string]bool{fmt.Sprintf("%dx", a): true, fmt.Sprintf("%dy", a): true}, got, "prefix %d", a)
				}
			}
		})
	}
	close(start)
	wg.Wait()

	reqs := e.calls.take()
	count := map[wire.APIKey]int{}
	maxKeys := map[wire.APIKey]int{}
	for _, r := range reqs {
		count[r.api]++
		maxKeys[r.api] = max(maxKeys[r.api], r.keys)
	}
	calls := workers / 2 * perWorker
	t.Logf("%d Lookup calls in %d requests (at most %d keys), %d PrefixLookup calls in %d requests (at most %d prefixes)",
		calls, count[wire.KeyLookup], maxKeys[wire.KeyLookup], calls, count[wire.KeyPrefixLookup], maxKeys[wire.KeyPrefixLookup])
	assert.Less(t, count[wire.KeyLookup], calls, "concurrent Lookup calls share requests")
	assert.Less(t, count[wire.KeyPrefixLookup], calls, "concurrent PrefixLookup calls share requests")
	assert.Greater(t, maxKeys[wire.KeyLookup], 8, "some Lookup request carries several calls' keys")
	assert.Greater(t, maxKeys[wire.KeyPrefixLookup], 4, "some PrefixLookup request carries several calls' prefixes")
}
