//go:build deploy

package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/telemetry"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// eventOnly lists the families the dashboard queries that a running
// gateway exports only once the event they count has happened, which a short
// run against a healthy local cluster does not cause. Their names and labels
// are checked against an in-process exposition in which every instrument has
// recorded a value (exposition below), so a wrong name or label still fails.
//
// The KV pressure and throttle families come from cooperative KV
// backpressure (apache/fluss PR #3463, PutKv v2), which the local Fluss 0.9.1
// server does not offer; helper h3 adds the pressure/throttle path in
// parallel. The lead can drop those three entries when the backpressure
// suite (a Fluss 1.0 server) runs this test's scrape.
var eventOnly = map[string]string{
	"fluss_client_writer_kv_pressure_bucket":        "only after a server reported KV pressure (PutKv v2)",
	"fluss_client_writer_kv_pressure_count":         "only after a server reported KV pressure (PutKv v2)",
	"fluss_client_writer_kv_throttle_seconds_total": "only after the writer throttled for pressure (PutKv v2)",
	"fluss_client_writer_retries_total":             "only after a batch was retried",
	"fluss_gateway_connections_closed_total":        "only after a Fluss connection closed",
	"fluss_gateway_connections_failed_total":        "only after a Fluss connection failed",
}

// promLabelsAddedByScrape are labels Prometheus adds (or histograms carry)
// that the exposition's series need not show.
var promLabelsAddedByScrape = map[string]bool{"job": true, "instance": true, "le": true}

// TestDashboardQueriesExportedMetrics starts the gateway binary against the
// real Fluss cluster at $FLUSS_BOOTSTRAP, drives catalog calls, writes (with
// a failing entry) and lookups through it, scrapes its Prometheus listener
// and checks that every metric family the Grafana dashboard queries is one
// the gateway exports, and that every label a query aggregates by, filters
// on or (a variable) lists is a label of one of the query's families. The
// gateway runs with gateway.metrics.table-label.enabled, which the
// dashboard's Table variable needs (README, Deploy).
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	bin, boot := os.Getenv("GATEWAY_BIN"), os.Getenv("FLUSS_BOOTSTRAP")
	if bin == "" || boot == "" {
		t.Fatal("set GATEWAY_BIN and FLUSS_BOOTSTRAP (a running Fluss cluster); tests/deploy/test-deploy.sh does")
	}
	queries := dashboardQueries(t, "../../deployments/grafana/fluss-gateway.json")
	require.NotEmpty(t, queries)

	rest, metrics := freeAddr(t), freeAddr(t)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		"gateway.rest.listen: %s\ngateway.metrics.exporter.prometheus.listen: %s\ngateway.cluster.default.bootstrap.servers: %s\n"+
			"gateway.metrics.table-label.enabled: true\n",
		rest, metrics, boot)), 0o600))
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	base := "http://" + rest
	require.Eventually(t, func() bool { return status(base+"/ready", "GET", "") == 200 }, 60*time.Second, 200*time.Millisecond, "gateway not ready: %s", &logs)

	db := fmt.Sprintf("dash_%d", time.Now().UnixNano()%1_000_000_000)
	dbs := base + "/v1/clusters/default/databases"
	require.Equal(t, 201, status(dbs, "POST", `{"database":"`+db+`"}`), logs.String())
	t.Cleanup(func() { status(dbs+"/"+db+"?cascade=true", "DELETE", "") })
	require.Equal(t, 201, status(dbs+"/"+db+"/tables", "POST", `{"table_name":"kv","columns":[
		{"name":"id","data_type":{"type":"BIGINT"}},{"name":"v","data_type":{"type":"STRING"}}],
		"primary_key":["id"],"distribution":{"bucket_count":2}}`))
	records := dbs + "/" + db + "/tables/kv/records"
	require.Eventually(t, func() bool {
		return status(records, "POST", `{"entries":[{"id":"a","upsert":{"id":1,"v":"x"}},{"id":"b","upsert":{"id":2,"v":"y"}},{"id":"c","delete":{"id":3}}]}`) == 200
	}, 30*time.Second, 500*time.Millisecond)
	require.Equal(t, 200, status(records+"/lookup", "POST", `{"keys":[{"id":1},{"id":7}]}`))
	require.Equal(t, 404, status(dbs+"/no_such_db_h5", "GET", ""))
	require.Equal(t, 400, status(records, "POST", `{"entries":[{"id":"x","upsert":{"id":"not a number","v":"x"}}]}`))

	families := scrape(t, "http://"+metrics+"/metrics")
	everything := exposition(t)

	var missing []string
	for _, q := range queries {
		names := metricNames(q.expr)
		require.NotEmpty(t, names, "%s: no metric in %q", q.panel, q.expr)
		labels := map[string]bool{}
		for _, n := range names {
			fam, ok := families[n]
			if !ok {
				why, allowed := eventOnly[n]
				if fam, ok = everything[n]; !allowed || !ok {
					missing = append(missing, fmt.Sprintf("%s: %s %s", q.panel, n, why))
					continue
				}
			}
			for l := range fam {
				labels[l] = true
			}
		}
		for _, l := range groupingLabels(q.expr) {
			assert.True(t, labels[l] || promLabelsAddedByScrape[l], "%s: aggregates by %q, which no family of %v has", q.panel, l, names)
		}
		for _, l := range matcherLabels(q.expr) {
			assert.True(t, labels[l] || promLabelsAddedByScrape[l], "%s: filters on %q, which no family of %v has", q.panel, l, names)
		}
		if q.label != "" {
			assert.True(t, labels[q.label] || promLabelsAddedByScrape[q.label], "%s: lists the values of %q, which no family of %v has", q.panel, q.label, names)
		}
	}
	assert.Empty(t, missing, "dashboard queries families the gateway does not export (scrape has %v)", keys(families))
	t.Logf("%d dashboard queries over %d exported families checked (%d event-only allowed)", len(queries), len(families), len(eventOnly))
}

// query is one PromQL expression of the dashboard; label is the label a
// variable's label_values lists.
type query struct{ panel, expr, label string }

// dashboardQueries returns every PromQL expression of the dashboard: panel
// targets (rows included) and query variables.
func dashboardQueries(t *testing.T, path string) []query {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
			Panels []json.RawMessage `json:"panels"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &d))
	var out []query
	labelValues := regexp.MustCompile(`^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		require.NoError(t, json.Unmarshal(v.Query, &q), v.Name)
		m := labelValues.FindStringSubmatch(q.Query)
		require.NotNil(t, m, "variable %s: %q is not label_values(selector, label)", v.Name, q.Query)
		out = append(out, query{panel: "variable " + v.Name, expr: m[1], label: m[2]})
	}
	for _, p := range d.Panels {
		require.Empty(t, p.Panels, "collapsed rows are not parsed: %s", p.Title)
		for _, tg := range p.Targets {
			out = append(out, query{panel: p.Title, expr: tg.Expr})
		}
	}
	return out
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true,
		"group_right": true, "bool": true, "and": true, "or": true, "unless": true, "offset": true, "inf": true, "nan": true}
)

// metricNames returns the metric names a PromQL expression selects: its
// identifiers once strings, label matchers, ranges and grouping lists are
// removed, except function names (followed by "(") and keywords.
func metricNames(expr string) []string {
	s := promString.ReplaceAllString(expr, `""`)
	s = promMatchers.ReplaceAllString(s, " ")
	s = promRange.ReplaceAllString(s, " ")
	s = promGrouping.ReplaceAllString(s, " ")
	seen := map[string]bool{}
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(s, -1) {
		id := s[loc[0]:loc[1]]
		if loc[0] > 0 && (s[loc[0]-1] >= '0' && s[loc[0]-1] <= '9' || s[loc[0]-1] == '.') {
			continue // the exponent of a number such as 1e-9
		}
		rest := strings.TrimLeft(s[loc[1]:], " \t\n")
		if strings.HasPrefix(rest, "(") || promKeywords[strings.ToLower(id)] || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

// groupingLabels returns the labels of the expression's by (...) clauses.
func groupingLabels(expr string) []string {
	var out []string
	for _, m := range promGrouping.FindAllStringSubmatch(promString.ReplaceAllString(expr, `""`), -1) {
		if m[1] != "by" {
			continue
		}
		for _, l := range strings.Split(m[2], ",") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// matcherLabels returns the label names the expression's selectors match on.
func matcherLabels(expr string) []string {
	var out []string
	name := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*""`)
	for _, m := range promMatchers.FindAllString(promString.ReplaceAllString(expr, `""`), -1) {
		for _, l := range name.FindAllStringSubmatch(m, -1) {
			out = append(out, l[1])
		}
	}
	return out
}

// scrape reads a Prometheus text exposition into family -> label names,
// naming histogram series by their _bucket/_sum/_count names as PromQL does.
func scrape(t *testing.T, url string) map[string]map[string]bool {
	resp, err := nethttp.Get(url) //nolint:gosec,noctx // test URL on loopback
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	out := map[string]map[string]bool{}
	series := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? `)
	label := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := series.FindStringSubmatch(line)
		require.NotNil(t, m, "exposition line %q", line)
		if out[m[1]] == nil {
			out[m[1]] = map[string]bool{}
		}
		for _, l := range label.FindAllStringSubmatch(promString.ReplaceAllStringFunc(m[2], func(s string) string { return `"` }), -1) {
			out[m[1]][l[1]] = true
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// exposition returns the families and labels of the gateway's Prometheus
// exposition when every instrument has recorded a value: the production
// telemetry setup (adapters/telemetry) with each hook called once.
func exposition(t *testing.T) map[string]map[string]bool {
	ctx := context.Background()
	p, err := telemetry.Setup(ctx, telemetry.Options{Prometheus: true, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Shutdown(ctx) })
	in, err := telemetry.NewInstrumentation(telemetry.InstrumentationOptions{TracerProvider: p.TracerProvider, MeterProvider: p.MeterProvider,
		TableLabel: true})
	require.NoError(t, err)
	table := domain.TablePath{Database: "shop", Table: "orders"}
	in.Gateway().ObserveRequest(ctx, "POST", "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records", 429, time.Millisecond)
	in.Gateway().RecordEntries(ctx, table, []domain.EntryResult{{}, {Code: "timeout", Applied: domain.AppliedUnknown}})
	f := in.FlussHooks("default")
	f.OnFlussConnect("127.0.0.1:9123", time.Millisecond, nil)
	f.OnFlussConnect("127.0.0.1:9124", time.Millisecond, errors.New("connection refused"))
	f.OnFlussDisconnect("127.0.0.1:9123", nil)
	f.OnFlussRequest(ctx, "127.0.0.1:9123", "PUT_KV", 0, 10, 10, time.Millisecond, nil)
	w := in.WriterHooks("default")
	w.BatchesSent(table, 1, 1, 100)
	w.Retried(table, 1, "not_leader_or_follower")
	w.EntriesDone(table, 1, nil)
	w.BufferUsage(100, 1000)
	w.KvPressure(table, 0, 0.5, time.Second)
	srv := httptest.NewServer(p.MetricsHandler)
	defer srv.Close()
	return scrape(t, srv.URL)
}

func status(url, method, body string) int {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := nethttp.NewRequest(method, url, rd)
	if err != nil {
		return 0
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := nethttp.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestPromQLMetricNames(t *testing.T) {
	tests := []struct {
		expr   string
		names  []string
		labels []string
	}{
		{`sum by (route, method) (rate(fluss_gateway_rest_requests_total{job=~"$job", x="a{b}"}[$__rate_interval]))`,
			[]string{"fluss_gateway_rest_requests_total"}, []string{"route", "method"}},
		{`histogram_quantile(0.99, sum by (le, api) (rate(x_bucket{a="b"}[5m])))`, []string{"x_bucket"}, []string{"le", "api"}},
		{`sum(rate(a_total{s="5xx"}[1m])) / clamp_min(sum(rate(a_total[1m])), 1e-9)`, []string{"a_total"}, nil},
		{`max by (instance) (used{c="x"} / capacity{c="x"})`, []string{"used", "capacity"}, []string{"instance"}},
		{`a_total{x="y"}`, []string{"a_total"}, nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.names, metricNames(tt.expr), tt.expr)
		assert.Equal(t, tt.labels, groupingLabels(tt.expr), tt.expr)
	}
}

func TestPromQLMatcherLabels(t *testing.T) {
	tests := []struct {
		expr   string
		labels []string
	}{
		{`sum by (route) (rate(fluss_gateway_rest_requests_total{job=~"$job", x="a{b}", table!~"t=x"}[5m]))`, []string{"job", "x", "table"}},
		{`max by (instance) (used{c="x"} / capacity)`, []string{"c"}},
		{`a_total`, nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.labels, matcherLabels(tt.expr), tt.expr)
	}
}
