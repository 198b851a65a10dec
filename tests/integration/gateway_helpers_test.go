//go:build integration

package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gateway is the whole gateway (every fx module, the real Fluss adapter)
// started in-process on a random loopback port against the cluster at
// FLUSS_BOOTSTRAP, with the cluster id `default`.
type gateway struct {
	t    *testing.T
	base string // http://127.0.0.1:port/v1/clusters/default
}

// startGateway starts the gateway for the test and stops it at cleanup.
// extraEnv are FLUSS_GATEWAY__* overrides (key=value).
func startGateway(t *testing.T, extraEnv ...string) *gateway {
	t.Helper()
	env := map[string]string{
		"FLUSS_GATEWAY__CLUSTERS":                             "default",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS": wrBootstrap(t),
	}
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	sg := startConfigured(t, env)
	return &gateway{t: t, base: sg.base + "/v1/clusters/default"}
}

// do sends a request with an optional JSON body and returns the status and
// the decoded JSON body (nil when empty).
func (g *gateway) do(method, path string, body any) (int, map[string]any) {
	g.t.Helper()
	return httpJSON(g.t, method, g.base+path, body)
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
