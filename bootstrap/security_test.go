package bootstrap

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

// testPKI is a throw-away CA with helpers to issue server and client
// certificates and write them as PEM files.
type testPKI struct {
	t      *testing.T
	dir    string
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caFile string
	serial int64
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	p := &testPKI{t: t, dir: t.TempDir(), caCert: ca, caKey: key, serial: 1}
	p.caFile = p.write("ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return p
}

func (p *testPKI) write(name string, data []byte) string {
	p.t.Helper()
	path := filepath.Join(p.dir, name)
	tmp := path + ".tmp"
	require.NoError(p.t, os.WriteFile(tmp, data, 0o600))
	require.NoError(p.t, os.Rename(tmp, path))
	return path
}

// issue returns PEM certificate and key for cn; server certificates carry
// 127.0.0.1 as IP SAN.
func (p *testPKI) issue(cn string, server bool) (certPEM, keyPEM []byte) {
	p.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(p.t, err)
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"fluss-gateway tests"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	require.NoError(p.t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(p.t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// serverFiles issues a server certificate into cert.pem / key.pem.
func (p *testPKI) serverFiles(cn string) (certFile, keyFile string) {
	c, k := p.issue(cn, true)
	return p.write("cert.pem", c), p.write("key.pem", k)
}

// client returns an HTTPS client trusting the CA, with an optional client
// certificate.
func (p *testPKI) client(clientCN string) *http.Client {
	p.t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	conf := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if clientCN != "" {
		c, k := p.issue(clientCN, false)
		pair, err := tls.X509KeyPair(c, k)
		require.NoError(p.t, err)
		conf.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: conf, DisableKeepAlives: true}}
}

// startSecure starts the gateway (memory cluster) with env overrides and
// returns its REST server and the log buffer.
func startSecure(t *testing.T, env map[string]string) (*RESTServer, *testlog.Buffer) {
	t.Helper()
	logs := &testlog.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	env["FLUSS_GATEWAY__METRICS__ENABLED"] = "false"
	var rest *RESTServer
	app := fxtest.New(t, Options(testConfig(t, env), log), fx.Populate(&rest))
	app.RequireStart()
	t.Cleanup(app.RequireStop)
	return rest, logs
}

func send(t *testing.T, c *http.Client, method, url string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(body)
}

func TestTLSListenerServesHTTPSAndReloadsItsCertificate(t *testing.T) {
	pki := newTestPKI(t)
	certFile, keyFile := pki.serverFiles("gateway-1")
	rest, logs := startSecure(t, map[string]string{
		"FLUSS_GATEWAY__REST__TLS__CERT_FILE":       certFile,
		"FLUSS_GATEWAY__REST__TLS__KEY_FILE":        keyFile,
		"FLUSS_GATEWAY__REST__TLS__RELOAD_INTERVAL": "50ms",
	})
	require.Equal(t, "https", rest.Scheme())
	base := "https://" + rest.Addr().String()
	client := pki.client("")

	status, _, body := send(t, client, "GET", base+"/v1/clusters")
	assert.Equal(t, 200, status, body)

	served := func() string {
		conn, err := tls.Dial("tcp", rest.Addr().String(), &tls.Config{RootCAs: client.Transport.(*http.Transport).TLSClientConfig.RootCAs})
		require.NoError(t, err)
		defer func() { _ = conn.Close() }()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	assert.Equal(t, "gateway-1", served())

	// Plain HTTP on the TLS port is not served.
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get("http://" + rest.Addr().String() + "/health")
	if err == nil {
		resp.Body.Close()
		assert.NotEqual(t, 200, resp.StatusCode)
	}

	// TLS 1.1 is refused (min-version 1.2 by default).
	_, err = tls.Dial("tcp", rest.Addr().String(), &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11}) //nolint:gosec // the test checks the refusal
	assert.Error(t, err)

	// A half-written pair (new certificate, old key) is not picked up; the
	// old certificate keeps serving.
	c2, k2 := pki.issue("gateway-2", true)
	pki.write("cert.pem", c2)
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, "gateway-1", served())
	assert.Contains(t, logs.String(), "do not load; keeping the previous certificate")

	pki.write("key.pem", k2)
	require.Eventually(t, func() bool { return served() == "gateway-2" }, 5*time.Second, 20*time.Millisecond)
	status, _, _ = send(t, client, "GET", base+"/health")
	assert.Equal(t, 200, status)
	assert.NotEmpty(t, logs.Records(t, "REST listener TLS certificate reloaded"))
}

func TestMTLSAuthenticatesTheClientCertificate(t *testing.T) {
	pki := newTestPKI(t)
	certFile, keyFile := pki.serverFiles("gateway")
	env := func(clientAuth string) map[string]string {
		return map[string]string{
			"FLUSS_GATEWAY__SECURITY__AUTHENTICATION":             "mtls",
			"FLUSS_GATEWAY__REST__TLS__CERT_FILE":                 certFile,
			"FLUSS_GATEWAY__REST__TLS__KEY_FILE":                  keyFile,
			"FLUSS_GATEWAY__REST__TLS__CLIENT_CA_FILE":            pki.caFile,
			"FLUSS_GATEWAY__REST__TLS__CLIENT_AUTH":               clientAuth,
			"FLUSS_GATEWAY__SECURITY__ACT_AS__ALLOWED_PRINCIPALS": "ingest",
		}
	}

	t.Run("request", func(t *testing.T) {
		rest, logs := startSecure(t, env("request"))
		base := "https://" + rest.Addr().String()

		status, hdr, body := send(t, pki.client("alice"), "GET", base+"/v1/clusters/default/databases")
		assert.Equal(t, 200, status, body)
		assert.Empty(t, hdr.Get("WWW-Authenticate"))

		status, _, body = send(t, pki.client(""), "GET", base+"/v1/clusters/default/databases")
		assert.Equal(t, 401, status, body)
		assert.Contains(t, body, `"code":"unauthenticated"`)
		assert.Contains(t, body, "client certificate is required")

		// The allow-listed principal may act as another; alice may not.
		status, _, body = send(t, pki.client("ingest"), "GET", base+"/v1/clusters/default/databases", "X-Fluss-Act-As", "bob")
		assert.Equal(t, 200, status, body)
		status, _, body = send(t, pki.client("alice"), "GET", base+"/v1/clusters/default/databases", "X-Fluss-Act-As", "bob")
		assert.Equal(t, 403, status, body)
		assert.Contains(t, body, `"code":"unauthorized"`)

		// A certificate from another CA fails the handshake.
		other := newTestPKI(t)
		otherClient := other.client("mallory")
		otherClient.Transport.(*http.Transport).TLSClientConfig.RootCAs = pki.client("").Transport.(*http.Transport).TLSClientConfig.RootCAs
		_, err := otherClient.Get(base + "/v1/clusters")
		assert.Error(t, err)

		var principals []string
		for _, l := range logs.Records(t, "request") {
			if p, ok := l["principal"].(string); ok {
				principals = append(principals, p+"/"+l["auth_method"].(string)+"/"+stringOf(l["act_as"]))
			}
		}
		assert.Contains(t, principals, "alice/mtls/")
		assert.Contains(t, principals, "ingest/mtls/bob")
	})

	t.Run("require", func(t *testing.T) {
		rest, _ := startSecure(t, env("require"))
		base := "https://" + rest.Addr().String()
		status, _, body := send(t, pki.client("alice"), "GET", base+"/v1/clusters")
		assert.Equal(t, 200, status, body)
		_, err := pki.client("").Get(base + "/v1/clusters")
		require.Error(t, err, "without a client certificate the handshake fails")
	})
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

func TestCallerAuthenticationMethods(t *testing.T) {
	t.Run("token", func(t *testing.T) {
		rest, logs := startSecure(t, map[string]string{
			"FLUSS_GATEWAY__SECURITY__AUTHENTICATION": "token",
			"FLUSS_GATEWAY__SECURITY__TOKENS":         "s3cr3t-token-0123456789abcdef:alice",
			"FLUSS_GATEWAY__SECURITY__REALM":          "tests",
		})
		base := "http://" + rest.Addr().String()
		c := &http.Client{Timeout: 5 * time.Second}
		status, hdr, _ := send(t, c, "GET", base+"/v1/clusters")
		assert.Equal(t, 401, status)
		assert.Equal(t, `Bearer realm="tests"`, hdr.Get("WWW-Authenticate"))
		status, hdr, _ = send(t, c, "GET", base+"/v1/clusters", "Authorization", "Bearer wrong-token")
		assert.Equal(t, 401, status)
		assert.Equal(t, `Bearer realm="tests", error="invalid_token"`, hdr.Get("WWW-Authenticate"))
		status, _, body := send(t, c, "GET", base+"/v1/clusters", "Authorization", "Bearer s3cr3t-token-0123456789abcdef")
		assert.Equal(t, 200, status, body)
		status, _, _ = send(t, c, "GET", base+"/health")
		assert.Equal(t, 200, status, "probes need no credentials")
		status, _, _ = send(t, c, "GET", base+"/v1/openapi.json")
		assert.Equal(t, 200, status, "the document needs no credentials")
		status, _, body = send(t, c, "GET", base+"/v1/clusters", "Authorization", "Bearer s3cr3t-token-0123456789abcdef", "X-Fluss-Act-As", "bob")
		assert.Equal(t, 403, status, body)

		assert.NotContains(t, logs.String(), "s3cr3t-token-0123456789abcdef")
		assert.NotContains(t, logs.String(), "wrong-token")
		start := logs.Records(t, "caller authentication")
		require.Len(t, start, 1)
		assert.Equal(t, "token", start[0]["method"])
	})

	t.Run("password", func(t *testing.T) {
		rest, logs := startSecure(t, map[string]string{
			"FLUSS_GATEWAY__SECURITY__AUTHENTICATION": "password",
			"FLUSS_GATEWAY__SECURITY__USERS":          "alice:pa55word",
		})
		base := "http://" + rest.Addr().String()
		c := &http.Client{Timeout: 5 * time.Second}
		status, hdr, _ := send(t, c, "GET", base+"/v1/clusters")
		assert.Equal(t, 401, status)
		assert.Equal(t, `Basic realm="fluss-gateway", charset="UTF-8"`, hdr.Get("WWW-Authenticate"))
		basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
		status, _, _ = send(t, c, "GET", base+"/v1/clusters", "Authorization", basic("alice", "guess"))
		assert.Equal(t, 401, status)
		status, _, body := send(t, c, "GET", base+"/v1/clusters", "Authorization", basic("alice", "pa55word"))
		assert.Equal(t, 200, status, body)
		assert.NotContains(t, logs.String(), "pa55word")
		assert.NotContains(t, logs.String(), "guess")
	})

	t.Run("trusted-header", func(t *testing.T) {
		rest, _ := startSecure(t, map[string]string{
			"FLUSS_GATEWAY__SECURITY__AUTHENTICATION":                "trusted-header",
			"FLUSS_GATEWAY__SECURITY__TRUSTED_HEADER__TRUSTED_CIDRS": "10.0.0.0/8",
		})
		base := "http://" + rest.Addr().String()
		c := &http.Client{Timeout: 5 * time.Second}
		status, _, body := send(t, c, "GET", base+"/v1/clusters", "X-Forwarded-User", "alice")
		assert.Equal(t, 401, status, "loopback is not in the trusted CIDRs: %s", body)
	})

	t.Run("trust refuses non-loopback clients", func(t *testing.T) {
		rest, _ := startSecure(t, map[string]string{})
		// fiber's in-memory test connection comes from 0.0.0.0 (with an
		// allowed Host: trust mode answers only loopback Host names).
		req := httptest.NewRequest("GET", "/v1/clusters", nil)
		req.Host = "localhost"
		resp, err := rest.app.Test(req, -1)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 401, resp.StatusCode)

		status, _, _ := send(t, &http.Client{Timeout: 5 * time.Second}, "GET", "http://"+rest.Addr().String()+"/v1/clusters")
		assert.Equal(t, 200, status, "loopback clients are trusted")
		status, _, body := send(t, &http.Client{Timeout: 5 * time.Second}, "GET", "http://"+rest.Addr().String()+"/v1/clusters",
			"X-Fluss-Act-As", "bob")
		assert.Equal(t, 403, status, "anonymous callers cannot act as anyone: %s", body)

		open, _ := startSecure(t, map[string]string{"FLUSS_GATEWAY__SECURITY__TRUST__ALLOW_NON_LOOPBACK": "true"})
		resp, err = open.app.Test(httptest.NewRequest("GET", "/v1/clusters", nil), -1)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode)
	})
}

func TestQuotaAndAuditThroughTheGateway(t *testing.T) {
	rest, logs := startSecure(t, map[string]string{
		"FLUSS_GATEWAY__SECURITY__AUTHENTICATION":             "token",
		"FLUSS_GATEWAY__SECURITY__TOKENS":                     "tok-a-0123456789abcdef:alice,tok-b-0123456789abcdef:bob",
		"FLUSS_GATEWAY__SECURITY__QUOTA__REQUESTS_PER_SECOND": "2",
	})
	base := "http://" + rest.Addr().String()
	c := &http.Client{Timeout: 5 * time.Second}
	for i := 0; i < 2; i++ {
		status, _, body := send(t, c, "GET", base+"/v1/clusters", "Authorization", "Bearer tok-a-0123456789abcdef")
		require.Equal(t, 200, status, body)
	}
	status, hdr, body := send(t, c, "GET", base+"/v1/clusters", "Authorization", "Bearer tok-a-0123456789abcdef")
	assert.Equal(t, 429, status, body)
	assert.Contains(t, body, `"code":"resource_exhausted"`)
	assert.Contains(t, body, `quota of principal \"alice\" exceeded`)
	assert.Equal(t, "1", hdr.Get("Retry-After"))
	status, _, _ = send(t, c, "GET", base+"/v1/clusters", "Authorization", "Bearer tok-b-0123456789abcdef")
	assert.Equal(t, 200, status, "bob has his own quota")

	// A write (the memory backend has no writer) is audited.
	req, err := http.NewRequest("POST", base+"/v1/clusters/default/databases/d/tables/t/records", strings.NewReader(`{"entries":[]}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok-b-0123456789abcdef")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	audit := logs.Records(t, "audit")
	require.Len(t, audit, 1)
	assert.Equal(t, "audit", audit[0]["logger"])
	assert.Equal(t, "bob", audit[0]["principal"])
	assert.Equal(t, "d.t", audit[0]["table"])
	assert.Equal(t, "default", audit[0]["cluster"])
	assert.Equal(t, float64(resp.StatusCode), audit[0]["status"])
}

// jwtIssuer is the tests' identity provider: one P-256 key whose public
// JWK (kid k1, ES256) is the JWKS file jwksFile.
type jwtIssuer struct {
	key      *ecdsa.PrivateKey
	jwksFile string
}

func newJWTIssuer(t *testing.T) *jwtIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	jwks, err := json.Marshal(map[string]any{"keys": []any{ecJWK(key, "k1")}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "jwks.json")
	require.NoError(t, os.WriteFile(path, jwks, 0o600))
	return &jwtIssuer{key: key, jwksFile: path}
}

// sign returns claims signed with ES256 under kid k1.
func (i *jwtIssuer) sign(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = "k1"
	s, err := tok.SignedString(i.key)
	require.NoError(t, err)
	return s
}

// ecJWK is the public JWK (RFC 7518 section 6.2) of a P-256 key: the
// uncompressed point 0x04 || X || Y split into x and y.
func ecJWK(key *ecdsa.PrivateKey, kid string) map[string]any {
	point, _ := key.PublicKey.Bytes()
	b64 := base64.RawURLEncoding.EncodeToString
	return map[string]any{"kty": "EC", "crv": "P-256", "x": b64(point[1:33]), "y": b64(point[33:65]),
		"kid": kid, "alg": "ES256", "use": "sig"}
}

// TestJWTThroughTheGateway verifies OIDC/JWT bearer tokens against a JWKS
// file through the whole gateway.
func TestJWTThroughTheGateway(t *testing.T) {
	idp := newJWTIssuer(t)
	path := idp.jwksFile
	sign := func(claims jwt.MapClaims) string { return idp.sign(t, claims) }
	now := time.Now()
	valid := sign(jwt.MapClaims{"iss": "https://idp.test", "aud": "gw", "sub": "alice", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix()})
	expired := sign(jwt.MapClaims{"iss": "https://idp.test", "aud": "gw", "sub": "alice", "exp": now.Add(-time.Hour).Unix()})
	otherAud := sign(jwt.MapClaims{"iss": "https://idp.test", "aud": "other", "sub": "alice", "exp": now.Add(time.Hour).Unix()})

	rest, logs := startSecure(t, map[string]string{
		"FLUSS_GATEWAY__SECURITY__AUTHENTICATION":  "jwt",
		"FLUSS_GATEWAY__SECURITY__JWT__ISSUER":     "https://idp.test",
		"FLUSS_GATEWAY__SECURITY__JWT__AUDIENCE":   "gw",
		"FLUSS_GATEWAY__SECURITY__JWT__JWKS_FILE":  path,
		"FLUSS_GATEWAY__SECURITY__JWT__CLOCK_SKEW": "5s",
	})
	url := "http://" + rest.Addr().String() + "/v1/clusters"
	c := &http.Client{Timeout: 5 * time.Second}
	status, hdr, _ := send(t, c, "GET", url)
	assert.Equal(t, 401, status)
	assert.Equal(t, `Bearer realm="fluss-gateway"`, hdr.Get("WWW-Authenticate"))
	for _, bad := range []string{expired, otherAud, valid + "x"} {
		status, hdr, _ = send(t, c, "GET", url, "Authorization", "Bearer "+bad)
		assert.Equal(t, 401, status)
		assert.Equal(t, `Bearer realm="fluss-gateway", error="invalid_token"`, hdr.Get("WWW-Authenticate"))
	}
	status, hdr, _ = send(t, c, "GET", url, "Authorization", "Bearer a b")
	assert.Equal(t, 401, status)
	assert.Equal(t, `Bearer realm="fluss-gateway", error="invalid_request"`, hdr.Get("WWW-Authenticate"))
	status, _, body := send(t, c, "GET", url, "Authorization", "Bearer "+valid)
	assert.Equal(t, 200, status, body)

	var principals []string
	for _, l := range logs.Records(t, "request") {
		principals = append(principals, stringOf(l["principal"])+"/"+stringOf(l["auth_method"]))
	}
	assert.Contains(t, principals, "alice/jwt")
	assert.NotContains(t, logs.String(), valid)
}
