package http

import (
	"context"
	"errors"
	"io"
	"log/slog"
	nethttp "net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

func TestMethodNotAllowedListsAllowOnTheWire(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	base := serveOnListener(t, g)
	cases := []struct {
		method, path, allow string
	}{
		{"POST", "/health", "GET"},
		{"HEAD", "/ready", "GET"},
		{"PUT", "/v1/openapi.json", "GET"},
		{"POST", "/v1/clusters", "GET"},
		{"DELETE", db, "GET, POST"},
		{"PUT", db + "/d", "GET, HEAD, DELETE"},
		{"POST", db + "/d/tables/t", "GET, HEAD, PATCH, DELETE"},
		{"GET", db + "/d/tables/t/partitions/p", "DELETE"},
		{"GET", db + "/d/tables/t/records", "POST"},
		{"GET", db + "/d/tables/t/records/lookup", "POST"},
		{"OPTIONS", db + "/d/tables/t/records/prefix-lookup", "POST"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, err := nethttp.NewRequest(tc.method, base+tc.path, nil)
			require.NoError(t, err)
			resp, err := nethttp.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, 405, resp.StatusCode)
			assert.Equal(t, tc.allow, resp.Header.Get("Allow"), "RFC 9110 §15.5.6")
			if tc.method != "HEAD" {
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				assert.Contains(t, string(body), `"method_not_allowed"`)
			}
		})
	}
}

func TestHeadMatchesGetHeaders(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.mustCreateDatabase("sales")
	g.mustCreateTable("sales", `{"table_name":"orders","columns":[{"name":"id","data_type":{"type":"INTEGER"}}],"primary_key":["id"]}`)
	base := serveOnListener(t, g)
	cases := []struct {
		name, path string
		status     int
	}{
		{"database", db + "/sales", 200},
		{"table", db + "/sales/tables/orders", 200},
		{"absent database", db + "/nope", 404},
		{"absent table", db + "/sales/tables/nope", 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			get, err := nethttp.Get(base + tc.path)
			require.NoError(t, err)
			get.Body.Close()
			head, err := nethttp.Head(base + tc.path)
			require.NoError(t, err)
			defer head.Body.Close()
			assert.Equal(t, tc.status, get.StatusCode)
			assert.Equal(t, tc.status, head.StatusCode)
			assert.Equal(t, "application/json", head.Header.Get("Content-Type"))
			assert.Equal(t, get.Header.Get("Content-Type"), head.Header.Get("Content-Type"))
			assert.NotEmpty(t, head.Header.Get(HeaderRequestID))
			body, err := io.ReadAll(head.Body)
			require.NoError(t, err)
			assert.Empty(t, body)
		})
	}
	// In process, the answer has no body either (no stray "OK").
	r := g.call("HEAD", db+"/sales", "")
	assert.Empty(t, r.body)
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
}

func TestAccessLogLevelFollowsTheFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		hook      error
		call      func(g *gateway) response
		status    int
		level     string
		code      string
		message   string
		notInLogs string
	}{
		{
			name:   "success is info",
			call:   func(g *gateway) response { return g.call("GET", db, "") },
			status: 200, level: "INFO",
		},
		{
			name:   "caller error is info",
			call:   func(g *gateway) response { return g.call("GET", db+"/nope", "") },
			status: 404, level: "INFO", code: "database_not_found", message: "does not exist",
		},
		{
			name:   "unavailable is warn with the reason",
			hook:   &domain.Error{Kind: domain.KindUnavailable, Message: "cluster `default` is unreachable: dial tcp 10.0.0.1:9123: connection refused"},
			call:   func(g *gateway) response { return g.call("GET", db, "") },
			status: 503, level: "WARN", code: "unavailable", message: "connection refused",
		},
		{
			name:   "timeout is warn",
			hook:   domain.Errorf(domain.KindTimeout, "metadata request timed out after 5s"),
			call:   func(g *gateway) response { return g.call("GET", db, "") },
			status: 504, level: "WARN", code: "timeout", message: "timed out after 5s",
		},
		{
			name:   "backend is error",
			hook:   domain.Errorf(domain.KindBackend, "coordinator answered UNKNOWN_SERVER_ERROR"),
			call:   func(g *gateway) response { return g.call("GET", db, "") },
			status: 500, level: "ERROR", code: "backend", message: "UNKNOWN_SERVER_ERROR",
		},
		{
			name:   "internal is error with the cause",
			hook:   errors.New("nil pointer in the catalog adapter"),
			call:   func(g *gateway) response { return g.call("GET", db, "") },
			status: 500, level: "ERROR", code: "internal", message: "nil pointer in the catalog adapter",
		},
		{
			name:   "unauthenticated stays info and never logs the credential",
			call:   func(g *gateway) response { return g.call("GET", db, "", "Authorization", "Bearer s3cret-token") },
			status: 200, level: "INFO", notInLogs: "s3cret-token",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t)
			if tc.hook != nil {
				g.clusters.Cluster("default").Catalog().SetHook(func(context.Context, string) error { return tc.hook })
			}
			r := tc.call(g)
			require.Equal(t, tc.status, r.status, string(r.body))
			lines := testlog.Records(t, g.logs.String(), "request")
			require.Len(t, lines, 1)
			line := lines[0]
			assert.Equal(t, tc.level, line["level"])
			if tc.code == "" {
				assert.NotContains(t, line, "error_code")
			} else {
				assert.Equal(t, tc.code, line["error_code"])
				assert.Contains(t, line["error"], tc.message)
			}
			if tc.notInLogs != "" {
				assert.NotContains(t, g.logs.String(), tc.notInLogs)
			}
		})
	}
}

func TestAccessLevel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		status  int
		failure *failure
		entries map[string]int
		want    slog.Level
	}{
		{"ok", 200, nil, nil, slog.LevelInfo},
		{"bad request", 400, &failure{code: "invalid_argument"}, nil, slog.LevelInfo},
		{"rate limited", 429, &failure{code: "resource_exhausted"}, nil, slog.LevelInfo},
		{"cancelled", 499, &failure{code: "cancelled"}, nil, slog.LevelInfo},
		{"internal", 500, &failure{code: "internal"}, nil, slog.LevelError},
		{"unsupported", 501, &failure{code: "unsupported"}, nil, slog.LevelWarn},
		{"unavailable", 503, &failure{code: "unavailable"}, nil, slog.LevelWarn},
		{"timeout", 504, &failure{code: "timeout"}, nil, slog.LevelWarn},
		{"write with caller entry failures", 200, nil, map[string]int{"invalid_argument": 2}, slog.LevelInfo},
		{"write with backend entry failures", 200, nil, map[string]int{"invalid_argument": 1, "unavailable": 3}, slog.LevelWarn},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, accessLevel(tc.status, tc.failure, tc.entries))
		})
	}
}

// The readiness grace: /ready is 503 while application requests are still
// served; draining refuses them.
func TestReadyDuringShutdownPhases(t *testing.T) {
	t.Parallel()
	rd := NewReadiness()
	rd.SetServing()
	g := newGateway(t, withReadiness(rd))
	rd.BeginShutdown()
	r := g.call("GET", "/ready", "")
	require.Equal(t, 503, r.status)
	assert.Equal(t, "unavailable", r.errorCode(t))
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	assert.True(t, strings.Contains(r.message(t), "shutting down"))
	assert.Equal(t, 200, g.call("GET", db, "").status, "application requests are served during the grace")
	rd.BeginDraining()
	assert.Equal(t, 503, g.call("GET", db, "").status)
	assert.Equal(t, 503, g.call("GET", "/ready", "").status)
}

func TestOpenAPIDeclaresErrorHeaders(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Responses map[string]struct {
				Headers map[string]any `yaml:"headers"`
			} `yaml:"responses"`
		} `yaml:"components"`
	}
	require.NoError(t, yaml.Unmarshal(openAPIYAML, &doc))
	cases := []struct{ response, header string }{
		{"MethodNotAllowed", "Allow"},
		{"Unavailable", "Retry-After"},
		{"TooManyRequests", "Retry-After"},
	}
	for _, tc := range cases {
		assert.Contains(t, doc.Components.Responses[tc.response].Headers, tc.header, tc.response)
	}
}

// TestProbesAreLoggedAtDebug: GET /health and GET /ready (also its 503 while
// draining) are logged at DEBUG, so an INFO log holds no probe lines; other
// routes stay at INFO.
func TestProbesAreLoggedAtDebug(t *testing.T) {
	g := newGateway(t)
	assert.Equal(t, 200, g.call("GET", "/health", "").status)
	assert.Equal(t, 200, g.call("GET", "/ready", "").status)
	g.readiness.BeginShutdown()
	assert.Equal(t, 503, g.call("GET", "/ready", "").status)
	assert.Equal(t, 200, g.call("GET", "/health", "").status)
	assert.Equal(t, 200, g.call("GET", "/v1/clusters", "").status)
	logs := g.logs.String()
	assert.Contains(t, logs, `"route":"/v1/clusters"`, "other routes are logged at INFO")
	assert.NotContains(t, logs, `"route":"/health"`)
	assert.NotContains(t, logs, `"route":"/ready"`)

	for _, tc := range []struct {
		route string
		in    slog.Level
		want  slog.Level
	}{
		{"/health", slog.LevelInfo, slog.LevelDebug},
		{"/ready", slog.LevelWarn, slog.LevelDebug},
		{"/ready", slog.LevelError, slog.LevelError},
		{"/v1/clusters", slog.LevelInfo, slog.LevelInfo},
	} {
		assert.Equal(t, tc.want, probeLevel(tc.route, tc.in), "%s %s", tc.route, tc.in)
	}
}
