package http

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/memory"
	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

// testMaxBody is the body limit of the component-test gateway.
const testMaxBody = 16 << 10

// gateway is a REST API over in-memory clusters "default" and "other",
// whose sessions write and look up through the hand-written fakes writer and
// lookup.
type gateway struct {
	t         *testing.T
	app       *fiber.App
	clusters  *memory.Clusters
	readiness *Readiness
	logs      *testlog.Buffer
	writer    *fakeWriter
	lookup    *fakeLookup
	data      *dataClusters
}

type gatewayOption func(*Options, *Deps)

func withTimeout(d time.Duration) gatewayOption {
	return func(o *Options, _ *Deps) { o.RequestTimeout = d }
}

// withReadiness replaces the gateway's readiness, which otherwise starts serving.
func withReadiness(r *Readiness) gatewayOption {
	return func(_ *Options, d *Deps) { d.Readiness = r }
}

func withIdentity(id domain.Identity) gatewayOption {
	return func(_ *Options, d *Deps) { d.Identity = id }
}

func newGateway(t *testing.T, opts ...gatewayOption) *gateway {
	t.Helper()
	return newDataGateway(t, application.RecordOptions{}, opts...)
}

// newDataGateway is newGateway with the record use cases configured by ro.
func newDataGateway(t *testing.T, ro application.RecordOptions, opts ...gatewayOption) *gateway {
	t.Helper()
	clusters := memory.NewClusters("default", "other")
	data := &dataClusters{Clusters: clusters, writer: &fakeWriter{}, lookup: &fakeLookup{}}
	readiness := NewReadiness()
	readiness.SetServing()
	logs := &testlog.Buffer{}
	o := Options{
		RequestTimeout:  5 * time.Second,
		MaxRequestBytes: testMaxBody,
		Logger:          slog.New(slog.NewJSONHandler(logs, nil)),
	}
	d := Deps{Catalog: application.NewCatalogService(clusters, nil), Records: application.NewRecordService(data, ro), Readiness: readiness}
	for _, opt := range opts {
		opt(&o, &d)
	}
	app, err := New(o, d)
	require.NoError(t, err)
	return &gateway{t: t, app: app, clusters: clusters, readiness: readiness, logs: logs,
		writer: data.writer.(*fakeWriter), lookup: data.lookup.(*fakeLookup), data: data}
}

// response is a decoded reply.
type response struct {
	status int
	header nethttp.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

// errorCode returns the envelope's code after checking the envelope shape and
// its request id against the header.
func (r response) errorCode(t *testing.T) string {
	t.Helper()
	m := r.json(t)
	require.Len(t, m, 1, "envelope has one member: %s", r.body)
	e, ok := m["error"].(map[string]any)
	require.True(t, ok, "envelope: %s", r.body)
	require.Len(t, e, 3, "envelope body: %s", r.body)
	require.Equal(t, r.header.Get(HeaderRequestID), e["request_id"])
	require.NotEmpty(t, e["message"])
	return e["code"].(string)
}

func (r response) message(t *testing.T) string {
	t.Helper()
	return r.json(t)["error"].(map[string]any)["message"].(string)
}

// call sends a request; a non-empty body is sent as application/json unless
// headers set a Content-Type.
func (g *gateway) call(method, path, body string, headers ...string) response {
	g.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
		headers = append([]string{"Content-Type", "application/json"}, headers...)
	}
	r := g.send(method, path, rd, headers...)
	require.NotEmpty(g.t, r.header.Get(HeaderRequestID), "%s %s has no request id", method, path)
	return r
}

// send sends a request with the header pairs (a later pair replaces an
// earlier one of the same name); the request line carries path verbatim, so
// tests control its encoding.
func (g *gateway) send(method, path string, body io.Reader, headers ...string) response {
	g.t.Helper()
	req := httptest.NewRequest(method, "/", body)
	req.RequestURI = path
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := g.app.Test(req, -1)
	require.NoError(g.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(g.t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

const db = "/v1/clusters/default/databases"

func (g *gateway) mustCreateDatabase(name string) {
	g.t.Helper()
	r := g.call("POST", db, `{"database":"`+name+`"}`)
	require.Equal(g.t, 201, r.status, string(r.body))
}

func (g *gateway) mustCreateTable(database, body string) {
	g.t.Helper()
	r := g.call("POST", db+"/"+database+"/tables", body)
	require.Equal(g.t, 201, r.status, string(r.body))
}

// partitionedTable is a primary-key table partitioned by dt and region.
const partitionedTable = `{
  "table_name": "events",
  "columns": [
    {"name": "id", "data_type": {"type": "BIGINT"}},
    {"name": "dt", "data_type": {"type": "STRING"}},
    {"name": "region", "data_type": {"type": "STRING"}},
    {"name": "payload", "data_type": {"type": "BYTES"}}
  ],
  "primary_key": ["id", "dt", "region"],
  "partitioned_by": ["dt", "region"]
}`

// serveOnListener serves g's app on a real loopback listener until cleanup
// (limits enforced while a body is read, and streamed answers, are observed
// only there) and returns its base URL (http://127.0.0.1:port). Cleanup
// shuts the app down (5 s at most) and requires a clean end.
func serveOnListener(t *testing.T, g *gateway) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- g.app.Listener(ln) }()
	t.Cleanup(func() {
		require.NoError(t, g.app.ShutdownWithTimeout(5*time.Second))
		require.NoError(t, <-served)
	})
	return "http://" + ln.Addr().String()
}
