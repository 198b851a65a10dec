//go:build integration

package integration

import (
	"encoding/json"
	"net/http"
	"strconv"
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

// columns builds the official `columns` of a table definition from
// "name TYPE" specs, TYPE in the official vocabulary with an optional
// "(precision)" or "(precision,scale)" and an optional " NOT NULL":
// "amount DECIMAL(10,2)" is {"name": "amount", "data_type": {"type":
// "DECIMAL", "precision": 10, "scale": 2}}.
func columns(specs ...string) []any {
	out := make([]any, len(specs))
	for i, spec := range specs {
		spec, notNull := strings.CutSuffix(spec, " NOT NULL")
		name, typ, _ := strings.Cut(spec, " ")
		dt := map[string]any{}
		typ, params, ok := strings.Cut(typ, "(")
		dt["type"] = typ
		if ok {
			p, s, hasScale := strings.Cut(strings.TrimSuffix(params, ")"), ",")
			dt["precision"], _ = strconv.Atoi(p)
			if hasScale {
				dt["scale"], _ = strconv.Atoi(s)
			}
		}
		col := map[string]any{"name": name, "data_type": dt}
		if notNull {
			col["nullable"] = false
		}
		out[i] = col
	}
	return out
}

// createTable creates the table db.table through the REST API at base (a
// cluster's URL) with the columns and the other fields of the official
// body (primary_key, partitioned_by, distribution, configs; nil: none),
// sending the headers (name, value pairs); the test fails unless the answer
// is 201 Created. It returns the table's records path below base.
func createTable(t *testing.T, base, db, table string, cols []any, fields map[string]any, headers ...string) string {
	t.Helper()
	body := map[string]any{"table_name": table, "columns": cols}
	for k, v := range fields {
		body[k] = v
	}
	status, answer := httpJSON(t, http.MethodPost, base+"/databases/"+db+"/tables", body, headers...)
	require.Equal(t, http.StatusCreated, status, "%v", answer)
	return "/databases/" + db + "/tables/" + table + "/records"
}
