package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, contents string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(path, []byte(contents), 0o600))
	return path
}

// loadCase loads a table case: file (YAML, "" for none) and env. With wantErr
// it requires an error containing wantErr and returns nil; without, it
// requires success.
func loadCase(t *testing.T, file string, env map[string]string, wantErr string) *Config {
	t.Helper()
	opts := Options{Env: env}
	if file != "" {
		opts.Path = writeFile(t, file)
	}
	cfg, err := Load(opts)
	if wantErr != "" {
		require.Error(t, err)
		assert.Contains(t, err.Error(), wantErr)
		return nil
	}
	require.NoError(t, err)
	return cfg
}

// validationCase is a configuration file and what loading it gives: want
// is a part of the error message, "" when the file is valid.
type validationCase struct {
	name, contents, want string
}

// runValidationCases loads the file of every case, in parallel subtests,
// and checks the outcome.
func runValidationCases(t *testing.T, cases []validationCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadFile(t, tc.contents)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func loadFile(t *testing.T, contents string) (*Config, error) {
	t.Helper()
	return Load(Options{Path: writeFile(t, contents)})
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Options{})
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", cfg.REST.Listen)
	assert.Equal(t, 30*time.Second, cfg.REST.RequestTimeout)
	assert.Equal(t, 10*time.Second, cfg.REST.HeaderReadTimeout)
	assert.Equal(t, int64(32<<20), cfg.REST.MaxRequestBytes)
	assert.Equal(t, 10_000, cfg.Limits.WriteMaxRows)
	assert.Equal(t, 30*time.Second, cfg.Shutdown.DrainTimeout)
	assert.True(t, cfg.Metrics.Enabled)
	assert.Equal(t, "127.0.0.1:9095", cfg.Metrics.PrometheusListen)
	assert.Equal(t, AuthTrust, cfg.Security.Authentication)
	require.Len(t, cfg.Clusters, 1)
	cl := cfg.Clusters[0]
	assert.Equal(t, "default", cl.ID)
	assert.Equal(t, []string{"127.0.0.1:9123"}, cl.BootstrapServers)
	assert.Equal(t, IdentityService, cl.IdentityMode)
	assert.Equal(t, BackendFluss, cl.Backend)
	assert.Equal(t, ProtocolPlaintext, cl.EffectiveSecurityProtocol())
	assert.Empty(t, cfg.Warnings())
}

func TestFileOptionsAreLoaded(t *testing.T) {
	t.Parallel()
	cfg, err := loadFile(t, `
gateway.instance-id: gateway-1
gateway.rest.listen: 0.0.0.0:8081
gateway.rest.header-read-timeout: 5 s
gateway.rest.write.request-timeout: 1500ms
gateway.rest.write.max-request-bytes: 4MiB
gateway.rest.write.max-rows: 500
gateway.rest.write.rate-limit.enabled: true
gateway.rest.lookup.max-key-bytes: 2048
gateway.rest.prefix-lookup.max-rows-per-prefix: "77"
gateway.metrics.enabled: false
gateway.shutdown.drain-timeout: 2m
gateway.clusters: [default, analytics]
gateway.cluster.analytics.bootstrap.servers: " fluss-1:9123 , fluss-2:9123 "
gateway.cluster.analytics.connection.service.account: gateway_svc
gateway.cluster.analytics.connection.service.secret: s3cr3t
gateway.cluster.default.backend: memory
`)
	require.NoError(t, err)
	assert.Equal(t, "gateway-1", cfg.InstanceID)
	assert.Equal(t, "0.0.0.0:8081", cfg.REST.Listen)
	assert.Equal(t, 5*time.Second, cfg.REST.HeaderReadTimeout)
	assert.Equal(t, 1500*time.Millisecond, cfg.REST.RequestTimeout)
	assert.Equal(t, int64(4<<20), cfg.REST.MaxRequestBytes)
	assert.Equal(t, 500, cfg.Limits.WriteMaxRows)
	assert.True(t, cfg.Limits.WriteRateLimitEnabled)
	assert.Equal(t, int64(2048), cfg.Limits.LookupMaxKeyBytes)
	assert.Equal(t, 77, cfg.Limits.PrefixLookupMaxRowsPerPrefix)
	assert.False(t, cfg.Metrics.Enabled)
	assert.Equal(t, 2*time.Minute, cfg.Shutdown.DrainTimeout)
	assert.Equal(t, []string{"default", "analytics"}, cfg.ClusterIDs())
	analytics, ok := cfg.Cluster("analytics")
	require.True(t, ok)
	assert.Equal(t, []string{"fluss-1:9123", "fluss-2:9123"}, analytics.BootstrapServers)
	assert.Equal(t, "gateway_svc", analytics.ServiceAccount)
	assert.Equal(t, "s3cr3t", analytics.ServiceSecret.Reveal())
	assert.Equal(t, ProtocolSASL, analytics.EffectiveSecurityProtocol())
	def, _ := cfg.Cluster("default")
	assert.Equal(t, BackendMemory, def.Backend)
}

func TestUnknownFileKeysAreNamed(t *testing.T) {
	t.Parallel()
	for _, key := range []string{
		"gateway.rest.listenn",
		"rest.listen",
		"gateway.rest.lookup.max-keyz",
		"gateway.telemetry.endpoint",
		"gateway.cluster.default.bootstrap.serverz",
		"gateway.cluster.default.request-timeout",
		"gateway.cluster.default.connection.security.protocl",
		"gateway.cluster.default",
	} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			_, err := loadFile(t, key+": x\n")
			require.Error(t, err)
			assert.Contains(t, err.Error(), key)
		})
	}
}

func TestNestedYAMLGetsAHint(t *testing.T) {
	t.Parallel()
	_, err := loadFile(t, "gateway:\n  rest:\n    listen: 127.0.0.1:1\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown configuration key: gateway")
	assert.Contains(t, err.Error(), "flat and dotted")
}

func TestInvalidValuesNameTheKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		contents string
		want     []string
	}{
		{"bad duration", "gateway.rest.write.request-timeout: 30\n", []string{"gateway.rest.write.request-timeout", "unit must be one of"}},
		{"zero duration", "gateway.shutdown.drain-timeout: 0s\n", []string{"gateway.shutdown.drain-timeout", "greater than zero"}},
		{"huge duration", "gateway.shutdown.drain-timeout: 366d\n", []string{"gateway.shutdown.drain-timeout", "must not exceed"}},
		{"bad size", "gateway.rest.write.max-request-bytes: 3 parsecs\n", []string{"gateway.rest.write.max-request-bytes", "unit must be one of"}},
		{"zero size", "gateway.rest.write.max-request-bytes: 0\n", []string{"gateway.rest.write.max-request-bytes", "non-zero"}},
		{"bad bool", "gateway.metrics.enabled: yes please\n", []string{"gateway.metrics.enabled", "expected true or false"}},
		{"negative count", "gateway.rest.write.max-rows: -1\n", []string{"gateway.rest.write.max-rows", "non-negative integer"}},
		{"zero count", "gateway.rest.write.max-rows: 0\n", []string{"gateway.rest.write.max-rows must be greater than zero"}},
		{"host name listener", "gateway.rest.listen: localhost:8080\n", []string{"gateway.rest.listen", "IP socket address"}},
		{"compound value", "gateway.rest.listen: [127.0.0.1:8080]\n", []string{"gateway.rest.listen", "scalar"}},
		{"missing value", "gateway.instance-id:\n", []string{"gateway.instance-id", "value is missing"}},
		{"bad identity mode", "gateway.cluster.default.connection.identity-mode: admin\n", []string{"gateway.cluster.default.connection.identity-mode", "expected service or user"}},
		{"bad protocol", "gateway.cluster.default.connection.security.protocol: TLS\n", []string{"gateway.cluster.default.connection.security.protocol", "PLAINTEXT or SASL"}},
		{"bad backend", "gateway.cluster.default.backend: sqlite\n", []string{"gateway.cluster.default.backend", "fluss or memory"}},
		{"bad exporter", "gateway.metrics.exporters: otlp\n", []string{"gateway.metrics.exporters", "expected prometheus"}},
		{"bad bootstrap", "gateway.cluster.default.bootstrap.servers: fluss\n", []string{"gateway.cluster.default.bootstrap.servers", "invalid server"}},
		{"empty bootstrap", "gateway.cluster.default.bootstrap.servers: \" \"\n", []string{"gateway.cluster.default.bootstrap.servers", "at least one server"}},
		{"port clash", "gateway.metrics.exporter.prometheus.listen: 127.0.0.1:8080\n", []string{"must differ from gateway.rest.listen"}},
		{"wildcard clash", "gateway.rest.listen: 0.0.0.0:9095\n", []string{"must differ from gateway.rest.listen"}},
		{"bad instance id", "gateway.instance-id: \"a b\"\n", []string{"gateway.instance-id must be"}},
		{"duplicate key", "gateway.rest.listen: 127.0.0.1:1\ngateway.rest.listen: 127.0.0.1:2\n", []string{"duplicate key gateway.rest.listen"}},
		{"malformed yaml", "gateway.rest.listen: [1\n", []string{"line"}},
		{"not a mapping", "- a\n- b\n", []string{"mapping of flat dotted keys"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadFile(t, tc.contents)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestClusterDeclarations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		contents string
		env      map[string]string
		wantIDs  []string
		wantErr  string
	}{
		{name: "implicit default", contents: "gateway.cluster.default.bootstrap.servers: only:9123\n", wantIDs: []string{"default"}},
		{name: "csv", contents: "gateway.clusters: a, b_2\n", wantIDs: []string{"a", "b_2"}},
		{name: "yaml list", contents: "gateway.clusters:\n  - x\n  - y\n", wantIDs: []string{"x", "y"}},
		{name: "undeclared cluster key", contents: "gateway.cluster.analytics.bootstrap.servers: eu:9123\n", wantErr: "analytics is not declared in gateway.clusters"},
		{name: "upper case id", contents: "gateway.clusters: Default\n", wantErr: "invalid cluster ID"},
		{name: "leading digit", contents: "gateway.clusters: 1st\n", wantErr: "invalid cluster ID"},
		{name: "hyphen", contents: "gateway.clusters: eu-west\n", wantErr: "invalid cluster ID"},
		{name: "too long", contents: "gateway.clusters: a" + strings.Repeat("b", 63) + "\n", wantErr: "invalid cluster ID"},
		{name: "max length", contents: "gateway.clusters: a" + strings.Repeat("b", 62) + "\n", wantIDs: []string{"a" + strings.Repeat("b", 62)}},
		{name: "duplicate", contents: "gateway.clusters: a,a\n", wantErr: "duplicate cluster ID"},
		{name: "env replaces file list", contents: "gateway.clusters: a\n", env: map[string]string{"FLUSS_GATEWAY__CLUSTERS": "b,c"}, wantIDs: []string{"b", "c"}},
		{
			name:     "env list must cover file cluster keys",
			contents: "gateway.clusters: a\ngateway.cluster.a.connect-timeout: 1s\n",
			env:      map[string]string{"FLUSS_GATEWAY__CLUSTERS": "b"},
			wantErr:  "a is not declared",
		},
		{name: "reserved client options", contents: "gateway.cluster.default.client.writer.batch-size: do-not-leak\n", wantErr: "not supported yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(Options{Path: writeFile(t, tc.contents), Env: tc.env})
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.NotContains(t, err.Error(), "do-not-leak")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantIDs, cfg.ClusterIDs())
		})
	}
}

func TestPrecedenceIsCLIThenEnvThenFileThenDefaults(t *testing.T) {
	t.Parallel()
	path := writeFile(t, `
gateway.rest.listen: not-an-address
gateway.metrics.enabled: true
gateway.rest.write.max-rows: 7
gateway.cluster.default.connection.max: not-a-number
`)
	cfg, err := Load(Options{
		Path: path,
		Env: map[string]string{
			"FLUSS_GATEWAY__REST__LISTEN":                      "also-not-an-address",
			"FLUSS_GATEWAY__METRICS__ENABLED":                  "false",
			"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__MAX": "10",
			"PATH": "/usr/bin",
		},
		BindAddress: "127.0.0.1:38080",
	})
	require.NoError(t, err, "losing sources are not parsed")
	assert.Equal(t, "127.0.0.1:38080", cfg.REST.Listen)
	assert.False(t, cfg.Metrics.Enabled)
	assert.Equal(t, 7, cfg.Limits.WriteMaxRows, "the file wins over defaults")
	assert.Equal(t, 10, cfg.Clusters[0].ConnectionMax)
}

func TestEveryKeyHasAWorkingEnvironmentVariable(t *testing.T) {
	t.Parallel()
	sample := func(key string) (file, env string) {
		switch {
		case strings.HasSuffix(key, "enabled"):
			return "true", "false"
		case key == "gateway.metrics.exporters":
			return "prometheus", "prometheus"
		case key == KeySecurityAuth:
			return "trusted-header", "trust"
		case key == KeyTrustAllowNonLoopback || key == KeyQuotaPerTable:
			return "true", "false"
		case key == KeyMTLSPrincipalField:
			return "san-uri", "subject"
		case key == KeyTLSMinVersion:
			return "1.3", "1.2"
		case key == KeyTLSClientAuth:
			return "request", "require"
		case key == KeyTLSReloadInterval || key == KeyPasswordCacheTTL || key == KeyPasswordFailedLoginWindow || strings.HasPrefix(key, "gateway.security.jwt.") && !strings.Contains(key, "jwks-") && strings.Contains(key, "skew"):
			return "11s", "22s"
		case key == KeyReadinessGrace:
			return "1s", "0s"
		case key == KeyJWTRefreshInterval:
			return "11m", "22m"
		case guardSample(key) != nil:
			return guardSample(key)[0], guardSample(key)[1]
		case key == KeyTrustedHeaderCIDRs:
			return "10.0.0.0/8", "192.168.0.1"
		case key == "gateway.security.token-key":
			return strings.Repeat("f", 32), strings.Repeat("e", 32)
		case key == KeyJWTJWKSURL:
			return "https://idp.example.com/jwks", "https://idp.example.com/keys"
		case strings.HasSuffix(key, "listen"):
			if key == KeyRESTListen {
				return "127.0.0.1:11111", "127.0.0.1:22222"
			}
			return "127.0.0.1:11112", "127.0.0.1:22223"
		case key == KeyIdempotencyWindow:
			return "2h", "3h"
		case key == KeyIdempotencyLease:
			return "11s", "22s"
		case key == KeyIdempotencyBuckets:
			return "3", "4"
		case strings.Contains(key, "timeout") || strings.HasSuffix(key, "-time") || strings.HasSuffix(key, "-wait"):
			return "11s", "22s"
		case strings.Contains(key, "bytes"):
			return "1MiB", "2MiB"
		case strings.Contains(key, "max-") || strings.Contains(key, "per-second"):
			return "11", "22"
		}
		return "file-value", "env-value"
	}
	// Keys that are valid only together with others.
	companions := map[string]string{
		KeyTLSCertFile:     KeyTLSKeyFile + ": /k.pem\n",
		KeyTLSKeyFile:      KeyTLSCertFile + ": /c.pem\n",
		KeyTLSClientCAFile: KeyTLSCertFile + ": /c.pem\n" + KeyTLSKeyFile + ": /k.pem\n",
		KeyTLSClientAuth:   KeyTLSCertFile + ": /c.pem\n" + KeyTLSKeyFile + ": /k.pem\n" + KeyTLSClientCAFile + ": /ca.pem\n",
		KeyRESTTLSProfile: KeyTLSProfiles + ": file-value,env-value\n" +
			TLSProfileKeyPrefix + "file-value.certificate-file: /c.pem\n" + TLSProfileKeyPrefix + "file-value.private-key-file: /k.pem\n" +
			TLSProfileKeyPrefix + "env-value.certificate-file: /c2.pem\n" + TLSProfileKeyPrefix + "env-value.private-key-file: /k2.pem\n",
	}
	for _, e := range globalEntries {
		t.Run(e.key, func(t *testing.T) {
			t.Parallel()
			fileValue, envValue := sample(e.key)
			path := writeFile(t, fmt.Sprintf("%s: %q\n", e.key, fileValue)+companions[e.key])
			fromFile, err := Load(Options{Path: path})
			require.NoError(t, err)
			env := map[string]string{EnvVar(e.key): envValue}
			fromEnv, err := Load(Options{Path: path, Env: env})
			require.NoError(t, err)
			if companions[e.key] != "" {
				return
			}
			onlyEnv, err := Load(Options{Env: env})
			require.NoError(t, err)
			// The dump redacts credentials, so compare them revealed as well.
			fingerprint := func(c *Config) string {
				return c.Redacted() + c.Security.Users.Reveal() + "|" + c.Security.Tokens.Reveal() + "|" + c.Security.Guard.TokenKey.Reveal()
			}
			if fileValue != envValue {
				assert.NotEqual(t, fingerprint(fromFile), fingerprint(fromEnv), "%s ignores %s", e.key, EnvVar(e.key))
			}
			assert.Equal(t, fingerprint(onlyEnv), fingerprint(fromEnv))
		})
	}
}

func TestEnvironmentVariables(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		env     map[string]string
		check   func(t *testing.T, cfg *Config)
		wantErr []string
	}{
		{
			name: "documented mapping",
			env: map[string]string{
				"FLUSS_GATEWAY__REST__LISTEN":                                     "127.0.0.1:9999",
				"FLUSS_GATEWAY__REST__WRITE__MAX_REQUEST_BYTES":                   "1KiB",
				"FLUSS_GATEWAY__CLUSTERS":                                         "eu_west",
				"FLUSS_GATEWAY__CLUSTER__EU_WEST__BOOTSTRAP__SERVERS":             "eu:9123",
				"FLUSS_GATEWAY__CLUSTER__EU_WEST__CONNECTION__SECURITY__PROTOCOL": "plaintext",
			},
			check: func(t *testing.T, cfg *Config) {
				assert.Equal(t, "127.0.0.1:9999", cfg.REST.Listen)
				assert.Equal(t, int64(1024), cfg.REST.MaxRequestBytes)
				require.Equal(t, []string{"eu_west"}, cfg.ClusterIDs())
				assert.Equal(t, []string{"eu:9123"}, cfg.Clusters[0].BootstrapServers)
				assert.Equal(t, ProtocolPlaintext, cfg.Clusters[0].SecurityProtocol)
			},
		},
		{
			name:    "unknown variable",
			env:     map[string]string{"FLUSS_GATEWAY__REST__LISTN": "x"},
			wantErr: []string{"unknown configuration environment variable: FLUSS_GATEWAY__REST__LISTN"},
		},
		{
			name:    "unknown cluster option",
			env:     map[string]string{"FLUSS_GATEWAY__CLUSTER__DEFAULT__NOPE": "x"},
			wantErr: []string{"FLUSS_GATEWAY__CLUSTER__DEFAULT__NOPE"},
		},
		{
			name:    "bad value names variable and key",
			env:     map[string]string{"FLUSS_GATEWAY__SHUTDOWN__DRAIN_TIMEOUT": "soon"},
			wantErr: []string{"FLUSS_GATEWAY__SHUTDOWN__DRAIN_TIMEOUT (gateway.shutdown.drain-timeout)", "invalid duration"},
		},
		{
			name:    "client option variable",
			env:     map[string]string{"FLUSS_GATEWAY__CLUSTER__DEFAULT__CLIENT__WRITER__BATCH_SIZE": "do-not-leak"},
			wantErr: []string{"FLUSS_GATEWAY__CLUSTER__DEFAULT__CLIENT__WRITER__BATCH_SIZE", "gateway.cluster.default.client.writer.batch-size", "not supported yet"},
		},
		{
			name:  "config path variable is not a key",
			env:   map[string]string{ConfigPathEnv: "/nonexistent"},
			check: func(t *testing.T, cfg *Config) { assert.Equal(t, DefaultRESTListen, cfg.REST.Listen) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(Options{Env: tc.env})
			if len(tc.wantErr) > 0 {
				require.Error(t, err)
				for _, w := range tc.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				assert.NotContains(t, err.Error(), "do-not-leak")
				return
			}
			require.NoError(t, err)
			tc.check(t, cfg)
		})
	}
}

func TestEnvVarNames(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"gateway.rest.listen":                          "FLUSS_GATEWAY__REST__LISTEN",
		"gateway.rest.write.max-request-bytes":         "FLUSS_GATEWAY__REST__WRITE__MAX_REQUEST_BYTES",
		"gateway.metrics.exporter.prometheus.listen":   "FLUSS_GATEWAY__METRICS__EXPORTER__PROMETHEUS__LISTEN",
		"gateway.cluster.eu.connection.service.secret": "FLUSS_GATEWAY__CLUSTER__EU__CONNECTION__SERVICE__SECRET",
		"gateway.clusters":                             "FLUSS_GATEWAY__CLUSTERS",
	}
	for key, want := range cases {
		assert.Equal(t, want, EnvVar(key), key)
	}
	seen := map[string]string{}
	for _, e := range globalEntries {
		v := EnvVar(e.key)
		prev, dup := seen[v]
		assert.False(t, dup, "%s and %s share %s", prev, e.key, v)
		seen[v] = e.key
	}
}

func TestCrossFieldValidation(t *testing.T) {
	t.Parallel()
	cases := []validationCase{
		{"account without secret", "gateway.cluster.default.connection.service.account: svc\n", "must be set together"},
		{"secret without account", "gateway.cluster.default.connection.service.secret: pw\n", "must be set together"},
		{"blank secret", "gateway.cluster.default.connection.service.account: svc\ngateway.cluster.default.connection.service.secret: \" \"\n", "must not be blank"},
		// 0 parses as "unset" for the optional pool cap.
		{"zero connection max", "gateway.cluster.default.connection.max: 0\n", ""},
		{"sasl without credentials", "gateway.cluster.default.connection.security.protocol: SASL\n", "SASL requires"},
		{"plaintext with credentials", "gateway.cluster.default.connection.security.protocol: PLAINTEXT\ngateway.cluster.default.connection.service.account: svc\ngateway.cluster.default.connection.service.secret: pw\n", "PLAINTEXT contradicts"},
		{"user mode under trust", "gateway.cluster.default.connection.identity-mode: user\ngateway.cluster.default.connection.service.account: svc\ngateway.cluster.default.connection.service.secret: pw\n", "requires verified client identities"},
		{"user mode without credentials", "gateway.security.authentication: password\ngateway.security.users: alice:pw\ngateway.cluster.default.connection.identity-mode: user\n", "user requires"},
		{"password without users", "gateway.security.authentication: password\n", "at least one user"},
		{"token without tokens", "gateway.security.authentication: token\n", "at least one token"},
		{"malformed user entry", "gateway.security.authentication: password\ngateway.security.users: alice\n", "user entry 0"},
		{"duplicate user", "gateway.security.authentication: password\ngateway.security.users: alice:a,alice:b\n", "duplicates"},
		{"bad bcrypt", "gateway.security.authentication: password\ngateway.security.users: alice:bcrypt:nope\n", "malformed bcrypt"},
		{"bad digest", "gateway.security.authentication: token\ngateway.security.tokens: sha256:abc:alice\n", "malformed sha256"},
		{"bad trusted header", "gateway.security.authentication: trusted-header\ngateway.security.trusted-header.name: \"bad header\"\n", "legal HTTP header name"},
		{"delivery longer than the request", "gateway.rest.write.request-timeout: 10s\ngateway.rest.write.max-delivery-time: 11s\n", "gateway.rest.write.max-delivery-time (11s) must not exceed gateway.rest.request-timeout (10s)"},
		{"delivery within the request", "gateway.rest.write.request-timeout: 10s\ngateway.rest.write.max-delivery-time: 9500ms\n", ""},
		{"zero metadata budget", "gateway.rest.metadata.max-concurrent-requests: 0\n", "gateway.rest.metadata.max-concurrent-requests must be greater than zero"},
		{"valid user mode", "gateway.security.authentication: token\ngateway.security.tokens: tok-0123456789abcdef:alice\ngateway.cluster.default.connection.identity-mode: user\ngateway.cluster.default.connection.service.account: svc\ngateway.cluster.default.connection.service.secret: pw\n", ""},
	}
	runValidationCases(t, cases)
}

func TestProgrammaticConfigIsValidated(t *testing.T) {
	t.Parallel()
	cfg := Default()
	cfg.Clusters = nil
	cfg.REST.RequestTimeout = 0
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gateway.clusters must declare at least one cluster")
	assert.Contains(t, err.Error(), "gateway.rest.request-timeout must be greater than zero")
}

func TestSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	cfg, err := loadFile(t, `
gateway.cluster.default.connection.service.account: canonical-user
gateway.cluster.default.connection.service.secret: canonical-secret
gateway.security.authentication: password
gateway.security.users: alice:user-secret
gateway.security.tokens: token-secret-0123456789:alice
`)
	require.NoError(t, err)

	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "secret", cfg.Clusters[0].ServiceSecret, "cluster", cfg.Clusters[0])
	asJSON, err := json.Marshal(cfg)
	require.NoError(t, err)

	for _, rendering := range []string{
		cfg.Redacted(), cfg.String(),
		fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", *cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%#v", *cfg),
		string(asJSON), logged.String(),
	} {
		for _, secret := range []string{"canonical-secret", "user-secret", "token-secret"} {
			assert.NotContains(t, rendering, secret)
		}
		assert.Contains(t, rendering, Redacted)
	}
	assert.Contains(t, cfg.Redacted(), "canonical-user", "identities are not credentials")
	assert.Equal(t, "canonical-secret", cfg.Clusters[0].ServiceSecret.Reveal())
	assert.Equal(t, "alice:user-secret", cfg.Security.Users.Reveal())

	_, err = loadFile(t, `
gateway.security.authentication: token
gateway.security.tokens: do-not-leak
gateway.cluster.default.connection.service.secret: also-secret
gateway.cluster.default.client.writer.unknown-knob: 0
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "writer.unknown-knob")
	assert.NotContains(t, err.Error(), "do-not-leak")
	assert.NotContains(t, err.Error(), "also-secret")
}

func TestRedactedDumpReloads(t *testing.T) {
	t.Parallel()
	cfg, err := loadFile(t, "gateway.clusters: a,b\ngateway.cluster.b.backend: memory\ngateway.rest.write.max-request-bytes: 1048577\n")
	require.NoError(t, err)
	again, err := loadFile(t, cfg.Redacted())
	require.NoError(t, err, cfg.Redacted())
	assert.Equal(t, cfg.Redacted(), again.Redacted())
}

func TestMissingFile(t *testing.T) {
	t.Parallel()
	_, err := Load(Options{Path: filepath.Join(t.TempDir(), "absent.yaml")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot read configuration file")
}

func TestResolvePath(t *testing.T) {
	t.Parallel()
	env := map[string]string{ConfigPathEnv: "/from/env.yaml"}
	assert.Equal(t, "/from/flag.yaml", ResolvePath("/from/flag.yaml", env))
	assert.Equal(t, "/from/env.yaml", ResolvePath("", env))
	assert.Equal(t, "", ResolvePath("", nil))
	assert.Equal(t, map[string]string{"A": "1", "B": "x=y"}, EnvMap([]string{"A=1", "B=x=y", "junk"}))
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"30s", 30 * time.Second, ""},
		{" 250 ms ", 250 * time.Millisecond, ""},
		{"2M", 2 * time.Minute, ""},
		{"1h", time.Hour, ""},
		{"365d", 365 * 24 * time.Hour, ""},
		{"366d", 0, "must not exceed"},
		{"0ms", 0, "greater than zero"},
		{"1.5s", 0, "unit must be one of"},
		{"s", 0, "expected <integer>"},
		{"-1s", 0, "expected <integer>"},
		{"10", 0, "unit must be one of"},
		{"99999999999999999999s", 0, "out of range"},
	}
	for _, tc := range cases {
		checkParseRoundTrip(t, tc.in, tc.want, tc.wantErr, ParseDuration, FormatDuration)
	}
}

// checkParseRoundTrip parses in: with wantErr it requires that error,
// otherwise want, and that the formatted value parses back to it.
func checkParseRoundTrip[T comparable](t *testing.T, in string, want T, wantErr string, parse func(string) (T, error), format func(T) string) {
	t.Helper()
	got, err := parse(in)
	if wantErr != "" {
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), wantErr, in)
		return
	}
	require.NoError(t, err, in)
	assert.Equal(t, want, got, in)
	back, err := parse(format(got))
	require.NoError(t, err)
	assert.Equal(t, got, back)
}

func TestParseByteSize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"32MiB", 32 << 20, ""},
		{"32 mb", 32 << 20, ""},
		{"1k", 1024, ""},
		{"7", 7, ""},
		{"2 bytes", 2, ""},
		{"1TiB", 1 << 40, ""},
		{"0", 0, "non-zero"},
		{"1PB", 0, "unit must be one of"},
		{"MiB", 0, "expected <integer>"},
		{"9999999999TiB", 0, "too large"},
	}
	for _, tc := range cases {
		checkParseRoundTrip(t, tc.in, tc.want, tc.wantErr, ParseByteSize, FormatByteSize)
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	cfg, err := loadFile(t, "gateway.rest.listen: 0.0.0.0:8080\ngateway.cluster.default.connection.max: 4\ngateway.cluster.default.backend: memory\n")
	require.NoError(t, err)
	w := strings.Join(cfg.Warnings(), "\n")
	assert.Contains(t, w, "refuses non-loopback clients with 401 because gateway.security.authentication is trust")
	assert.Contains(t, w, "has no TLS")
	assert.Contains(t, w, "ignored because gateway.cluster.default.connection.identity-mode is service")
	assert.Contains(t, w, "gateway.cluster.default.backend is memory")

	cfg, err = loadFile(t, "gateway.rest.listen: 0.0.0.0:8080\ngateway.security.trust.allow-non-loopback: true\n"+
		"gateway.rest.tls.cert-file: /c.pem\ngateway.rest.tls.key-file: /k.pem\n")
	require.NoError(t, err)
	w = strings.Join(cfg.Warnings(), "\n")
	assert.Contains(t, w, "accepts unauthenticated requests from any address")
	assert.NotContains(t, w, "TLS")

	cfg, err = loadFile(t, "gateway.rest.listen: 0.0.0.0:8080\ngateway.security.authentication: token\ngateway.security.tokens: t-0123456789abcdef:alice\n")
	require.NoError(t, err)
	assert.Contains(t, strings.Join(cfg.Warnings(), "\n"), "bearer tokens cross the network in clear text")
}

func TestAdmissionDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Options{})
	require.NoError(t, err)
	assert.Equal(t, 16, cfg.Limits.MetadataMaxConcurrentRequests)
	assert.Equal(t, time.Second, cfg.REST.AdmissionMaxWait)
	assert.Zero(t, cfg.REST.MaxDeliveryTime, "unset: derived from the request deadline")
	assert.NotContains(t, cfg.Redacted(), "max-delivery-time", "an unset optional key is not dumped")
	assert.Contains(t, cfg.Redacted(), `gateway.rest.admission.max-wait: "1s"`)

	cfg, err = Load(Options{Env: map[string]string{"FLUSS_GATEWAY__REST__WRITE__MAX_DELIVERY_TIME": "20s"}})
	require.NoError(t, err)
	assert.Equal(t, 20*time.Second, cfg.REST.MaxDeliveryTime)
	assert.Contains(t, cfg.Redacted(), `gateway.rest.write.max-delivery-time: "20s"`)
}

// TestShippedConfigsLoad keeps configs/ in step with the key registry.
func TestShippedConfigsLoad(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"local.yaml", "gateway.example.yaml"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(Options{Path: filepath.Join("..", "..", "configs", name)})
			require.NoError(t, err)
			def, ok := cfg.Cluster("default")
			require.True(t, ok)
			assert.Equal(t, ProtocolPlaintext, def.EffectiveSecurityProtocol())
		})
	}
	cfg, err := Load(Options{Path: filepath.Join("..", "..", "configs", "local.yaml")})
	require.NoError(t, err)
	assert.Equal(t, []string{"127.0.0.1:19123"}, cfg.Clusters[0].BootstrapServers)
}

func TestShutdownReadinessGrace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		file    string
		env     map[string]string
		want    time.Duration
		wantErr string
	}{
		{name: "default", want: DefaultReadinessGrace},
		{name: "file", file: "gateway.shutdown.readiness-grace: 5s\n", want: 5 * time.Second},
		{name: "milliseconds", file: "gateway.shutdown.readiness-grace: 250ms\n", want: 250 * time.Millisecond},
		{name: "zero disables", file: "gateway.shutdown.readiness-grace: 0s\n", want: 0},
		{name: "bare zero", file: "gateway.shutdown.readiness-grace: 0\n", want: 0},
		{name: "environment", env: map[string]string{"FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE": "3s"}, want: 3 * time.Second},
		{name: "no unit", file: "gateway.shutdown.readiness-grace: 10\n", wantErr: "unit must be one of"},
		{name: "negative", file: "gateway.shutdown.readiness-grace: -1s\n", wantErr: KeyReadinessGrace},
		{name: "too long", file: "gateway.shutdown.readiness-grace: 366d\n", wantErr: "must not exceed"},
		{name: "zero with a bad unit", file: "gateway.shutdown.readiness-grace: 0y\n", wantErr: KeyReadinessGrace},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := loadCase(t, tc.file, tc.env, tc.wantErr)
			if cfg == nil {
				return
			}
			assert.Equal(t, tc.want, cfg.Shutdown.ReadinessGrace)
			// The dump reloads to the same value.
			again, err := Load(Options{Path: writeFile(t, cfg.Redacted())})
			require.NoError(t, err)
			assert.Equal(t, tc.want, again.Shutdown.ReadinessGrace)
		})
	}
}

func TestClusterAutoCreatePartitions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		file    string
		env     map[string]string
		want    map[string]bool
		wantErr string
	}{
		{name: "default on", want: map[string]bool{"default": true}},
		{name: "off in the file", file: "gateway.cluster.default.write.auto-create-partitions: false\n", want: map[string]bool{"default": false}},
		{
			name: "per cluster",
			file: "gateway.clusters: [default, analytics]\ngateway.cluster.analytics.write.auto-create-partitions: false\n",
			want: map[string]bool{"default": true, "analytics": false},
		},
		{
			name: "environment overrides the file",
			file: "gateway.cluster.default.write.auto-create-partitions: false\n",
			env:  map[string]string{"FLUSS_GATEWAY__CLUSTER__DEFAULT__WRITE__AUTO_CREATE_PARTITIONS": "true"},
			want: map[string]bool{"default": true},
		},
		{name: "not a boolean", file: "gateway.cluster.default.write.auto-create-partitions: maybe\n", wantErr: "gateway.cluster.default.write.auto-create-partitions"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := loadCase(t, tc.file, tc.env, tc.wantErr)
			if cfg == nil {
				return
			}
			for id, want := range tc.want {
				cl, ok := cfg.Cluster(id)
				require.True(t, ok, id)
				assert.Equal(t, want, cl.AutoCreatePartitions, id)
			}
			assert.Contains(t, cfg.Redacted(), "write.auto-create-partitions")
		})
	}
}

// TestClusterTuningKeys: the writer and lookup tuning keys are read from the
// file and the environment, their defaults printed by --print-config, and
// refused outside
// their bounds with the key named.
func TestClusterTuningKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		file    string
		env     map[string]string
		check   func(t *testing.T, cl Cluster)
		wantErr string
	}{
		{name: "defaults", check: func(t *testing.T, cl Cluster) {
			assert.Equal(t, 10*time.Millisecond, cl.WriteLinger)
			assert.Equal(t, 100*time.Millisecond, cl.WriteKvLinger)
			assert.Equal(t, 1, cl.WriteLingerAfterInFlight)
			assert.Equal(t, 2, cl.WriteLanes)
			assert.Equal(t, 5, cl.WriteMaxInFlightPerBucket)
			assert.Equal(t, int64(2<<20), cl.WriteBatchSize)
			assert.Equal(t, 1, cl.LookupMaxInFlight)
			assert.Equal(t, 4096, cl.LookupMaxKeysPerRequest)
		}},
		{
			name: "set in the file",
			file: "gateway.cluster.default.write.linger: 0s\ngateway.cluster.default.write.kv-linger: 20ms\n" +
				"gateway.cluster.default.write.linger-after-in-flight: 0\ngateway.cluster.default.write.lanes: 4\n" +
				"gateway.cluster.default.write.max-in-flight-per-bucket: 2\ngateway.cluster.default.write.batch-size: 4mb\n" +
				"gateway.cluster.default.lookup.max-in-flight-per-server: 0\ngateway.cluster.default.lookup.max-keys-per-request: 512\n",
			check: func(t *testing.T, cl Cluster) {
				assert.Equal(t, time.Duration(0), cl.WriteLinger)
				assert.Equal(t, 20*time.Millisecond, cl.WriteKvLinger)
				assert.Equal(t, 0, cl.WriteLingerAfterInFlight)
				assert.Equal(t, 4, cl.WriteLanes)
				assert.Equal(t, 2, cl.WriteMaxInFlightPerBucket)
				assert.Equal(t, int64(4<<20), cl.WriteBatchSize)
				assert.Equal(t, 0, cl.LookupMaxInFlight)
				assert.Equal(t, 512, cl.LookupMaxKeysPerRequest)
			},
		},
		{
			name: "environment",
			env:  map[string]string{"FLUSS_GATEWAY__CLUSTER__DEFAULT__WRITE__KV_LINGER": "5ms", "FLUSS_GATEWAY__CLUSTER__DEFAULT__LOOKUP__MAX_IN_FLIGHT_PER_SERVER": "8"},
			check: func(t *testing.T, cl Cluster) {
				assert.Equal(t, 5*time.Millisecond, cl.WriteKvLinger)
				assert.Equal(t, 8, cl.LookupMaxInFlight)
			},
		},
		{name: "linger too long", file: "gateway.cluster.default.write.linger: 2m\n", wantErr: "gateway.cluster.default.write.linger must be between"},
		{name: "no lanes", file: "gateway.cluster.default.write.lanes: 0\n", wantErr: "gateway.cluster.default.write.lanes must be between 1 and 16"},
		{name: "too many in flight", file: "gateway.cluster.default.write.max-in-flight-per-bucket: 6\n", wantErr: "gateway.cluster.default.write.max-in-flight-per-bucket must be between 1 and 5"},
		{name: "negative", file: "gateway.cluster.default.write.linger-after-in-flight: -1\n", wantErr: "gateway.cluster.default.write.linger-after-in-flight"},
		{name: "batch too small", file: "gateway.cluster.default.write.batch-size: 100b\n", wantErr: "gateway.cluster.default.write.batch-size must be between"},
		{name: "no keys", file: "gateway.cluster.default.lookup.max-keys-per-request: 0\n", wantErr: "gateway.cluster.default.lookup.max-keys-per-request must be between 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := loadCase(t, tc.file, tc.env, tc.wantErr)
			if cfg == nil {
				return
			}
			cl, ok := cfg.Cluster("default")
			require.True(t, ok)
			tc.check(t, cl)
			if tc.file == "" && tc.env == nil {
				// --print-config shows the defaults (zeros are left out).
				for _, k := range []string{"write.linger", "write.kv-linger", "write.linger-after-in-flight", "write.lanes",
					"write.max-in-flight-per-bucket", "write.batch-size", "lookup.max-in-flight-per-server", "lookup.max-keys-per-request"} {
					assert.Contains(t, cfg.Redacted(), "gateway.cluster.default."+k+":")
				}
			}
		})
	}
}
