// Package config loads, validates and renders the gateway configuration.
//
// The format matches the official Fluss gateway (apache/fluss:
// fluss-gateway/src/config.rs): a YAML file whose top level is a mapping of
// flat dotted keys under `gateway.`, for example
//
//	gateway.rest.listen: 127.0.0.1:8080
//	gateway.clusters: default,analytics
//	gateway.cluster.analytics.bootstrap.servers: fluss-1:9123,fluss-2:9123
//
// Sources are applied with the precedence command line > environment > file >
// defaults. Every key has an environment variable: drop the `gateway.`
// prefix, upper-case each dotted segment with `-` turned into `_`, join the
// segments with `__` and prepend `FLUSS_GATEWAY__`. So `gateway.rest.listen`
// is FLUSS_GATEWAY__REST__LISTEN, `gateway.rest.write.max-request-bytes` is
// FLUSS_GATEWAY__REST__WRITE__MAX_REQUEST_BYTES and
// `gateway.cluster.eu.connection.service.secret` is
// FLUSS_GATEWAY__CLUSTER__EU__CONNECTION__SERVICE__SECRET (the cluster id is
// lower-cased back). `gateway.clusters` takes a comma-separated list, in the
// file also a YAML list. The file path comes from `--config` or, failing
// that, FLUSS_GATEWAY_CONFIG (one underscore: it is not a key).
//
// Unknown keys and unknown FLUSS_GATEWAY__* variables are rejected naming the
// key; invalid values name the key and, for the environment, the variable.
// Credentials are Secret values that render as "******" everywhere; error
// messages never quote them.
package config

import (
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/lookup"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/identity"
	"github.com/fluss-gateway/fluss-gateway-go/application"
)

// Config is the validated gateway configuration.
type Config struct {
	// InstanceID optionally identifies this gateway process in logs and
	// telemetry (`gateway.instance-id`).
	InstanceID string
	REST       REST
	Metrics    Metrics
	Shutdown   Shutdown
	Security   Security
	Limits     Limits
	// Scan bounds log scans (`gateway.rest.scan.*`, an extension).
	Scan Scan
	// Idempotency configures the Idempotency-Key extension (idempotency.go).
	Idempotency Idempotency
	// Clusters are the declared clusters in `gateway.clusters` order.
	Clusters []Cluster
	// Identity names the logical gateway and the host (`gateway.id`,
	// `gateway.host`; official keys), exported as metric labels.
	Identity Identity
	// TLSProfiles are the named TLS identities (`gateway.tls.profiles`,
	// `gateway.tls.profile.<name>.*`; official keys) by name.
	TLSProfiles map[string]TLSProfile
}

// Identity is the logical gateway identity of the official configuration.
type Identity struct {
	// GatewayID is shared by all processes serving one logical gateway
	// (`gateway.id`): the `gateway_id` label of every metric.
	GatewayID string
	// Host is this process's network location (`gateway.host`): the `host`
	// label of every metric.
	Host string
}

// TLSProfile is one named TLS identity (`gateway.tls.profile.<name>.*`).
// `gateway.rest.tls.profile` selects the one the REST listener serves.
type TLSProfile struct {
	CertificateFile  string
	PrivateKeyFile   string
	HandshakeTimeout time.Duration
}

// REST configures the HTTP listener (`gateway.rest.*`).
type REST struct {
	// Listen is the IP:port of the REST listener. Loopback by default because
	// the gateway terminates no TLS.
	Listen string
	// HeaderReadTimeout bounds reading a request from the connection.
	HeaderReadTimeout time.Duration
	// RequestTimeout is the per-request server-side deadline; exceeding it
	// answers 504 timeout.
	RequestTimeout time.Duration
	// MaxRequestBytes caps request bodies; larger ones answer 413.
	MaxRequestBytes int64
	// MaxMetadataRequestBytes caps the bodies of the catalog routes
	// (`gateway.rest.metadata.max-request-bytes`, a gateway-go key); it is
	// clamped to MaxRequestBytes.
	MaxMetadataRequestBytes int64
	// WriteTimeout bounds writing one response (`gateway.rest.response-write-timeout`,
	// a gateway-go key): a client that stops reading loses its connection.
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection (`gateway.rest.idle-timeout`, a gateway-go key).
	IdleTimeout time.Duration
	// MaxConnectionsPerAddress caps the open connections of one client IP
	// address (`gateway.rest.max-connections-per-address`, a gateway-go key).
	MaxConnectionsPerAddress int
	// LingerTimeout bounds how long a connection the gateway closes keeps
	// reading (and discarding) what the client still sends, so that the
	// client can read the answer, a 413 for example, instead of a reset
	// (`gateway.rest.linger-timeout`, a gateway-go key).
	LingerTimeout time.Duration
	// MemoryBudgetBytes is the data-plane memory budget
	// (`gateway.rest.memory-budget-bytes`, a gateway-go key): request bodies,
	// decompressed bodies, decoded rows and lookup answers in flight. 0
	// derives it from the process's memory limit (bootstrap/resources.go).
	MemoryBudgetBytes int64
	// MaxLookupResponseBytes caps the answer of one lookup or prefix lookup
	// (`gateway.rest.lookup.max-response-bytes`, a gateway-go key).
	MaxLookupResponseBytes int64
	// MaxConnections caps the REST listener's open connections, lingering
	// ones included (`gateway.rest.max-connections`, a gateway-go key). 0
	// derives it from the descriptor limit (bootstrap/resources.go).
	MaxConnections int
	// MaxDeliveryTime bounds how long a write may spend delivering its rows
	// to Fluss (`gateway.rest.write.max-delivery-time`, a gateway-go key).
	// Delivery always ends a margin (a quarter of the request's time, at
	// most 500ms) before the request deadline, so that the per-entry
	// verdicts can be sent; 0 (unset) means only that bound applies.
	MaxDeliveryTime time.Duration
	// AdmissionMaxWait bounds how long a request waits for a slot of its
	// concurrency budget or for a rate-limit token before 429
	// resource_exhausted (`gateway.rest.admission.max-wait`, a gateway-go key).
	AdmissionMaxWait time.Duration
	// TLS terminates TLS on the listener (`gateway.rest.tls.*`, gateway-go
	// keys); off while no certificate is configured.
	TLS TLS
	// DocsEnabled serves the API reference page at GET /docs
	// (`gateway.rest.docs.enabled`, a gateway-go key; default true).
	DocsEnabled bool
}

// ClientAuth is whether the REST listener asks for TLS client certificates.
type ClientAuth string

// Client certificate policies (`gateway.rest.tls.client-auth`).
const (
	ClientAuthNone    ClientAuth = "none"
	ClientAuthRequest ClientAuth = "request" // verified when presented
	ClientAuthRequire ClientAuth = "require" // handshake fails without one
)

// TLS configures TLS on the REST listener.
type TLS struct {
	CertFile string
	KeyFile  string
	// MinVersion is "1.2" or "1.3".
	MinVersion   string
	ClientCAFile string
	ClientAuth   ClientAuth
	// ReloadInterval is how often the certificate, key and client CA files
	// are checked for changes.
	ReloadInterval time.Duration
	// Profile is the TLS profile the listener serves
	// (`gateway.rest.tls.profile`, official); when set, CertFile and
	// KeyFile come from the profile.
	Profile string
	// HandshakeTimeout bounds a client's TLS handshake (the profile's
	// `handshake-timeout`, default 5 s as in the official gateway).
	HandshakeTimeout time.Duration
}

// Enabled reports whether TLS is configured.
func (t TLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Metrics configures the Prometheus listener (`gateway.metrics.*`).
type Metrics struct {
	Enabled bool
	// Exporter is the metrics exporter; only "prometheus" exists.
	Exporter string
	// PrometheusListen is the IP:port serving GET /metrics.
	PrometheusListen string
	// TableLabel and DatabaseLabel add table and database attributes to the
	// REST, write, lookup and writer families (gateway.metrics.table-label.enabled,
	// gateway.metrics.database-label.enabled); MaxTables caps their distinct values,
	// later tables are folded into `other` (gateway.metrics.max-tables).
	TableLabel    bool
	DatabaseLabel bool
	MaxTables     int
}

// Shutdown configures graceful shutdown (`gateway.shutdown.*`).
type Shutdown struct {
	// DrainTimeout bounds the in-flight request drain that follows the
	// readiness grace.
	DrainTimeout time.Duration
	// ReadinessGrace (`gateway.shutdown.readiness-grace`, a gateway-go
	// extension) is how long the REST listener keeps serving after SIGTERM
	// with /ready answering 503, so load balancers and readiness probes see
	// the instance leave before it stops accepting connections. Zero stops
	// accepting at once.
	ReadinessGrace time.Duration
}

// AuthenticationMode is how HTTP callers are authenticated.
type AuthenticationMode string

// Authentication modes (`gateway.security.authentication`).
const (
	AuthTrust         AuthenticationMode = identity.MethodTrust
	AuthPassword      AuthenticationMode = identity.MethodPassword
	AuthToken         AuthenticationMode = identity.MethodToken
	AuthTrustedHeader AuthenticationMode = identity.MethodTrustedHeader
	// AuthJWT verifies OIDC/JWT bearer tokens against a JWKS (gateway-go
	// extension).
	AuthJWT AuthenticationMode = identity.MethodJWT
	// AuthMTLS takes the principal from the verified TLS client certificate
	// (gateway-go extension; needs gateway.rest.tls.client-ca-file).
	AuthMTLS AuthenticationMode = identity.MethodMTLS
)

// Security configures caller authentication (`gateway.security.*`). The
// keys other than authentication, users, tokens and trusted-header.name are
// gateway-go extensions (see security.go).
type Security struct {
	Authentication AuthenticationMode
	// Realm is the realm of WWW-Authenticate challenges.
	Realm string
	// TrustAllowNonLoopback lets trust mode accept non-loopback clients.
	TrustAllowNonLoopback bool
	// Users is the password-mode table `principal:secret` or
	// `principal:bcrypt:<hash>`, comma-separated.
	Users Secret
	// PasswordCacheTTL is how long a verified Basic credential is
	// remembered (keyed by an HMAC, never stored); negative disables it.
	PasswordCacheTTL time.Duration
	// MaxFailedLogins (0: no throttle) failed Basic logins per source
	// address and per user name are allowed per FailedLoginWindow.
	MaxFailedLogins   int
	FailedLoginWindow time.Duration
	// Tokens is the token-mode table `<token>:<principal>` or
	// `sha256:<hex>:<principal>`, comma-separated.
	Tokens Secret
	// TrustedHeaderName is the header carrying the principal in
	// trusted-header mode.
	TrustedHeaderName string
	// TrustedHeaderCIDRs are the proxy addresses allowed to set it; empty
	// means loopback only.
	TrustedHeaderCIDRs []string
	JWT                JWT
	// MTLSPrincipalField is the client certificate field naming the
	// principal: cn, subject, san-dns, san-email or san-uri.
	MTLSPrincipalField string
	ActAs              ActAs
	Quota              Quota
	// Guard holds the keys of guard.go (token key, Host/Origin, CORS,
	// policy).
	Guard Guard
}

// Scan bounds log scans (`gateway.rest.scan.*`; issue 23, an extension).
type Scan struct {
	// MaxRows caps a scan's max_rows.
	MaxRows int
	// MaxWait caps a scan's max_wait_ms long poll.
	MaxWait time.Duration
	// MaxBytes bounds the record bytes fetched from Fluss for one answer.
	MaxBytes int64
	// MaxConcurrentRequests bounds concurrent scans and offset listings.
	MaxConcurrentRequests int
}

// JWT configures the jwt authentication method (`gateway.security.jwt.*`):
// the identity adapter's JWTConfig, defined once there.
type JWT = identity.JWTConfig

// ActAs configures impersonation (`gateway.security.act-as.*`): principals
// on the allow-list may name, in the header, the end user to act for.
type ActAs struct {
	Header            string
	AllowedPrincipals []string
}

// Quota is a per-principal rate limit (`gateway.security.quota.*`); zero
// rates are unlimited.
type Quota struct {
	RequestsPerSecond int
	BytesPerSecond    int64
	// PerTable keys the table routes' buckets by principal and table.
	PerTable bool
	// MaxPrincipals bounds the LRU of buckets.
	MaxPrincipals int
}

// Enabled reports whether any quota rate is configured.
func (q Quota) Enabled() bool { return q.RequestsPerSecond > 0 || q.BytesPerSecond > 0 }

// Limits are the admission limits of the data-plane APIs
// (`gateway.rest.write.*`, `gateway.rest.lookup.*`,
// `gateway.rest.prefix-lookup.*`) and of the catalog API
// (`gateway.rest.metadata.*`, a gateway-go key).
type Limits struct {
	WriteMaxRows int
	// WriteStreamMaxRows caps the entries of one streamed write body, NDJSON
	// or Arrow IPC (`gateway.rest.write.stream.max-rows`, a gateway-go key).
	WriteStreamMaxRows                int
	WriteMaxConcurrentRequests        int
	WriteRateLimitEnabled             bool
	WriteRateLimitRequestsPerSecond   int
	WriteRateLimitBytesPerSecond      int64
	LookupMaxKeys                     int
	LookupMaxKeyBytes                 int64
	LookupMaxConcurrentRequests       int
	PrefixLookupMaxPrefixes           int
	PrefixLookupMaxRowsPerPrefix      int
	PrefixLookupMaxConcurrentRequests int
	MetadataMaxConcurrentRequests     int
}

// IdentityMode is how the gateway derives the Fluss principal of a request.
type IdentityMode string

// Identity modes (`gateway.cluster.<id>.connection.identity-mode`).
const (
	// IdentityService shares one connection authenticated as the service account.
	IdentityService IdentityMode = "service"
	// IdentityUser authenticates as the service account and acts as the caller.
	IdentityUser IdentityMode = "user"
)

// SecurityProtocol is the transport security towards a Fluss cluster.
type SecurityProtocol string

// Security protocols (`gateway.cluster.<id>.connection.security.protocol`).
const (
	ProtocolPlaintext SecurityProtocol = "PLAINTEXT"
	ProtocolSASL      SecurityProtocol = "SASL"
)

// Backend selects the implementation behind a cluster id.
type Backend string

// Cluster backends (`gateway.cluster.<id>.backend`).
const (
	// BackendFluss is a real Fluss cluster.
	BackendFluss Backend = "fluss"
	// BackendMemory is an in-process catalog for development and tests.
	BackendMemory Backend = "memory"
)

// Cluster configures one Fluss cluster (`gateway.cluster.<id>.*`).
type Cluster struct {
	// ID is the `{cluster}` path segment: a lower-case letter, then lower-case
	// letters, digits or underscores, 63 characters at most.
	ID string
	// BootstrapServers are the host:port seeds.
	BootstrapServers []string
	ConnectTimeout   time.Duration
	// ServiceAccount and ServiceSecret are the SASL/PLAIN credentials of the
	// gateway (`connection.service.account` / `connection.service.secret`).
	ServiceAccount string
	ServiceSecret  Secret
	// SecurityProtocol is SASL when credentials are configured and PLAINTEXT
	// otherwise, unless set explicitly (a gateway-go extension key that must
	// agree with the credentials).
	SecurityProtocol SecurityProtocol
	IdentityMode     IdentityMode
	// ConnectionMax caps pooled per-user connections (user mode); 0 is unset.
	ConnectionMax int
	// ConnectionIdleTimeout reclaims idle per-user connections (user mode);
	// 0 is unset.
	ConnectionIdleTimeout time.Duration
	// Backend is a gateway-go extension key; see Backend.
	Backend Backend
	// AutoCreatePartitions (`write.auto-create-partitions`, a gateway-go
	// extension, default true) lets a write create the missing partitions
	// of a partitioned table; when false such rows fail with
	// `partition_not_found`.
	AutoCreatePartitions bool
	// MaxThrottle (`write.kv-backpressure.max-throttle`, a gateway-go
	// extension, default 3 s as the Java client's
	// client.writer.kv-backpressure.max-throttle) bounds the writer's
	// per-bucket throttle on Fluss 1.0 KV backpressure (MaxThrottle × p²).
	MaxThrottle time.Duration

	// Writer and lookup tuning (gateway-go extensions; the defaults are
	// the Fluss adapter's: adapters/fluss/writer.Options and
	// adapters/fluss/lookup.Options, which document each knob).
	//
	// WriteLinger (`write.linger`, 10 ms): how long a bucket's non-full
	// batch waits for more rows while the bucket has batches in flight
	// (ProduceLog; 0: never waits).
	WriteLinger time.Duration
	// WriteKvLinger (`write.kv-linger`, 100 ms, the Java client's
	// client.writer.batch-timeout): the same for PutKv rows (0: never
	// waits).
	WriteKvLinger time.Duration
	// WriteLingerAfterInFlight (`write.linger-after-in-flight`, 1): a bucket
	// with fewer batches in flight than this sends its rows at once; 0
	// always waits for the linger (the Java client's rule).
	WriteLingerAfterInFlight int
	// WriteLanes (`write.lanes`, 2): connections per tablet server for
	// PutKv and ProduceLog, by bucket.
	WriteLanes int
	// WriteMaxInFlightPerBucket (`write.max-in-flight-per-bucket`, 5, the
	// Java client's client.writer.max-inflight-requests-per-bucket).
	WriteMaxInFlightPerBucket int
	// WriteBatchSize (`write.batch-size`, 2 MiB, the Java client's
	// client.writer.batch-size): a bucket's batch target in bytes.
	WriteBatchSize int64
	// LookupMaxInFlight (`lookup.max-in-flight-per-server`, 1): Lookup (and
	// PrefixLookup) requests of one table in flight to one tablet server;
	// the keys of further calls wait and go together in one request. 0: no
	// bound, every call sends its own request.
	LookupMaxInFlight int
	// LookupMaxKeysPerRequest (`lookup.max-keys-per-request`, 4096): keys of
	// one request that merges several calls' keys.
	LookupMaxKeysPerRequest int
}

// Defaults, as in the official gateway.
const (
	DefaultRESTListen        = "127.0.0.1:8080"
	DefaultMetricsListen     = "127.0.0.1:9095"
	DefaultMetricsMaxTables  = 100
	DefaultClusterID         = "default"
	DefaultBootstrapServers  = "127.0.0.1:9123"
	DefaultTrustedHeaderName = identity.DefaultTrustedHeaderName
	DefaultRealm             = identity.DefaultRealm
	DefaultActAsHeader       = identity.DefaultActAsHeader
	// DefaultReadinessGrace is the default of gateway.shutdown.readiness-grace.
	DefaultReadinessGrace = 2 * time.Second
	// MaxDuration bounds every configured duration to keep deadline
	// arithmetic safe.
	MaxDuration = 365 * 24 * time.Hour
)

// Default returns the configuration used when no source sets anything: one
// cluster `default` at 127.0.0.1:9123.
func Default() Config {
	return Config{
		REST: REST{
			Listen:            DefaultRESTListen,
			HeaderReadTimeout: 10 * time.Second,
			RequestTimeout:    30 * time.Second,
			MaxRequestBytes:   32 << 20,
			AdmissionMaxWait:  time.Second,
			DocsEnabled:       true,

			MaxMetadataRequestBytes:  1 << 20,
			WriteTimeout:             30 * time.Second,
			IdleTimeout:              60 * time.Second,
			MaxConnectionsPerAddress: 256,
			LingerTimeout:            2 * time.Second,
			MaxLookupResponseBytes:   16 << 20,
			TLS: TLS{
				MinVersion:       "1.2",
				ClientAuth:       ClientAuthNone,
				ReloadInterval:   30 * time.Second,
				HandshakeTimeout: DefaultTLSHandshakeTimeout,
			},
		},
		Metrics: Metrics{
			Enabled:          true,
			Exporter:         "prometheus",
			PrometheusListen: DefaultMetricsListen,
			MaxTables:        DefaultMetricsMaxTables,
		},
		Shutdown: Shutdown{DrainTimeout: 30 * time.Second, ReadinessGrace: DefaultReadinessGrace},
		Security: Security{
			Authentication:     AuthTrust,
			Realm:              DefaultRealm,
			PasswordCacheTTL:   identity.DefaultPasswordCacheTTL,
			MaxFailedLogins:    identity.DefaultMaxFailedLogins,
			FailedLoginWindow:  identity.DefaultFailedLoginWindow,
			MTLSPrincipalField: identity.DefaultMTLSPrincipalField,
			JWT: JWT{
				PrincipalClaim:  identity.DefaultPrincipalClaim,
				ClockSkew:       identity.DefaultClockSkew,
				RefreshInterval: identity.DefaultJWKSRefreshInterval,
				FetchTimeout:    identity.DefaultJWKSFetchTimeout,
				MaxLifetime:     identity.DefaultJWTMaxLifetime,
			},
			ActAs: ActAs{Header: DefaultActAsHeader},
			Quota: Quota{MaxPrincipals: 10_000},
			Guard: defaultGuard(),
		},
		Idempotency: DefaultIdempotency(),
		Limits: Limits{
			WriteMaxRows:                      application.DefaultWriteMaxRows,
			WriteStreamMaxRows:                1_000_000,
			WriteMaxConcurrentRequests:        64,
			WriteRateLimitRequestsPerSecond:   1000,
			WriteRateLimitBytesPerSecond:      64 << 20,
			LookupMaxKeys:                     application.DefaultLookupMaxKeys,
			LookupMaxKeyBytes:                 application.DefaultLookupMaxKeyBytes,
			LookupMaxConcurrentRequests:       64,
			PrefixLookupMaxPrefixes:           application.DefaultPrefixLookupMaxPrefixes,
			PrefixLookupMaxRowsPerPrefix:      application.DefaultPrefixLookupMaxRowsPerPrefix,
			PrefixLookupMaxConcurrentRequests: 32,
			MetadataMaxConcurrentRequests:     16,
		},
		Scan: Scan{MaxRows: application.DefaultScanMaxRows, MaxWait: application.DefaultScanMaxWait,
			MaxBytes: application.DefaultScanMaxBytes, MaxConcurrentRequests: 64},
		Clusters: []Cluster{DefaultCluster(DefaultClusterID)},
	}
}

// DefaultCluster returns the settings of a declared cluster none of whose
// keys are set.
func DefaultCluster(id string) Cluster {
	return Cluster{
		ID:               id,
		BootstrapServers: []string{DefaultBootstrapServers},
		ConnectTimeout:   10 * time.Second,
		IdentityMode:     IdentityService,
		Backend:          BackendFluss,
		// AutoCreatePartitions follows the Java client's default
		// (client.writer.dynamic-create-partition.enabled).
		AutoCreatePartitions: true,
		MaxThrottle:          writer.DefaultMaxThrottle,
		// The Fluss adapter's own defaults, defined there once.
		WriteLinger:               writer.DefaultLinger,
		WriteKvLinger:             writer.DefaultKvLinger,
		WriteLingerAfterInFlight:  writer.DefaultLingerAfterInFlight,
		WriteLanes:                writer.DefaultLanes,
		WriteMaxInFlightPerBucket: writer.DefaultMaxInFlightPerBucket,
		WriteBatchSize:            writer.DefaultBatchSize,
		LookupMaxInFlight:         lookup.DefaultMaxInFlightPerServer,
		LookupMaxKeysPerRequest:   lookup.DefaultMaxKeysPerRequest,
	}
}

// Cluster returns the cluster with the given id.
func (c *Config) Cluster(id string) (Cluster, bool) {
	for _, cl := range c.Clusters {
		if cl.ID == id {
			return cl, true
		}
	}
	return Cluster{}, false
}

// ClusterIDs returns the declared cluster ids in order.
func (c *Config) ClusterIDs() []string {
	ids := make([]string, len(c.Clusters))
	for i, cl := range c.Clusters {
		ids[i] = cl.ID
	}
	return ids
}

// EffectiveSecurityProtocol is the explicit protocol, or SASL when service
// credentials are configured and PLAINTEXT otherwise.
func (c Cluster) EffectiveSecurityProtocol() SecurityProtocol {
	if c.SecurityProtocol != "" {
		return c.SecurityProtocol
	}
	if c.ServiceAccount != "" && c.ServiceSecret.IsSet() {
		return ProtocolSASL
	}
	return ProtocolPlaintext
}
