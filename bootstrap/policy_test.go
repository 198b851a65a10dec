package bootstrap

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

// testPolicy: alice may read, write and run DDL on the sales database (not
// drop it); the admins group may do everything; the anonymous principal of
// trust mode may read; everyone else is denied (deny by default).
const testPolicy = `
groups:
  admins: [root]
rules:
  - principals: [alice]
    operations: [read, write, ddl]
    tables: ["sales.*"]
  - principals: ["group:admins"]
    operations: ["*"]
    tables: ["*"]
  - principals: [anonymous]
    operations: [read]
    tables: ["*"]
`

// caller sends requests as one principal of a mode.
type caller func(t *testing.T, method, url string) (int, string)

// policyMode starts the gateway in one authentication mode with the policy
// and returns its base URL, the log and callers for alice, bob and an
// administrator (a member of admins: by the policy's groups, a JWT groups
// claim or a certificate OU, as the mode allows).
type policyMode struct {
	name  string
	start func(t *testing.T, env map[string]string) (base string, logs *testlog.Buffer, alice, bob, admin caller)
}

func headerCaller(c *http.Client, headers ...string) caller {
	return func(t *testing.T, method, url string) (int, string) {
		status, _, body := sendBody(t, c, method, url, headers...)
		return status, body
	}
}

// sendBody is send with a JSON body for POST.
func sendBody(t *testing.T, c *http.Client, method, url string, headers ...string) (int, http.Header, string) {
	t.Helper()
	var body string
	if method == "POST" {
		_, name, _ := strings.Cut(url, "#")
		url = strings.TrimSuffix(url, "#"+name)
		body = `{"database":"` + name + `"}`
		headers = append(headers, "Content-Type", "application/json")
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b := new(strings.Builder)
	_, _ = io.Copy(b, resp.Body)
	return resp.StatusCode, resp.Header, b.String()
}

func policyModes() []policyMode {
	plain := &http.Client{Timeout: 10 * time.Second}
	basic := func(u, p string) []string {
		return []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p))}
	}
	return []policyMode{
		{"password", func(t *testing.T, env map[string]string) (string, *testlog.Buffer, caller, caller, caller) {
			env["FLUSS_GATEWAY__SECURITY__AUTHENTICATION"] = "password"
			env["FLUSS_GATEWAY__SECURITY__USERS"] = cheapUsers(t, "alice", "a-pass", "bob", "b-pass", "root", "r-pass")
			rest, logs := startSecure(t, env)
			return "http://" + rest.Addr().String(), logs,
				headerCaller(plain, basic("alice", "a-pass")...), headerCaller(plain, basic("bob", "b-pass")...), headerCaller(plain, basic("root", "r-pass")...)
		}},
		{"token", func(t *testing.T, env map[string]string) (string, *testlog.Buffer, caller, caller, caller) {
			env["FLUSS_GATEWAY__SECURITY__AUTHENTICATION"] = "token"
			env["FLUSS_GATEWAY__SECURITY__TOKENS"] = "alice-0123456789abcdef:alice,bob-0123456789abcdef:bob,root-0123456789abcdef:root"
			rest, logs := startSecure(t, env)
			b := func(tok string) caller { return headerCaller(plain, "Authorization", "Bearer "+tok) }
			return "http://" + rest.Addr().String(), logs, b("alice-0123456789abcdef"), b("bob-0123456789abcdef"), b("root-0123456789abcdef")
		}},
		{"trusted-header", func(t *testing.T, env map[string]string) (string, *testlog.Buffer, caller, caller, caller) {
			env["FLUSS_GATEWAY__SECURITY__AUTHENTICATION"] = "trusted-header"
			rest, logs := startSecure(t, env)
			h := func(u string) caller { return headerCaller(plain, "X-Forwarded-User", u) }
			return "http://" + rest.Addr().String(), logs, h("alice"), h("bob"), h("root")
		}},
		{"jwt", func(t *testing.T, env map[string]string) (string, *testlog.Buffer, caller, caller, caller) {
			idp := newJWTIssuer(t)
			path := idp.jwksFile
			sign := func(sub string, groups ...string) caller {
				now := time.Now()
				s := idp.sign(t, jwt.MapClaims{"iss": "https://idp.test", "aud": "gw", "sub": sub,
					"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "groups": groups})
				return headerCaller(plain, "Authorization", "Bearer "+s)
			}
			env["FLUSS_GATEWAY__SECURITY__AUTHENTICATION"] = "jwt"
			env["FLUSS_GATEWAY__SECURITY__JWT__ISSUER"] = "https://idp.test"
			env["FLUSS_GATEWAY__SECURITY__JWT__AUDIENCE"] = "gw"
			env["FLUSS_GATEWAY__SECURITY__JWT__JWKS_FILE"] = path
			env["FLUSS_GATEWAY__SECURITY__JWT__GROUPS_CLAIM"] = "groups"
			rest, logs := startSecure(t, env)
			return "http://" + rest.Addr().String(), logs, sign("alice"), sign("bob", "readers"), sign("jane", "admins")
		}},
		{"mtls", func(t *testing.T, env map[string]string) (string, *testlog.Buffer, caller, caller, caller) {
			pki := newTestPKI(t)
			certFile, keyFile := pki.serverFiles("gateway")
			env["FLUSS_GATEWAY__SECURITY__AUTHENTICATION"] = "mtls"
			env["FLUSS_GATEWAY__REST__TLS__CERT_FILE"] = certFile
			env["FLUSS_GATEWAY__REST__TLS__KEY_FILE"] = keyFile
			env["FLUSS_GATEWAY__REST__TLS__CLIENT_CA_FILE"] = pki.caFile
			env["FLUSS_GATEWAY__REST__TLS__CLIENT_AUTH"] = "require"
			rest, logs := startSecure(t, env)
			cert := func(cn string, ous ...string) caller { return headerCaller(clientWithOU(t, pki, cn, ous...)) }
			return "https://" + rest.Addr().String(), logs, cert("alice"), cert("bob"), cert("carl", "admins")
		}},
	}
}

// Issue 27, finding 4: with a policy, each principal may do only what a
// rule allows (deny by default), in every authentication mode; every DDL
// and every denied request leaves an audit line with the principal, the
// route, the query and the outcome.
func TestAuthorizationPolicyInEveryMode(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte(testPolicy), 0o600))
	for _, m := range policyModes() {
		t.Run(m.name, func(t *testing.T) {
			base, logs, alice, bob, admin := m.start(t, map[string]string{"FLUSS_GATEWAY__SECURITY__AUTHORIZATION__POLICY_FILE": policy})
			dbs := base + dbPath

			status, body := alice(t, "POST", dbs+"#sales")
			require.Equal(t, 201, status, "alice may create sales: %s", body)
			status, body = alice(t, "DELETE", dbs+"/sales?cascade=true")
			assert.Equal(t, 403, status, "alice may not drop: %s", body)
			assert.Contains(t, body, `"code":"unauthorized"`)
			status, body = alice(t, "POST", dbs+"#hr")
			assert.Equal(t, 403, status, "alice may not create hr: %s", body)
			status, body = bob(t, "GET", dbs)
			assert.Equal(t, 403, status, "bob has no rule: %s", body)
			status, body = admin(t, "DELETE", dbs+"/sales?cascade=true")
			assert.Equal(t, 204, status, "an admin may drop: %s", body)

			var events []string
			for _, l := range logs.Records(t, "audit") {
				if ev := stringOf(l["event"]); ev != "write" {
					events = append(events, ev+" "+stringOf(l["principal"])+" "+stringOf(l["operation"])+" "+stringOf(l["query"])+" "+
						strings.TrimSuffix(strings.TrimSuffix(jsonNumber(l["status"]), ".0"), "e+02"))
				}
			}
			assert.Contains(t, events, "ddl alice createDatabase  201")
			assert.Contains(t, events, "ddl_denied alice dropDatabase cascade=true 403")
			assert.Contains(t, events, "ddl_denied alice createDatabase  403")
			assert.Contains(t, events, "denied bob listDatabases  403")
			assert.Len(t, events, 5, "%v", events)
		})
	}
	t.Run("trust", func(t *testing.T) {
		rest, logs := startSecure(t, map[string]string{"FLUSS_GATEWAY__SECURITY__AUTHORIZATION__POLICY_FILE": policy})
		dbs := "http://" + rest.Addr().String() + dbPath
		anon := headerCaller(&http.Client{Timeout: 10 * time.Second})
		status, body := anon(t, "GET", dbs)
		assert.Equal(t, 200, status, body)
		status, body = anon(t, "POST", dbs+"#x")
		assert.Equal(t, 403, status, body)
		assert.Len(t, logs.Records(t, "audit"), 1)
	})
}

func jsonNumber(v any) string {
	if f, ok := v.(float64); ok {
		return strings.TrimSuffix(big.NewFloat(f).Text('f', 0), ".")
	}
	return ""
}

// clientWithOU is an mTLS client whose certificate has common name cn and
// organizational units ous (the groups the policy reads).
func clientWithOU(t *testing.T, p *testPKI, cn string, ous ...string) *http.Client {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: cn, OrganizationalUnit: ous},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	pair, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}}}
}
