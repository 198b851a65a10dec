//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	gwboot "github.com/fluss-gateway/fluss-gateway-go/bootstrap"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
)

// gateway is the whole gateway (every fx module, the real Fluss adapter)
// started in-process on a random loopback port against the cluster at
// FLUSS_BOOTSTRAP, with the cluster id `default`.
type gateway struct {
	t    *testing.T
	base string // http://127.0.0.1:port/v1/clusters/default
	root string // http://127.0.0.1:port
}

// startGateway starts the gateway for the test and stops it at cleanup.
// extraEnv are FLUSS_GATEWAY__* overrides (key=value).
func startGateway(t *testing.T, extraEnv ...string) *gateway {
	t.Helper()
	addr := wrBootstrap(t)
	env := map[string]string{
		"FLUSS_GATEWAY__REST__LISTEN":                         "127.0.0.1:0",
		"FLUSS_GATEWAY__METRICS__ENABLED":                     "false",
		"FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE":            "0s",
		"FLUSS_GATEWAY__CLUSTERS":                             "default",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS": addr,
	}
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := config.Load(config.Options{Env: env})
	require.NoError(t, err)
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	var rest *gwboot.RESTServer
	app := gwboot.New(cfg, log, fx.Populate(&rest))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, app.Start(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = app.Stop(ctx)
	})
	root := "http://" + rest.Addr().String()
	return &gateway{t: t, base: root + "/v1/clusters/default", root: root}
}

// do sends a request with an optional JSON body and returns the status and
// the decoded JSON body (nil when empty).
func (g *gateway) do(method, path string, body any) (int, map[string]any) {
	g.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(g.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.base+path, rd)
	require.NoError(g.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(g.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(g.t, err)
	if len(raw) == 0 {
		return resp.StatusCode, nil
	}
	var out map[string]any
	require.NoError(g.t, json.Unmarshal(raw, &out), "body: %s", raw)
	return resp.StatusCode, out
}

// peerCmd runs the independent Python peer client (official pyfluss) and
// decodes its JSON answer; see tests/peer/README.md.
func peerCmd(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out := wrPeer(t, nil, args...)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m), "peer output: %s", out)
	return m
}
