package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/identity"
)

// Key prefixes and the cluster declaration key.
const (
	KeyPrefix        = "gateway."
	ClustersKey      = "gateway.clusters"
	ClusterKeyPrefix = "gateway.cluster."
	// EnvPrefix starts every override variable.
	EnvPrefix = "FLUSS_GATEWAY__"
	// ConfigPathEnv names the configuration file when --config is absent.
	ConfigPathEnv = "FLUSS_GATEWAY_CONFIG"
	// clientOptionPrefix is reserved (as in the official gateway) for native
	// Fluss client options, which are not supported yet.
	clientOptionPrefix = "client."
)

// Keys referenced outside the registry.
const (
	KeyRESTListen       = "gateway.rest.listen"
	KeyMetricsListen    = "gateway.metrics.exporter.prometheus.listen"
	KeySecurityAuth     = identity.KeyAuthentication
	KeyInstanceID       = "gateway.instance-id"
	KeyRequestTimeout   = "gateway.rest.request-timeout"
	KeyMaxDeliveryTime  = "gateway.rest.write.max-delivery-time"
	clusterKeyBackend   = "backend"
	clusterKeyServers   = "bootstrap.servers"
	clusterKeyAccount   = "connection.service.account"
	clusterKeySecret    = "connection.service.secret"
	clusterKeyIdentity  = "connection.identity-mode"
	clusterKeyProtocol  = "connection.security.protocol"
	clusterKeyConnMax   = "connection.max"
	clusterKeyConnIdle  = "connection.idle-timeout"
	clusterKeyConnectTO = "connect-timeout"
	clusterKeyAutoPart  = "write.auto-create-partitions"
	clusterKeyThrottle  = "write.kv-backpressure.max-throttle"
	// Writer and lookup tuning (gateway-go extensions).
	clusterKeyLinger        = "write.linger"
	clusterKeyKvLinger      = "write.kv-linger"
	clusterKeyLingerAfter   = "write.linger-after-in-flight"
	clusterKeyLanes         = "write.lanes"
	clusterKeyWriteInFlight = "write.max-in-flight-per-bucket"
	clusterKeyBatchSize     = "write.batch-size"
	clusterKeyLookupFlight  = "lookup.max-in-flight-per-server"
	clusterKeyLookupKeys    = "lookup.max-keys-per-request"
	// KeyReadinessGrace is a gateway-go extension key.
	KeyReadinessGrace = "gateway.shutdown.readiness-grace"
	// KeyDocsEnabled switches the API reference page GET /docs (gateway-go key).
	KeyDocsEnabled = "gateway.rest.docs.enabled"
)

// REST listener hardening keys (gateway-go extensions).
const (
	KeyMetadataMaxRequestBytes = "gateway.rest.metadata.max-request-bytes"
	// KeyWriteStreamMaxRows caps the entries of one streamed (NDJSON or
	// Arrow IPC) write body; a gateway-go key.
	KeyWriteStreamMaxRows = "gateway.rest.write.stream.max-rows"
	// KeyRESTResponseWriteTimeout bounds writing one response.
	KeyRESTResponseWriteTimeout = "gateway.rest.response-write-timeout"
	// KeyRESTWriteTimeout is the older name of KeyRESTResponseWriteTimeout
	// (it sat confusingly beside the gateway.rest.write.* group of the write
	// route), kept as an alias.
	KeyRESTWriteTimeout       = "gateway.rest.write-timeout"
	KeyRESTIdleTimeout        = "gateway.rest.idle-timeout"
	KeyRESTMaxConnsPerAddress = "gateway.rest.max-connections-per-address"
	KeyRESTLingerTimeout      = "gateway.rest.linger-timeout"
	// Resource budget (issue 21), gateway-go keys.
	KeyRESTMemoryBudget       = "gateway.rest.memory-budget-bytes"
	KeyLookupMaxResponseBytes = "gateway.rest.lookup.max-response-bytes"
	KeyRESTMaxConnections     = "gateway.rest.max-connections"
)

// scalar is one configured value: YAML scalar text with its resolved tag
// (!!str, !!int, !!bool, !!float, !!null), or an environment or command-line
// string with an empty tag.
type scalar struct {
	text string
	tag  string
}

func (v scalar) str() (string, error) {
	if v.tag == "!!null" {
		return "", errors.New("value is missing")
	}
	return v.text, nil
}

func (v scalar) boolean() (bool, error) {
	s, err := v.str()
	if err != nil {
		return false, err
	}
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("expected true or false")
}

func (v scalar) count() (int, error) {
	s, err := v.str()
	if err != nil {
		return 0, err
	}
	if v.tag != "" && v.tag != "!!int" && v.tag != "!!str" {
		return 0, errors.New("expected a non-negative integer")
	}
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, errors.New("expected a non-negative integer")
	}
	if n > math.MaxUint32 {
		return 0, fmt.Errorf("must not exceed %d", uint64(math.MaxUint32))
	}
	return int(n), nil
}

func (v scalar) duration() (time.Duration, error) {
	s, err := v.str()
	if err != nil {
		return 0, err
	}
	return ParseDuration(s)
}

// durationOrZero is duration, except that a zero (`0`, `0s`, `0ms`...) is
// accepted and means "none".
func (v scalar) durationOrZero() (time.Duration, error) {
	s, err := v.str()
	if err != nil {
		return 0, err
	}
	digits, unit := splitNumberAndUnit(s)
	if digits != "" && strings.Trim(digits, "0") == "" {
		switch strings.ToLower(unit) {
		case "", "ms", "s", "m", "h", "d":
			return 0, nil
		}
	}
	return ParseDuration(s)
}

func (v scalar) byteSize() (int64, error) {
	s, err := v.str()
	if err != nil {
		return 0, err
	}
	return ParseByteSize(s)
}

func (v scalar) oneOf(allowed ...string) (string, error) {
	s, err := v.str()
	if err != nil {
		return "", err
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", fmt.Errorf("expected %s", orList(allowed))
}

func orList(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// entry is one key of the registry: how to apply a value and how to render
// the effective value for a dump. T is Config for global keys and Cluster for
// per-cluster keys (whose key is the suffix after `gateway.cluster.<id>.`).
type entry[T any] struct {
	key    string
	secret bool
	apply  func(*T, scalar) error
	render func(*T) string
	// aliasOf is the key this one is an older name of: it sets the same
	// setting, the dump shows only the new name, and setting both to
	// different values is an error.
	aliasOf string
}

// alias returns e under an older name.
func alias[T any](old string, e entry[T]) entry[T] {
	e.aliasOf, e.key = e.key, old
	return e
}

func stringEntry[T any](key string, field func(*T) *string) entry[T] {
	return entry[T]{
		key:    key,
		apply:  func(t *T, v scalar) (err error) { *field(t), err = v.str(); return err },
		render: func(t *T) string { return *field(t) },
	}
}

func secretEntry[T any](key string, field func(*T) *Secret) entry[T] {
	return entry[T]{
		key:    key,
		secret: true,
		apply: func(t *T, v scalar) error {
			s, err := v.str()
			if err != nil {
				return err
			}
			*field(t) = NewSecret(s)
			return nil
		},
		render: func(t *T) string { return field(t).String() },
	}
}

func boolEntry[T any](key string, field func(*T) *bool) entry[T] {
	return entry[T]{
		key:    key,
		apply:  func(t *T, v scalar) (err error) { *field(t), err = v.boolean(); return err },
		render: func(t *T) string { return strconv.FormatBool(*field(t)) },
	}
}

func countEntry[T any](key string, field func(*T) *int) entry[T] {
	return entry[T]{
		key:    key,
		apply:  func(t *T, v scalar) (err error) { *field(t), err = v.count(); return err },
		render: func(t *T) string { return strconv.Itoa(*field(t)) },
	}
}

func durationEntry[T any](key string, field func(*T) *time.Duration) entry[T] {
	return entry[T]{
		key:    key,
		apply:  func(t *T, v scalar) (err error) { *field(t), err = v.duration(); return err },
		render: func(t *T) string { return FormatDuration(*field(t)) },
	}
}

// durationOrZeroEntry is durationEntry that also accepts a zero ("none").
func durationOrZeroEntry[T any](key string, field func(*T) *time.Duration) entry[T] {
	return entry[T]{
		key:    key,
		apply:  func(t *T, v scalar) (err error) { *field(t), err = v.durationOrZero(); return err },
		render: func(t *T) string { return FormatDuration(*field(t)) },
	}
}

// optionalDuration renders an optional duration, "" when unset.
func optionalDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return FormatDuration(d)
}

func sizeEntry[T any](key string, field func(*T) *int64) entry[T] {
	return entry[T]{
		key:    key,
		apply:  func(t *T, v scalar) (err error) { *field(t), err = v.byteSize(); return err },
		render: func(t *T) string { return FormatByteSize(*field(t)) },
	}
}

func listenEntry[T any](key string, field func(*T) *string) entry[T] {
	return entry[T]{
		key: key,
		apply: func(t *T, v scalar) error {
			s, err := v.str()
			if err != nil {
				return err
			}
			if err := checkSocketAddress(s); err != nil {
				return err
			}
			*field(t) = s
			return nil
		},
		render: func(t *T) string { return *field(t) },
	}
}

// globalEntries are the keys outside `gateway.cluster.<id>.` and
// `gateway.clusters`: those of the official gateway, then the security and
// TLS extensions (security.go).
var globalEntries = append([]entry[Config]{
	stringEntry(KeyInstanceID, func(c *Config) *string { return &c.InstanceID }),
	listenEntry(KeyRESTListen, func(c *Config) *string { return &c.REST.Listen }),
	durationEntry("gateway.rest.header-read-timeout", func(c *Config) *time.Duration { return &c.REST.HeaderReadTimeout }),
	durationEntry(KeyRequestTimeout, func(c *Config) *time.Duration { return &c.REST.RequestTimeout }),
	alias(KeyWriteRequestTimeout, durationEntry(KeyRequestTimeout, func(c *Config) *time.Duration { return &c.REST.RequestTimeout })),
	stringEntry(KeyGatewayID, func(c *Config) *string { return &c.Identity.GatewayID }),
	stringEntry(KeyGatewayHost, func(c *Config) *string { return &c.Identity.Host }),
	stringEntry(KeyRESTTLSProfile, func(c *Config) *string { return &c.REST.TLS.Profile }),
	sizeEntry("gateway.rest.write.max-request-bytes", func(c *Config) *int64 { return &c.REST.MaxRequestBytes }),
	{
		// Optional: unset means "the request deadline minus the answer
		// margin", and the dump omits it.
		key:    KeyMaxDeliveryTime,
		apply:  func(c *Config, v scalar) (err error) { c.REST.MaxDeliveryTime, err = v.duration(); return err },
		render: func(c *Config) string { return optionalDuration(c.REST.MaxDeliveryTime) },
	},
	countEntry("gateway.rest.write.max-rows", func(c *Config) *int { return &c.Limits.WriteMaxRows }),
	countEntry(KeyWriteStreamMaxRows, func(c *Config) *int { return &c.Limits.WriteStreamMaxRows }),
	countEntry("gateway.rest.write.max-concurrent-requests", func(c *Config) *int { return &c.Limits.WriteMaxConcurrentRequests }),
	boolEntry("gateway.rest.write.rate-limit.enabled", func(c *Config) *bool { return &c.Limits.WriteRateLimitEnabled }),
	countEntry("gateway.rest.write.rate-limit.requests-per-second", func(c *Config) *int { return &c.Limits.WriteRateLimitRequestsPerSecond }),
	sizeEntry("gateway.rest.write.rate-limit.bytes-per-second", func(c *Config) *int64 { return &c.Limits.WriteRateLimitBytesPerSecond }),
	countEntry("gateway.rest.lookup.max-keys", func(c *Config) *int { return &c.Limits.LookupMaxKeys }),
	sizeEntry("gateway.rest.lookup.max-key-bytes", func(c *Config) *int64 { return &c.Limits.LookupMaxKeyBytes }),
	countEntry("gateway.rest.lookup.max-concurrent-requests", func(c *Config) *int { return &c.Limits.LookupMaxConcurrentRequests }),
	countEntry("gateway.rest.prefix-lookup.max-prefixes", func(c *Config) *int { return &c.Limits.PrefixLookupMaxPrefixes }),
	countEntry("gateway.rest.prefix-lookup.max-rows-per-prefix", func(c *Config) *int { return &c.Limits.PrefixLookupMaxRowsPerPrefix }),
	countEntry("gateway.rest.prefix-lookup.max-concurrent-requests", func(c *Config) *int { return &c.Limits.PrefixLookupMaxConcurrentRequests }),
	countEntry("gateway.rest.metadata.max-concurrent-requests", func(c *Config) *int { return &c.Limits.MetadataMaxConcurrentRequests }),
	countEntry("gateway.rest.scan.max-rows", func(c *Config) *int { return &c.Scan.MaxRows }),
	durationEntry("gateway.rest.scan.max-wait", func(c *Config) *time.Duration { return &c.Scan.MaxWait }),
	sizeEntry("gateway.rest.scan.max-bytes", func(c *Config) *int64 { return &c.Scan.MaxBytes }),
	countEntry("gateway.rest.scan.max-concurrent-requests", func(c *Config) *int { return &c.Scan.MaxConcurrentRequests }),
	durationEntry("gateway.rest.admission.max-wait", func(c *Config) *time.Duration { return &c.REST.AdmissionMaxWait }),
	boolEntry(KeyDocsEnabled, func(c *Config) *bool { return &c.REST.DocsEnabled }),
	sizeEntry(KeyMetadataMaxRequestBytes, func(c *Config) *int64 { return &c.REST.MaxMetadataRequestBytes }),
	durationEntry(KeyRESTResponseWriteTimeout, func(c *Config) *time.Duration { return &c.REST.WriteTimeout }),
	alias(KeyRESTWriteTimeout, durationEntry(KeyRESTResponseWriteTimeout, func(c *Config) *time.Duration { return &c.REST.WriteTimeout })),
	durationEntry(KeyRESTIdleTimeout, func(c *Config) *time.Duration { return &c.REST.IdleTimeout }),
	countEntry(KeyRESTMaxConnsPerAddress, func(c *Config) *int { return &c.REST.MaxConnectionsPerAddress }),
	durationEntry(KeyRESTLingerTimeout, func(c *Config) *time.Duration { return &c.REST.LingerTimeout }),
	{
		// Optional: unset derives the budget from the memory limit, and the
		// dump omits it.
		key:   KeyRESTMemoryBudget,
		apply: func(c *Config, v scalar) (err error) { c.REST.MemoryBudgetBytes, err = v.byteSize(); return err },
		render: func(c *Config) string {
			if c.REST.MemoryBudgetBytes == 0 {
				return ""
			}
			return FormatByteSize(c.REST.MemoryBudgetBytes)
		},
	},
	sizeEntry(KeyLookupMaxResponseBytes, func(c *Config) *int64 { return &c.REST.MaxLookupResponseBytes }),
	countEntry(KeyRESTMaxConnections, func(c *Config) *int { return &c.REST.MaxConnections }),
	boolEntry("gateway.metrics.enabled", func(c *Config) *bool { return &c.Metrics.Enabled }),
	{
		key: "gateway.metrics.exporters",
		apply: func(c *Config, v scalar) (err error) {
			s, err := v.str()
			if err != nil {
				return err
			}
			if strings.TrimSpace(s) != "prometheus" {
				return errors.New("expected prometheus")
			}
			c.Metrics.Exporter = "prometheus"
			return nil
		},
		render: func(c *Config) string { return c.Metrics.Exporter },
	},
	listenEntry(KeyMetricsListen, func(c *Config) *string { return &c.Metrics.PrometheusListen }),
	boolEntry("gateway.metrics.table-label.enabled", func(c *Config) *bool { return &c.Metrics.TableLabel }),
	boolEntry("gateway.metrics.database-label.enabled", func(c *Config) *bool { return &c.Metrics.DatabaseLabel }),
	countEntry("gateway.metrics.max-tables", func(c *Config) *int { return &c.Metrics.MaxTables }),
	durationEntry("gateway.shutdown.drain-timeout", func(c *Config) *time.Duration { return &c.Shutdown.DrainTimeout }),
	{
		key: KeyReadinessGrace,
		apply: func(c *Config, v scalar) (err error) {
			c.Shutdown.ReadinessGrace, err = v.durationOrZero()
			return err
		},
		render: func(c *Config) string {
			if c.Shutdown.ReadinessGrace == 0 {
				return "0s"
			}
			return FormatDuration(c.Shutdown.ReadinessGrace)
		},
	},
	{
		key: KeySecurityAuth,
		apply: func(c *Config, v scalar) error {
			s, err := v.oneOf(string(AuthTrust), string(AuthPassword), string(AuthToken), string(AuthTrustedHeader),
				string(AuthJWT), string(AuthMTLS))
			c.Security.Authentication = AuthenticationMode(s)
			return err
		},
		render: func(c *Config) string { return string(c.Security.Authentication) },
	},
	secretEntry(KeyUsers, func(c *Config) *Secret { return &c.Security.Users }),
	secretEntry(KeyTokens, func(c *Config) *Secret { return &c.Security.Tokens }),
	stringEntry(KeyTrustedHeaderName, func(c *Config) *string { return &c.Security.TrustedHeaderName }),
}, slices.Concat(securityEntries, idempotencyEntries, guardEntries)...)

// clusterEntries are the keys under `gateway.cluster.<id>.`. The last three
// are gateway-go extensions: `connection.security.protocol` makes the
// transport explicit, `backend` selects the in-memory development backend,
// and `write.auto-create-partitions` switches the writer's dynamic partition
// creation.
var clusterEntries = []entry[Cluster]{
	{
		key: clusterKeyServers,
		apply: func(c *Cluster, v scalar) error {
			s, err := v.str()
			if err != nil {
				return err
			}
			c.BootstrapServers = splitList(s)
			return nil
		},
		render: func(c *Cluster) string { return strings.Join(c.BootstrapServers, ",") },
	},
	durationEntry(clusterKeyConnectTO, func(c *Cluster) *time.Duration { return &c.ConnectTimeout }),
	stringEntry(clusterKeyAccount, func(c *Cluster) *string { return &c.ServiceAccount }),
	secretEntry(clusterKeySecret, func(c *Cluster) *Secret { return &c.ServiceSecret }),
	{
		key: clusterKeyIdentity,
		apply: func(c *Cluster, v scalar) error {
			s, err := v.oneOf(string(IdentityService), string(IdentityUser))
			c.IdentityMode = IdentityMode(s)
			return err
		},
		render: func(c *Cluster) string { return string(c.IdentityMode) },
	},
	countEntry(clusterKeyConnMax, func(c *Cluster) *int { return &c.ConnectionMax }),
	durationEntry(clusterKeyConnIdle, func(c *Cluster) *time.Duration { return &c.ConnectionIdleTimeout }),
	{
		key: clusterKeyProtocol,
		apply: func(c *Cluster, v scalar) error {
			s, err := v.str()
			if err != nil {
				return err
			}
			switch p := SecurityProtocol(strings.ToUpper(strings.TrimSpace(s))); p {
			case ProtocolPlaintext, ProtocolSASL:
				c.SecurityProtocol = p
				return nil
			}
			return errors.New("expected PLAINTEXT or SASL")
		},
		render: func(c *Cluster) string { return string(c.EffectiveSecurityProtocol()) },
	},
	{
		key: clusterKeyBackend,
		apply: func(c *Cluster, v scalar) error {
			s, err := v.oneOf(string(BackendFluss), string(BackendMemory))
			c.Backend = Backend(s)
			return err
		},
		render: func(c *Cluster) string { return string(c.Backend) },
	},
	boolEntry(clusterKeyAutoPart, func(c *Cluster) *bool { return &c.AutoCreatePartitions }),
	durationEntry(clusterKeyThrottle, func(c *Cluster) *time.Duration { return &c.MaxThrottle }),
	durationOrZeroEntry(clusterKeyLinger, func(c *Cluster) *time.Duration { return &c.WriteLinger }),
	durationOrZeroEntry(clusterKeyKvLinger, func(c *Cluster) *time.Duration { return &c.WriteKvLinger }),
	countEntry(clusterKeyLingerAfter, func(c *Cluster) *int { return &c.WriteLingerAfterInFlight }),
	countEntry(clusterKeyLanes, func(c *Cluster) *int { return &c.WriteLanes }),
	countEntry(clusterKeyWriteInFlight, func(c *Cluster) *int { return &c.WriteMaxInFlightPerBucket }),
	sizeEntry(clusterKeyBatchSize, func(c *Cluster) *int64 { return &c.WriteBatchSize }),
	countEntry(clusterKeyLookupFlight, func(c *Cluster) *int { return &c.LookupMaxInFlight }),
	countEntry(clusterKeyLookupKeys, func(c *Cluster) *int { return &c.LookupMaxKeysPerRequest }),
}

// ClusterKey returns the full key of a per-cluster option, for messages.
func ClusterKey(id, suffix string) string { return ClusterKeyPrefix + id + "." + suffix }

// EnvVar returns the environment variable that overrides a full key.
func EnvVar(key string) string {
	return EnvPrefix + envSuffix(strings.TrimPrefix(key, KeyPrefix))
}

func envSuffix(dotted string) string {
	segs := strings.Split(dotted, ".")
	for i, s := range segs {
		segs[i] = strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
	}
	return strings.Join(segs, "__")
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func findGlobal(key string) *entry[Config] {
	for i := range globalEntries {
		if globalEntries[i].key == key {
			return &globalEntries[i]
		}
	}
	return nil
}

func findCluster(suffix string) *entry[Cluster] {
	for i := range clusterEntries {
		if clusterEntries[i].key == suffix {
			return &clusterEntries[i]
		}
	}
	return nil
}

// validClusterID reports whether id is a lower-case letter followed by at most
// 62 lower-case letters, digits or underscores.
func validClusterID(id string) bool {
	if id == "" || len(id) > 63 || id[0] < 'a' || id[0] > 'z' {
		return false
	}
	for i := 1; i < len(id); i++ {
		b := id[i]
		if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_') {
			return false
		}
	}
	return true
}
