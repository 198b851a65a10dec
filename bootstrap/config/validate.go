package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Validate checks every invariant, including those of a Config built in code
// rather than loaded, and reports all problems at once.
func (c *Config) Validate() error {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }

	if c.InstanceID != "" && !validInstanceID(c.InstanceID) {
		add("%s must be 1-128 ASCII letters, digits, dots, underscores or hyphens", KeyInstanceID)
	}
	c.validateIdempotency(add)
	if err := checkSocketAddress(c.REST.Listen); err != nil {
		add("%s: %v", KeyRESTListen, err)
	}
	checkDuration(add, "gateway.rest.header-read-timeout", c.REST.HeaderReadTimeout)
	checkDuration(add, KeyRequestTimeout, c.REST.RequestTimeout)
	checkDuration(add, "gateway.rest.admission.max-wait", c.REST.AdmissionMaxWait)
	checkDuration(add, KeyRESTResponseWriteTimeout, c.REST.WriteTimeout)
	checkDuration(add, KeyRESTIdleTimeout, c.REST.IdleTimeout)
	checkDuration(add, KeyRESTLingerTimeout, c.REST.LingerTimeout)
	if c.REST.MemoryBudgetBytes < 0 {
		add("%s must be 0 (derived from the memory limit) or a size", KeyRESTMemoryBudget)
	}
	if c.REST.MaxConnections < 0 {
		add("%s must be 0 (derived from the descriptor limit) or a count", KeyRESTMaxConnections)
	}
	if c.REST.MaxDeliveryTime != 0 {
		checkDuration(add, KeyMaxDeliveryTime, c.REST.MaxDeliveryTime)
		if c.REST.MaxDeliveryTime > c.REST.RequestTimeout && c.REST.RequestTimeout > 0 {
			add("%s (%s) must not exceed %s (%s)", KeyMaxDeliveryTime, FormatDuration(c.REST.MaxDeliveryTime),
				KeyRequestTimeout, FormatDuration(c.REST.RequestTimeout))
		}
	}
	checkDuration(add, "gateway.shutdown.drain-timeout", c.Shutdown.DrainTimeout)
	if c.Shutdown.ReadinessGrace < 0 || c.Shutdown.ReadinessGrace > MaxDuration {
		add("%s must be between 0 and %d seconds", KeyReadinessGrace, int64(MaxDuration/time.Second))
	}
	for _, s := range []struct {
		key string
		n   int64
	}{
		{"gateway.rest.write.max-request-bytes", c.REST.MaxRequestBytes},
		{KeyMetadataMaxRequestBytes, c.REST.MaxMetadataRequestBytes},
		{KeyRESTMaxConnsPerAddress, int64(c.REST.MaxConnectionsPerAddress)},
		{KeyLookupMaxResponseBytes, c.REST.MaxLookupResponseBytes},
		{"gateway.rest.write.max-rows", int64(c.Limits.WriteMaxRows)},
		{KeyWriteStreamMaxRows, int64(c.Limits.WriteStreamMaxRows)},
		{"gateway.rest.write.max-concurrent-requests", int64(c.Limits.WriteMaxConcurrentRequests)},
		{"gateway.rest.write.rate-limit.requests-per-second", int64(c.Limits.WriteRateLimitRequestsPerSecond)},
		{"gateway.rest.write.rate-limit.bytes-per-second", c.Limits.WriteRateLimitBytesPerSecond},
		{"gateway.rest.lookup.max-keys", int64(c.Limits.LookupMaxKeys)},
		{"gateway.rest.lookup.max-key-bytes", c.Limits.LookupMaxKeyBytes},
		{"gateway.rest.lookup.max-concurrent-requests", int64(c.Limits.LookupMaxConcurrentRequests)},
		{"gateway.rest.prefix-lookup.max-prefixes", int64(c.Limits.PrefixLookupMaxPrefixes)},
		{"gateway.rest.prefix-lookup.max-rows-per-prefix", int64(c.Limits.PrefixLookupMaxRowsPerPrefix)},
		{"gateway.rest.prefix-lookup.max-concurrent-requests", int64(c.Limits.PrefixLookupMaxConcurrentRequests)},
		{"gateway.rest.metadata.max-concurrent-requests", int64(c.Limits.MetadataMaxConcurrentRequests)},
		{"gateway.rest.scan.max-rows", int64(c.Scan.MaxRows)},
		{"gateway.rest.scan.max-wait", int64(c.Scan.MaxWait)},
		{"gateway.rest.scan.max-bytes", c.Scan.MaxBytes},
		{"gateway.rest.scan.max-concurrent-requests", int64(c.Scan.MaxConcurrentRequests)},
	} {
		if s.n <= 0 {
			add("%s must be greater than zero", s.key)
		}
	}
	if c.Metrics.Enabled {
		if c.Metrics.Exporter != "prometheus" {
			add("gateway.metrics.exporters: expected prometheus")
		}
		if err := checkSocketAddress(c.Metrics.PrometheusListen); err != nil {
			add("%s: %v", KeyMetricsListen, err)
		} else if addressesOverlap(c.REST.Listen, c.Metrics.PrometheusListen) {
			add("%s (%s) must differ from %s (%s)", KeyMetricsListen, c.Metrics.PrometheusListen, KeyRESTListen, c.REST.Listen)
		}
	}
	if c.Scan.MaxBytes > 1<<30 {
		add("gateway.rest.scan.max-bytes must be at most 1gb")
	}
	c.validateSecurity(add)
	c.validateClusters(add)
	if len(p) > 0 {
		return &Error{Problems: p}
	}
	return nil
}

func (c *Config) validateSecurity(add func(string, ...any)) {
	s := c.Security
	switch s.Authentication {
	case AuthTrust:
	case AuthPassword:
		if n, err := countTable(s.Users.Reveal(), parseUserEntry); err != nil {
			add("gateway.security.users: %v", err)
		} else if n == 0 {
			add("gateway.security.users must configure at least one user when %s is password", KeySecurityAuth)
		}
	case AuthToken:
		if n, err := countTable(s.Tokens.Reveal(), parseTokenEntry); err != nil {
			add("gateway.security.tokens: %v", err)
		} else if n == 0 {
			add("gateway.security.tokens must configure at least one token when %s is token", KeySecurityAuth)
		}
	case AuthTrustedHeader:
		if !validHeaderName(s.EffectiveTrustedHeaderName()) {
			add("gateway.security.trusted-header.name must be a legal HTTP header name")
		}
	case AuthJWT, AuthMTLS:
	default:
		add("%s: expected trust, password, token, trusted-header, jwt or mtls", KeySecurityAuth)
	}
	c.validateSecurityExtensions(add)
	c.validateGuard(add)
}

func (c *Config) validateClusters(add func(string, ...any)) {
	if len(c.Clusters) == 0 {
		add("%s must declare at least one cluster", ClustersKey)
	}
	seen := map[string]bool{}
	for _, cl := range c.Clusters {
		if !validClusterID(cl.ID) {
			add("cluster ID %q must be at most 63 characters, start with a lower-case letter and contain only lower-case letters, digits or underscores", cl.ID)
			continue
		}
		if seen[cl.ID] {
			add("%s: duplicate cluster ID %q", ClustersKey, cl.ID)
		}
		seen[cl.ID] = true
		key := func(suffix string) string { return ClusterKey(cl.ID, suffix) }
		if err := checkBootstrapServers(cl.BootstrapServers); err != nil {
			add("%s %v", key(clusterKeyServers), err)
		}
		checkDuration(add, key(clusterKeyConnectTO), cl.ConnectTimeout)
		if cl.ConnectionIdleTimeout < 0 || cl.ConnectionIdleTimeout > MaxDuration {
			add("%s must be between 1ms and %d seconds", key(clusterKeyConnIdle), int64(MaxDuration/time.Second))
		}
		if cl.ConnectionMax < 0 {
			add("%s must be greater than zero", key(clusterKeyConnMax))
		}
		checkClusterTuning(add, key, &cl)
		switch cl.Backend {
		case BackendFluss, BackendMemory:
		default:
			add("%s: expected fluss or memory", key(clusterKeyBackend))
		}
		switch cl.IdentityMode {
		case IdentityService, IdentityUser:
		default:
			add("%s: expected service or user", key(clusterKeyIdentity))
		}

		hasAccount, hasSecret := cl.ServiceAccount != "", cl.ServiceSecret.IsSet()
		if cl.ServiceSecret.IsSet() && strings.TrimSpace(cl.ServiceSecret.Reveal()) == "" {
			add("%s must not be blank", key(clusterKeySecret))
		}
		if hasAccount && strings.TrimSpace(cl.ServiceAccount) == "" {
			add("%s must not be blank", key(clusterKeyAccount))
		}
		if hasAccount != hasSecret {
			add("%s and %s must be set together", key(clusterKeyAccount), key(clusterKeySecret))
		}
		switch cl.SecurityProtocol {
		case "":
		case ProtocolSASL:
			if !hasAccount || !hasSecret {
				add("%s SASL requires %s and %s", key(clusterKeyProtocol), key(clusterKeyAccount), key(clusterKeySecret))
			}
		case ProtocolPlaintext:
			if hasAccount || hasSecret {
				add("%s PLAINTEXT contradicts the configured %s; use SASL or remove the credentials", key(clusterKeyProtocol), key(clusterKeyAccount))
			}
		default:
			add("%s: expected PLAINTEXT or SASL", key(clusterKeyProtocol))
		}
		if cl.IdentityMode == IdentityUser {
			if c.Security.Authentication == AuthTrust {
				add("%s user requires verified client identities; set %s to password, token, trusted-header, jwt or mtls", key(clusterKeyIdentity), KeySecurityAuth)
			}
			if !hasAccount || !hasSecret {
				add("%s user requires %s and %s", key(clusterKeyIdentity), key(clusterKeyAccount), key(clusterKeySecret))
			}
		}
	}
}

// Bounds of the writer and lookup tuning keys.
const (
	maxLinger        = time.Minute
	maxWriteLanes    = 16
	maxBatchSize     = 10 << 20 // the writer's MaxRequestSize
	maxLookupFlight  = 1024
	maxLookupKeys    = 1 << 20
	minBatchSize     = 1 << 10
	maxWriteInFlight = 5 // what an idempotent writer may have (the server keeps 5 batches)
)

// checkClusterTuning checks the writer and lookup tuning keys of a cluster.
func checkClusterTuning(add func(string, ...any), key func(string) string, cl *Cluster) {
	for _, d := range []struct {
		k string
		v time.Duration
	}{{clusterKeyLinger, cl.WriteLinger}, {clusterKeyKvLinger, cl.WriteKvLinger}} {
		if d.v < 0 || d.v > maxLinger {
			add("%s must be between 0s and %s", key(d.k), FormatDuration(maxLinger))
		}
	}
	for _, n := range []struct {
		k        string
		v        int
		min, max int
	}{
		{clusterKeyLingerAfter, cl.WriteLingerAfterInFlight, 0, maxWriteInFlight},
		{clusterKeyLanes, cl.WriteLanes, 1, maxWriteLanes},
		{clusterKeyWriteInFlight, cl.WriteMaxInFlightPerBucket, 1, maxWriteInFlight},
		{clusterKeyLookupFlight, cl.LookupMaxInFlight, 0, maxLookupFlight},
		{clusterKeyLookupKeys, cl.LookupMaxKeysPerRequest, 1, maxLookupKeys},
	} {
		if n.v < n.min || n.v > n.max {
			add("%s must be between %d and %d", key(n.k), n.min, n.max)
		}
	}
	if cl.WriteBatchSize < minBatchSize || cl.WriteBatchSize > maxBatchSize {
		add("%s must be between %s and %s", key(clusterKeyBatchSize), FormatByteSize(minBatchSize), FormatByteSize(maxBatchSize))
	}
}

// Warnings returns non-fatal advisories to log at startup.
func (c *Config) Warnings() []string {
	var w []string
	if !isLoopback(c.REST.Listen) {
		var risks []string
		if c.Security.Authentication == AuthTrust {
			if c.Security.TrustAllowNonLoopback {
				risks = append(risks, "accepts unauthenticated requests from any address ("+KeyTrustAllowNonLoopback+")")
			} else {
				risks = append(risks, "refuses non-loopback clients with 401 because "+KeySecurityAuth+" is trust (see "+KeyTrustAllowNonLoopback+")")
			}
		}
		if !c.REST.TLS.Enabled() {
			risks = append(risks, "has no TLS")
		}
		if len(risks) > 0 {
			w = append(w, fmt.Sprintf("%s %s is not loopback: the REST listener %s", KeyRESTListen, c.REST.Listen, strings.Join(risks, " and ")))
		}
	}
	w = append(w, c.securityWarnings()...)
	if c.Metrics.Enabled && !isLoopback(c.Metrics.PrometheusListen) {
		w = append(w, fmt.Sprintf("%s %s is not loopback: metrics are exposed without authentication or TLS", KeyMetricsListen, c.Metrics.PrometheusListen))
	}
	for _, cl := range c.Clusters {
		if cl.IdentityMode == IdentityService && (cl.ConnectionMax != 0 || cl.ConnectionIdleTimeout != 0) {
			w = append(w, fmt.Sprintf("%s and %s are ignored because %s is service",
				ClusterKey(cl.ID, clusterKeyConnMax), ClusterKey(cl.ID, clusterKeyConnIdle), ClusterKey(cl.ID, clusterKeyIdentity)))
		}
		if cl.Backend == BackendMemory {
			w = append(w, fmt.Sprintf("%s is memory: an in-process catalog for development, nothing is stored in Fluss", ClusterKey(cl.ID, clusterKeyBackend)))
		}
	}
	return w
}

// EffectiveTrustedHeaderName is the configured header or x-forwarded-user.
func (s Security) EffectiveTrustedHeaderName() string {
	if s.TrustedHeaderName != "" {
		return s.TrustedHeaderName
	}
	return DefaultTrustedHeaderName
}

func checkDuration(add func(string, ...any), key string, d time.Duration) {
	switch {
	case d <= 0:
		add("%s must be greater than zero", key)
	case d > MaxDuration:
		add("%s must not exceed %d seconds", key, int64(MaxDuration/time.Second))
	}
}

// checkSocketAddress accepts an IP address and port, as the official gateway
// does (host names are not resolved for listeners).
func checkSocketAddress(s string) error {
	if _, err := netip.ParseAddrPort(s); err != nil {
		return fmt.Errorf("expected an IP socket address such as 127.0.0.1:8080 or [::1]:8080")
	}
	return nil
}

func checkBootstrapServers(servers []string) error {
	if len(servers) == 0 {
		return errors.New("must configure at least one server")
	}
	for _, s := range servers {
		host, port, err := net.SplitHostPort(s)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || strings.Contains(s, "@") || perr != nil || n < 1 || n > 65535 {
			return fmt.Errorf("contains invalid server %q; expected host:port with a port from 1 to 65535", s)
		}
	}
	return nil
}

// addressesOverlap reports whether two listeners cannot both bind: the same
// address and port, or a wildcard claiming the port. Port 0 never collides.
func addressesOverlap(a, b string) bool {
	x, err1 := netip.ParseAddrPort(a)
	y, err2 := netip.ParseAddrPort(b)
	if err1 != nil || err2 != nil || x.Port() == 0 || x.Port() != y.Port() {
		return false
	}
	xa, ya := x.Addr().Unmap(), y.Addr().Unmap()
	if xa == ya {
		return true
	}
	if xa.Is4() == ya.Is4() {
		return xa.IsUnspecified() || ya.IsUnspecified()
	}
	// Mixed families: only the dual-stack IPv6 wildcard claims both.
	return xa.Is6() && xa.IsUnspecified() || ya.Is6() && ya.IsUnspecified()
}

func isLoopback(listen string) bool {
	ap, err := netip.ParseAddrPort(listen)
	return err == nil && ap.Addr().IsLoopback()
}

func validInstanceID(s string) bool {
	if len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == '-') {
			return false
		}
	}
	return true
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}

// countTable checks a comma-separated credential table entry by entry and
// returns how many entries it has. Messages name entries by position and
// principal, never by secret.
func countTable(raw string, parse func(pos int, entry string) (unique string, err error)) (int, error) {
	seen := map[string]bool{}
	for pos, e := range strings.Split(raw, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		u, err := parse(pos, e)
		if err != nil {
			return 0, err
		}
		if seen[u] {
			return 0, fmt.Errorf("entry %d duplicates an earlier entry", pos)
		}
		seen[u] = true
	}
	return len(seen), nil
}

// parseUserEntry checks `principal:secret` or `principal:bcrypt:<hash>`.
func parseUserEntry(pos int, e string) (string, error) {
	principal, secret, ok := strings.Cut(e, ":")
	principal = strings.TrimSpace(principal)
	switch {
	case !ok:
		return "", fmt.Errorf("user entry %d must be `principal:secret` or `principal:bcrypt:<hash>`", pos)
	case principal == "":
		return "", fmt.Errorf("user entry %d has an empty principal", pos)
	case secret == "":
		return "", fmt.Errorf("user entry %d has an empty secret", pos)
	}
	if hash, isBcrypt := strings.CutPrefix(secret, "bcrypt:"); isBcrypt && (!strings.HasPrefix(hash, "$2") || strings.Count(hash, "$") != 3) {
		return "", fmt.Errorf("user entry %d (principal %q) has a malformed bcrypt hash", pos, principal)
	}
	return principal, nil
}

// parseTokenEntry checks `<token>:<principal>` or `sha256:<hex>:<principal>`.
func parseTokenEntry(pos int, e string) (string, error) {
	i := strings.LastIndex(e, ":")
	if i < 0 {
		return "", fmt.Errorf("token entry %d must be `<token>:<principal>` or `sha256:<hex>:<principal>`", pos)
	}
	token, principal := e[:i], strings.TrimSpace(e[i+1:])
	switch {
	case principal == "":
		return "", fmt.Errorf("token entry %d has an empty principal", pos)
	case token == "":
		return "", fmt.Errorf("token entry %d has an empty token", pos)
	}
	if digest, hashed := strings.CutPrefix(token, "sha256:"); hashed {
		if len(digest) != 64 || strings.Trim(strings.ToLower(digest), "0123456789abcdef") != "" {
			return "", fmt.Errorf("token entry %d (principal %q) has a malformed sha256 digest", pos, principal)
		}
	}
	return token, nil
}
