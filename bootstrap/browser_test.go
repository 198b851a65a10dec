package bootstrap

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// browserCall sends one request with an explicit Host and headers.
func browserCall(t *testing.T, method, url, host, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

// Issue 27, finding 3: in the default trust mode a page of another site
// (DNS rebinding: its name now resolves to 127.0.0.1) can neither create nor
// drop a database: a Host other than the loopback names, and a
// state-changing request from a foreign Origin, are 403; CORS is off.
func TestTrustModeRefusesForeignHostAndOrigin(t *testing.T) {
	rest, _ := startSecure(t, map[string]string{})
	addr := rest.Addr().String()
	_, port, _ := strings.Cut(addr, ":")
	base := "http://" + addr + dbPath

	cases := []struct {
		name, method, path, host, body string
		headers                        []string
		want                           int
	}{
		{"rebinding create", "POST", "", "attacker.example:" + port, `{"database":"r1"}`, nil, 403},
		{"rebinding read", "GET", "", "attacker.example", "", nil, 403},
		{"rebinding drop", "DELETE", "/default?ignore_if_not_exists=true", "attacker.example:" + port, "", nil, 403},
		{"foreign origin create", "POST", "", "", `{"database":"r2"}`, []string{"Origin", "http://attacker.example"}, 403},
		{"null origin create", "POST", "", "", `{"database":"r3"}`, []string{"Origin", "null"}, 403},
		{"foreign origin read is not state-changing", "GET", "", "", "", []string{"Origin", "http://attacker.example"}, 200},
		{"loopback name", "GET", "", "localhost:" + port, "", nil, 200},
		{"IPv6 loopback", "GET", "", "[::1]:" + port, "", nil, 200},
		{"same origin create", "POST", "", "", `{"database":"r4"}`, []string{"Origin", "http://" + addr}, 201},
		{"no origin create (curl)", "POST", "", "", `{"database":"r5"}`, nil, 201},
	}
	for _, tc := range cases {
		status, hdr, body := browserCall(t, tc.method, base+tc.path, tc.host, tc.body, tc.headers...)
		assert.Equal(t, tc.want, status, "%s: %s", tc.name, body)
		if tc.want == 403 {
			assert.Contains(t, body, `"code":"unauthorized"`, tc.name)
		}
		assert.Empty(t, hdr.Get("Access-Control-Allow-Origin"), "%s: CORS is off by default", tc.name)
	}
	status, _, body := browserCall(t, "GET", "http://"+addr+"/health", "attacker.example", "")
	assert.Equal(t, 200, status, "probes are exempt: %s", body)
	status, hdr, _ := browserCall(t, "OPTIONS", base, "", "", "Origin", "http://attacker.example", "Access-Control-Request-Method", "POST")
	assert.NotEqual(t, 204, status)
	assert.Empty(t, hdr.Get("Access-Control-Allow-Origin"))
}

// CORS, when configured, answers preflights and cross-origin requests of
// the allowed origins only; other origins still cannot change state.
func TestCORSConfigured(t *testing.T) {
	rest, _ := startSecure(t, map[string]string{
		"FLUSS_GATEWAY__REST__CORS__ALLOWED_ORIGINS":    "https://app.example.com",
		"FLUSS_GATEWAY__REST__CORS__MAX_AGE":            "10m",
		"FLUSS_GATEWAY__SECURITY__TRUST__ALLOWED_HOSTS": "localhost,127.0.0.1,gw.internal",
	})
	base := "http://" + rest.Addr().String() + dbPath
	status, hdr, body := browserCall(t, "OPTIONS", base, "gw.internal", "",
		"Origin", "https://app.example.com", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type,authorization")
	require.Equal(t, 204, status, body)
	assert.Equal(t, "https://app.example.com", hdr.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, hdr.Get("Access-Control-Allow-Methods"), "POST")
	assert.Contains(t, strings.ToLower(hdr.Get("Access-Control-Allow-Headers")), "authorization")
	assert.Equal(t, "600", hdr.Get("Access-Control-Max-Age"))

	status, hdr, body = browserCall(t, "POST", base, "gw.internal", `{"database":"c1"}`, "Origin", "https://app.example.com")
	assert.Equal(t, 201, status, body)
	assert.Equal(t, "https://app.example.com", hdr.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, hdr.Get("Access-Control-Expose-Headers"), "X-Request-Id")

	status, hdr, body = browserCall(t, "POST", base, "gw.internal", `{"database":"c2"}`, "Origin", "https://evil.example.com")
	assert.Equal(t, 403, status, body)
	assert.Empty(t, hdr.Get("Access-Control-Allow-Origin"))
}
