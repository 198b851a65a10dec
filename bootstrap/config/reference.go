package config

import (
	"fmt"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss"
)

// keyDocs holds the one-line description of every key of the registry (the
// global keys, the TLS profile options and the per-cluster keys, these by
// their suffix after `gateway.cluster.<id>.`). An older name (alias) needs
// none: the reference names the key it stands for. TestConfigurationReference
// fails when a key has no line here, and when docs/configuration.md is not
// what Reference renders; configs/gateway.example.yaml keeps the longer
// explanations.
var keyDocs = map[string]string{
	KeyInstanceID:                                        "identity of this process in logs and telemetry (service.instance.id)",
	KeyRESTListen:                                        "IP:port of the REST listener (loopback unless set; set TLS before listening on other addresses)",
	"gateway.rest.header-read-timeout":                   "time allowed to read a request head from the connection",
	KeyRequestTimeout:                                    "server-side deadline of every request (504 timeout past it); X-Fluss-Request-Timeout may ask for less",
	KeyGatewayID:                                         "logical gateway shared by every process of one deployment: the gateway_id label of every metric",
	KeyGatewayHost:                                       "this process's network location: the host label of every metric",
	KeyRESTTLSProfile:                                    "the named TLS profile (`gateway.tls.profile.<name>.*`) the REST listener serves",
	"gateway.rest.write.max-request-bytes":               "largest request body, decoded (413 limit_exceeded above it)",
	KeyMaxDeliveryTime:                                   "longest time a write spends delivering its rows; unset: the request deadline minus the answer margin",
	"gateway.rest.write.max-rows":                        "entries of one write request (413 limit_exceeded above it)",
	KeyWriteStreamMaxRows:                                "entries of one streamed (NDJSON or Arrow IPC) write body",
	"gateway.rest.write.max-concurrent-requests":         "write requests served at once; more wait up to gateway.rest.admission.max-wait, then 429",
	"gateway.rest.write.rate-limit.enabled":              "switches the write rate limit (token buckets, one second of burst)",
	"gateway.rest.write.rate-limit.requests-per-second":  "write requests per second when the rate limit is on",
	"gateway.rest.write.rate-limit.bytes-per-second":     "write body bytes per second when the rate limit is on",
	"gateway.rest.lookup.max-keys":                       "keys of one lookup request",
	"gateway.rest.lookup.max-key-bytes":                  "encoded size of the keys (or prefixes) of one lookup or prefix lookup",
	"gateway.rest.lookup.max-concurrent-requests":        "lookup requests served at once",
	"gateway.rest.prefix-lookup.max-prefixes":            "prefixes of one prefix-lookup request",
	"gateway.rest.prefix-lookup.max-rows-per-prefix":     "rows one prefix returns (the rest through the continuation token)",
	"gateway.rest.prefix-lookup.max-concurrent-requests": "prefix-lookup requests served at once",
	"gateway.rest.metadata.max-concurrent-requests":      "catalog (metadata) requests served at once",
	"gateway.rest.scan.max-rows":                         "largest max_rows of a log scan",
	"gateway.rest.scan.max-wait":                         "longest max_wait_ms long poll of a log scan",
	"gateway.rest.scan.max-bytes":                        "record bytes read from Fluss for one scan answer",
	"gateway.rest.scan.max-concurrent-requests":          "log scans (long polls included) served at once",
	"gateway.rest.admission.max-wait":                    "longest wait for a concurrency slot, rate-limit token or memory before 429",
	KeyDocsEnabled:                                       "serves the API reference page GET /docs",
	KeyMetadataMaxRequestBytes:                           "largest (decoded) body of a catalog request",
	KeyRESTResponseWriteTimeout:                          "time allowed to write one response; a client that stops reading loses its connection",
	KeyRESTIdleTimeout:                                   "longest wait for the next request on a keep-alive connection",
	KeyRESTMaxConnsPerAddress:                            "open connections per client IP address (more are refused at accept)",
	KeyRESTLingerTimeout:                                 "how long a connection the gateway ends keeps draining what the client still sends",
	KeyRESTMemoryBudget:                                  "data-plane memory budget (bodies, rows, answers in flight); unset: from the Go memory limit",
	KeyLookupMaxResponseBytes:                            "largest answer of one lookup or prefix lookup (413 above it)",
	KeyRESTMaxConnections:                                "open REST connections in all; 0: derived from the descriptor limit",
	"gateway.metrics.enabled":                            "serves Prometheus metrics (GET /metrics) on their own listener",
	"gateway.metrics.exporters":                          "the metrics exporter: prometheus",
	KeyMetricsListen:                                     "IP:port of the Prometheus listener",
	"gateway.metrics.table-label.enabled":                "adds the table attribute to the REST, write, lookup and writer families",
	"gateway.metrics.database-label.enabled":             "adds the database attribute to those families",
	"gateway.metrics.max-tables":                         "distinct table/database values kept before folding into `other`",
	"gateway.shutdown.drain-timeout":                     "time in-flight requests get to finish once the listener closes",
	KeyReadinessGrace:                                    "time /ready answers 503 while requests are still served, before the listener closes",
	KeySecurityAuth:                                      "caller authentication: trust, password, token, trusted-header, jwt or mtls",
	KeyUsers:                                             "password mode: `principal:secret` or `principal:bcrypt:<hash>`, comma-separated",
	KeyTokens:                                            "token mode: `<token>:<principal>` or `sha256:<hex>:<principal>`, comma-separated",
	KeyTrustedHeaderName:                                 "trusted-header mode: the header carrying the principal (unset: x-forwarded-user)",
	KeyRealm:                                             "realm of the WWW-Authenticate challenges",
	KeyTrustAllowNonLoopback:                             "trust mode: also accept callers from non-loopback addresses",
	KeyPasswordCacheTTL:                                  "how long a verified Basic credential is remembered (0 disables)",
	KeyPasswordMaxFailedLogins:                           "failed logins per (user name, address) within the window before 429 (0: no throttle)",
	KeyPasswordFailedLoginWindow:                         "the window of the failed-login throttle",
	KeyTrustedHeaderCIDRs:                                "trusted-header mode: proxy addresses allowed to set the header (unset: loopback)",
	KeyJWTIssuer:                                         "jwt mode: the required issuer (iss)",
	KeyJWTAudience:                                       "jwt mode: the required audience (aud)",
	KeyJWTJWKSFile:                                       "jwt mode: a local JWKS file (or jwks-url)",
	KeyJWTJWKSURL:                                        "jwt mode: the JWKS URL, https or http to loopback (or jwks-file)",
	KeyJWTPrincipalClaim:                                 "jwt mode: the claim holding the principal",
	KeyJWTAlgorithms:                                     "jwt mode: accepted signature algorithms, comma-separated (unset: the asymmetric ones)",
	KeyJWTClockSkew:                                      "jwt mode: tolerated clock difference for exp, nbf and iat",
	KeyJWTRefreshInterval:                                "jwt mode: how often the JWKS is reloaded",
	KeyJWTFetchTimeout:                                   "jwt mode: bound of one JWKS fetch",
	KeyMTLSPrincipalField:                                "mtls mode: the client-certificate field that names the principal",
	KeyActAsHeader:                                       "the header an allow-listed principal names another principal in",
	KeyActAsAllowedPrincipals:                            "principals that may act as another, comma-separated",
	KeyQuotaRequestsPerSecond:                            "per-principal requests per second (unset: unlimited)",
	KeyQuotaBytesPerSecond:                               "per-principal body bytes per second (unset: unlimited)",
	KeyQuotaPerTable:                                     "gives each (principal, table) its own quota buckets on table routes",
	KeyQuotaMaxPrincipals:                                "principals whose quota buckets are kept (least recently used out)",
	KeyTLSCertFile:                                       "PEM certificate chain of the REST listener (TLS is on when set)",
	KeyTLSKeyFile:                                        "PEM private key of the REST listener",
	KeyTLSMinVersion:                                     "lowest TLS version accepted: 1.2 or 1.3",
	KeyTLSClientCAFile:                                   "PEM CA bundle client certificates are verified against",
	KeyTLSClientAuth:                                     "client certificates: none, request or require",
	KeyTLSReloadInterval:                                 "how often the certificate files are polled for a new pair",
	KeyIdempotencyEnabled:                                "honours the Idempotency-Key header of writes",
	KeyIdempotencyDatabase:                               "database of the Idempotency-Key ledger table",
	KeyIdempotencyTable:                                  "the Idempotency-Key ledger table (created on first use)",
	KeyIdempotencyWindow:                                 "how long a key is remembered (1m to 7d)",
	KeyIdempotencyLease:                                  "lease of a claim made without a request deadline",
	KeyIdempotencyBuckets:                                "buckets of the ledger the gateway creates (0: the cluster default)",
	KeyTokenKey:                                          "HMAC key (at least 32 bytes) of page tokens, continuations and scan cursors; unset: random per process",
	KeyPasswordMaxFailedLoginsPerAddr:                    "failed logins per client address, all names together (unset: 10 x max-failed-logins)",
	KeyTokenMinLength:                                    "shortest clear-text token accepted in gateway.security.tokens",
	KeyTrustAllowedHosts:                                 "trust mode: the Host header values answered; * allows any",
	KeyCORSAllowedOrigins:                                "CORS origins (exact or *); CORS is off while unset",
	KeyCORSAllowedMethods:                                "CORS methods allowed",
	KeyCORSAllowedHeaders:                                "CORS request headers allowed",
	KeyJWTMaxLifetime:                                    "jwt mode: tokens valid longer than this are refused",
	KeyJWTGroupsClaim:                                    "jwt mode: the claim holding the caller's groups",
	KeyAuthorizationPolicyFile:                           "gateway-side authorization policy (YAML); set: deny by default",
	KeyCORSMaxAge:                                        "how long a browser may cache a CORS preflight answer",

	KeyTLSProfiles: "names of the TLS profiles, comma-separated",
	TLSProfileKeyPrefix + "<name>." + tlsProfileCert:      "one profile's PEM certificate chain",
	TLSProfileKeyPrefix + "<name>." + tlsProfileKey:       "one profile's PEM private key",
	TLSProfileKeyPrefix + "<name>." + tlsProfileHandshake: "time a client gets to finish the TLS handshake",
	ClustersKey: "the cluster ids used as {cluster} in REST paths, comma-separated",

	clusterKeyServers:       "bootstrap servers of the Fluss cluster, host:port, comma-separated",
	clusterKeyConnectTO:     "bound of connecting to a Fluss server",
	clusterKeyAccount:       "SASL/PLAIN service account",
	clusterKeySecret:        "SASL/PLAIN service secret (prefer the environment variable)",
	clusterKeyIdentity:      "service (one shared connection set) or user (one per end user, as SASL authorization id)",
	clusterKeyConnMax:       fmt.Sprintf("user mode: connection sets kept at most (0: %d)", fluss.DefaultMaxUserSessions),
	clusterKeyConnIdle:      "user mode: idle time after which a connection set is closed (0: " + FormatDuration(fluss.DefaultUserIdleTimeout) + ")",
	clusterKeyProtocol:      "PLAINTEXT or SASL (unset: SASL when service credentials are set)",
	clusterKeyBackend:       "fluss, or memory (an in-process catalog for development)",
	clusterKeyAutoPart:      "whether writes create missing partitions of partitioned tables",
	clusterKeyThrottle:      "upper bound of the writer's per-bucket throttle on Fluss 1.0 KV backpressure",
	clusterKeyLinger:        "how long a bucket's non-full ProduceLog batch waits for more rows while the bucket has batches in flight (0: never)",
	clusterKeyKvLinger:      "the same for PutKv rows (Java client: client.writer.batch-timeout; 0: never)",
	clusterKeyLingerAfter:   "a bucket with fewer batches in flight than this sends its queued rows at once (0: always wait for the linger)",
	clusterKeyLanes:         "connections per tablet server for PutKv and ProduceLog, by bucket (1..16)",
	clusterKeyWriteInFlight: "batches of one bucket sent and not yet answered (1..5, client.writer.max-inflight-requests-per-bucket)",
	clusterKeyBatchSize:     "a bucket's batch target (1KiB..10MiB, client.writer.batch-size)",
	clusterKeyLookupFlight:  "Lookup (and, apart, PrefixLookup) requests of one table in flight to one tablet server; more calls' keys wait and go together (0: no bound)",
	clusterKeyLookupKeys:    "keys of one request that merges several calls' keys",
}

// ReferenceRow is one key of the configuration reference.
type ReferenceRow struct {
	// Key is the full key; <name> and <id> stand for a TLS profile and a
	// cluster id.
	Key string
	// Default is the value of an unset key in --print-config form ("" when
	// an unset key is left out of the dump).
	Default string
	// Env is the environment variable that overrides it.
	Env string
	// Doc is the one-line description.
	Doc string
	// AliasOf is, for an older name, the key it stands for.
	AliasOf string
}

// Reference lists every configuration key in registry order: the global
// keys, the TLS profile keys, gateway.clusters and the per-cluster keys.
// An error names the keys that have no description in keyDocs.
func Reference() ([]ReferenceRow, error) {
	var rows []ReferenceRow
	var missing []string
	doc := func(key string) string {
		d, ok := keyDocs[key]
		if !ok {
			missing = append(missing, key)
		}
		return d
	}
	def := Default()
	for _, e := range globalEntries {
		r := ReferenceRow{Key: e.key, Env: EnvVar(e.key)}
		if e.aliasOf != "" {
			r.AliasOf = e.aliasOf
			r.Doc = "older name of `" + e.aliasOf + "` (accepted; the dump shows the new name)"
		} else {
			r.Default, r.Doc = e.render(&def), doc(e.key)
		}
		rows = append(rows, r)
	}
	rows = append(rows, ReferenceRow{Key: KeyTLSProfiles, Env: EnvVar(KeyTLSProfiles), Doc: doc(KeyTLSProfiles)})
	for _, o := range tlsProfileOptions {
		k := TLSProfileKeyPrefix + "<name>." + o
		r := ReferenceRow{Key: k, Env: EnvVar(TLSProfileKeyPrefix) + "<NAME>__" + envSuffix(o), Doc: doc(k)}
		if o == tlsProfileHandshake {
			r.Default = FormatDuration(DefaultTLSHandshakeTimeout)
		}
		rows = append(rows, r)
	}
	rows = append(rows, ReferenceRow{Key: ClustersKey, Default: DefaultClusterID, Env: EnvVar(ClustersKey), Doc: doc(ClustersKey)})
	cl := DefaultCluster("<id>")
	for _, e := range clusterEntries {
		rows = append(rows, ReferenceRow{Key: ClusterKey("<id>", e.key), Default: e.render(&cl),
			Env: EnvPrefix + "CLUSTER__<ID>__" + envSuffix(e.key), Doc: doc(e.key)})
	}
	if len(missing) > 0 {
		return rows, fmt.Errorf("configuration keys without a description in keyDocs (bootstrap/config/reference.go): %s",
			strings.Join(missing, ", "))
	}
	return rows, nil
}

// ReferenceMarkdown renders Reference as the table of docs/configuration.md.
func ReferenceMarkdown(rows []ReferenceRow) string {
	var b strings.Builder
	b.WriteString("| key | default | environment variable | what |\n|---|---|---|---|\n")
	for _, r := range rows {
		d := "(unset)"
		switch {
		case r.AliasOf != "":
			d = "(alias)"
		case r.Default != "":
			d = "`" + r.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", r.Key, d, r.Env, strings.ReplaceAll(r.Doc, "|", "\\|"))
	}
	return b.String()
}
