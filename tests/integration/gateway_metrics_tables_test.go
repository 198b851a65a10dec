//go:build integration

package integration

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	gwboot "github.com/fluss-gateway/fluss-gateway-go/bootstrap"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
)

// startMetricsGateway runs a gateway on the test cluster with Prometheus
// metrics and table labels on (plus extraEnv, KEY=value), and returns its
// cluster base URL and its metrics server's URL.
func startMetricsGateway(t *testing.T, extraEnv ...string) (base, metrics string) {
	t.Helper()
	env := map[string]string{
		"FLUSS_GATEWAY__CLUSTERS":                              "default",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS":  wrBootstrap(t),
		"FLUSS_GATEWAY__REST__LISTEN":                          "127.0.0.1:0",
		"FLUSS_GATEWAY__METRICS__ENABLED":                      "true",
		"FLUSS_GATEWAY__METRICS__EXPORTER__PROMETHEUS__LISTEN": "127.0.0.1:0",
		"FLUSS_GATEWAY__METRICS__TABLE_LABEL__ENABLED":         "true",
		"FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE":             "0s",
	}
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := config.Load(config.Options{Env: env})
	require.NoError(t, err)
	var ms *gwboot.MetricsServer
	base = runGateway(t, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)), fx.Populate(&ms)) + "/v1/clusters/default"
	return base, "http://" + ms.Addr().String()
}

// TestGatewayMetricsTableCardinality: with table labels on and
// gateway.metrics.max-tables 20, lookups on 10,000 distinct (missing) tables
// through the real HTTP stack and cluster add no table value to
// fluss_gateway_rest_requests_total (a 404 names no table: a caller cannot
// spend the label budget on tables that do not exist, issue 27), with the
// error code as a label; a lookup on a real table counts found and missed
// keys.
func TestGatewayMetricsTableCardinality(t *testing.T) {
	base, metrics := startMetricsGateway(t, "FLUSS_GATEWAY__METRICS__MAX_TABLES=20")
	g := &gateway{t: t, base: base}
	db := newDatabase(t, g, "gw_metrics")
	records := createTable(t, base, db, "real", columns("id BIGINT"), map[string]any{"primary_key": []any{"id"}})
	status, body := g.do(http.MethodPost, records, map[string]any{"entries": []any{
		map[string]any{"id": "a", "upsert": map[string]any{"id": 1}}}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	status, body = g.do(http.MethodPost, records+"/lookup", map[string]any{
		"keys": []any{map[string]any{"id": 1}, map[string]any{"id": 2}}})
	require.Equal(t, http.StatusOK, status, "%v", body)

	const n = 10_000
	var wg sync.WaitGroup
	jobs := make(chan int)
	client := &http.Client{Timeout: 10 * time.Second}
	var failures sync.Map
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				resp, err := client.Post(fmt.Sprintf("%s/databases/%s/tables/t%05d/records/lookup", base, db, i),
					"application/json", strings.NewReader(`{"keys":[{"id":1}]}`))
				if err != nil {
					failures.Store(i, err.Error())
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusNotFound {
					failures.Store(i, resp.Status)
				}
			}
		}()
	}
	start := time.Now()
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	t.Logf("%d lookups on missing tables in %s", n, time.Since(start).Round(time.Millisecond))
	failures.Range(func(k, v any) bool { t.Errorf("lookup %v: %v", k, v); return false })

	resp, err := http.Get(metrics + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	tableRe := regexp.MustCompile(`table="([^"]*)"`)
	tables := map[string]bool{}
	var series, found, missed int
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "fluss_gateway_rest_requests_total{") && strings.Contains(line, "lookup") {
			series++
			if m := tableRe.FindStringSubmatch(line); m != nil {
				tables[m[1]] = true
			}
			if strings.Contains(line, `status_code="404"`) {
				assert.Contains(t, line, `error_code="table_not_found"`)
			}
		}
		if strings.HasPrefix(line, "fluss_gateway_lookup_keys_total{") && strings.Contains(line, `table="`+db+`.real"`) {
			if strings.Contains(line, `outcome="found"`) {
				found++
			}
			if strings.Contains(line, `outcome="missed"`) {
				missed++
			}
		}
	}
	require.NoError(t, sc.Err())
	t.Logf("lookup series: %d, table values: %d", series, len(tables))
	assert.LessOrEqual(t, len(tables), 21, "%v", tables)
	assert.Equal(t, map[string]bool{db + ".real": true}, tables, "only the real table is a label value")
	assert.LessOrEqual(t, series, 2*21)
	assert.Equal(t, 1, found)
	assert.Equal(t, 1, missed)
}
