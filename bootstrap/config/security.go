package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/identity"
)

// Security and TLS keys. authentication, users, tokens and
// trusted-header.name exist in the official gateway; the others are
// gateway-go extensions. The caller-authentication keys are defined once, by
// the identity adapter that validates them (adapters/identity, keys.go);
// the quota and TLS keys belong to this package.
const (
	KeyRealm                  = identity.KeyRealm
	KeyTrustAllowNonLoopback  = identity.KeyAllowNonLoopback
	KeyUsers                  = identity.KeyUsers
	KeyPasswordCacheTTL       = identity.KeyPasswordCacheTTL
	KeyTokens                 = identity.KeyTokens
	KeyTrustedHeaderName      = identity.KeyTrustedHeaderName
	KeyTrustedHeaderCIDRs     = identity.KeyTrustedHeaderCIDRs
	KeyJWTIssuer              = identity.KeyJWTIssuer
	KeyJWTAudience            = identity.KeyJWTAudience
	KeyJWTJWKSFile            = identity.KeyJWTJWKSFile
	KeyJWTJWKSURL             = identity.KeyJWTJWKSURL
	KeyJWTPrincipalClaim      = identity.KeyJWTPrincipalClaim
	KeyJWTAlgorithms          = identity.KeyJWTAlgorithms
	KeyJWTClockSkew           = identity.KeyJWTClockSkew
	KeyJWTRefreshInterval     = identity.KeyJWTRefreshInterval
	KeyJWTFetchTimeout        = identity.KeyJWTFetchTimeout
	KeyMTLSPrincipalField     = identity.KeyMTLSPrincipalField
	KeyActAsHeader            = identity.KeyActAsHeader
	KeyActAsAllowedPrincipals = identity.KeyActAsAllowedPrincipals
	KeyQuotaRequestsPerSecond = "gateway.security.quota.requests-per-second"
	KeyQuotaBytesPerSecond    = "gateway.security.quota.bytes-per-second"
	KeyQuotaPerTable          = "gateway.security.quota.per-table"
	KeyQuotaMaxPrincipals     = "gateway.security.quota.max-principals"

	KeyTLSCertFile       = "gateway.rest.tls.cert-file"
	KeyTLSKeyFile        = "gateway.rest.tls.key-file"
	KeyTLSMinVersion     = "gateway.rest.tls.min-version"
	KeyTLSClientCAFile   = "gateway.rest.tls.client-ca-file"
	KeyTLSClientAuth     = "gateway.rest.tls.client-auth"
	KeyTLSReloadInterval = "gateway.rest.tls.reload-interval"
)

// Keys of the failed-login throttle of password mode (gateway-go extensions).
const (
	KeyPasswordMaxFailedLogins   = "gateway.security.password.max-failed-logins"
	KeyPasswordFailedLoginWindow = "gateway.security.password.failed-login-window"
)

// maxJWTClockSkew bounds gateway.security.jwt.clock-skew.
const maxJWTClockSkew = 10 * time.Minute

func listEntry[T any](key string, field func(*T) *[]string) entry[T] {
	return entry[T]{
		key: key,
		apply: func(t *T, v scalar) error {
			s, err := v.str()
			if err != nil {
				return err
			}
			*field(t) = splitList(s)
			return nil
		},
		render: func(t *T) string { return strings.Join(*field(t), ",") },
	}
}

// optionalCountEntry is a count whose zero means "unset" and is not dumped.
func optionalCountEntry[T any](key string, field func(*T) *int) entry[T] {
	return entry[T]{
		key:   key,
		apply: func(t *T, v scalar) (err error) { *field(t), err = v.count(); return err },
		render: func(t *T) string {
			if *field(t) == 0 {
				return ""
			}
			return strconv.Itoa(*field(t))
		},
	}
}

// securityEntries are the caller-authentication, quota and TLS keys, in
// dump order after the official security keys.
var securityEntries = []entry[Config]{
	stringEntry(KeyRealm, func(c *Config) *string { return &c.Security.Realm }),
	boolEntry(KeyTrustAllowNonLoopback, func(c *Config) *bool { return &c.Security.TrustAllowNonLoopback }),
	{
		// "0" disables the cache; otherwise a positive duration.
		key: KeyPasswordCacheTTL,
		apply: func(c *Config, v scalar) error {
			s, err := v.str()
			if err != nil {
				return err
			}
			if d, u := splitNumberAndUnit(s); d != "" && strings.Trim(d, "0") == "" && (u == "" || validDurationUnit(u)) {
				c.Security.PasswordCacheTTL = -1
				return nil
			}
			c.Security.PasswordCacheTTL, err = ParseDuration(s)
			return err
		},
		render: func(c *Config) string {
			if c.Security.PasswordCacheTTL < 0 {
				return "0"
			}
			return optionalDuration(c.Security.PasswordCacheTTL)
		},
	},
	countEntry(KeyPasswordMaxFailedLogins, func(c *Config) *int { return &c.Security.MaxFailedLogins }),
	durationEntry(KeyPasswordFailedLoginWindow, func(c *Config) *time.Duration { return &c.Security.FailedLoginWindow }),
	listEntry(KeyTrustedHeaderCIDRs, func(c *Config) *[]string { return &c.Security.TrustedHeaderCIDRs }),
	stringEntry(KeyJWTIssuer, func(c *Config) *string { return &c.Security.JWT.Issuer }),
	stringEntry(KeyJWTAudience, func(c *Config) *string { return &c.Security.JWT.Audience }),
	stringEntry(KeyJWTJWKSFile, func(c *Config) *string { return &c.Security.JWT.JWKSFile }),
	{
		// The URL may carry credentials in its user info or its query
		// (?api_key=...): the dump hides both.
		key:    KeyJWTJWKSURL,
		apply:  func(c *Config, v scalar) (err error) { c.Security.JWT.JWKSURL, err = v.str(); return err },
		render: func(c *Config) string { return RedactURL(c.Security.JWT.JWKSURL) },
	},
	stringEntry(KeyJWTPrincipalClaim, func(c *Config) *string { return &c.Security.JWT.PrincipalClaim }),
	listEntry(KeyJWTAlgorithms, func(c *Config) *[]string { return &c.Security.JWT.Algorithms }),
	durationEntry(KeyJWTClockSkew, func(c *Config) *time.Duration { return &c.Security.JWT.ClockSkew }),
	durationEntry(KeyJWTRefreshInterval, func(c *Config) *time.Duration { return &c.Security.JWT.RefreshInterval }),
	durationEntry(KeyJWTFetchTimeout, func(c *Config) *time.Duration { return &c.Security.JWT.FetchTimeout }),
	{
		key: KeyMTLSPrincipalField,
		apply: func(c *Config, v scalar) (err error) {
			c.Security.MTLSPrincipalField, err = v.oneOf(identity.PrincipalFieldCN, identity.PrincipalFieldSubject,
				identity.PrincipalFieldSANDNS, identity.PrincipalFieldSANEmail, identity.PrincipalFieldSANURI)
			return err
		},
		render: func(c *Config) string { return c.Security.MTLSPrincipalField },
	},
	stringEntry(KeyActAsHeader, func(c *Config) *string { return &c.Security.ActAs.Header }),
	listEntry(KeyActAsAllowedPrincipals, func(c *Config) *[]string { return &c.Security.ActAs.AllowedPrincipals }),
	optionalCountEntry(KeyQuotaRequestsPerSecond, func(c *Config) *int { return &c.Security.Quota.RequestsPerSecond }),
	{
		key:   KeyQuotaBytesPerSecond,
		apply: func(c *Config, v scalar) (err error) { c.Security.Quota.BytesPerSecond, err = v.byteSize(); return err },
		render: func(c *Config) string {
			if c.Security.Quota.BytesPerSecond == 0 {
				return ""
			}
			return FormatByteSize(c.Security.Quota.BytesPerSecond)
		},
	},
	boolEntry(KeyQuotaPerTable, func(c *Config) *bool { return &c.Security.Quota.PerTable }),
	countEntry(KeyQuotaMaxPrincipals, func(c *Config) *int { return &c.Security.Quota.MaxPrincipals }),

	stringEntry(KeyTLSCertFile, func(c *Config) *string { return &c.REST.TLS.CertFile }),
	stringEntry(KeyTLSKeyFile, func(c *Config) *string { return &c.REST.TLS.KeyFile }),
	{
		key: KeyTLSMinVersion,
		apply: func(c *Config, v scalar) (err error) {
			c.REST.TLS.MinVersion, err = v.oneOf("1.2", "1.3")
			return err
		},
		render: func(c *Config) string { return c.REST.TLS.MinVersion },
	},
	stringEntry(KeyTLSClientCAFile, func(c *Config) *string { return &c.REST.TLS.ClientCAFile }),
	{
		key: KeyTLSClientAuth,
		apply: func(c *Config, v scalar) error {
			s, err := v.oneOf(string(ClientAuthNone), string(ClientAuthRequest), string(ClientAuthRequire))
			c.REST.TLS.ClientAuth = ClientAuth(s)
			return err
		},
		render: func(c *Config) string { return string(c.REST.TLS.ClientAuth) },
	},
	durationEntry(KeyTLSReloadInterval, func(c *Config) *time.Duration { return &c.REST.TLS.ReloadInterval }),
}

func validDurationUnit(u string) bool {
	switch strings.ToLower(u) {
	case "ms", "s", "m", "h", "d":
		return true
	}
	return false
}

// validateSecurityExtensions checks the keys of securityEntries. Deeper
// checks that need I/O (certificate and JWKS files) happen at startup and
// name the same keys.
func (c *Config) validateSecurityExtensions(add func(string, ...any)) {
	s := c.Security
	if !validRealm(s.Realm) {
		add("%s must be printable ASCII without quotes or backslashes", KeyRealm)
	}
	if s.FailedLoginWindow <= 0 || s.FailedLoginWindow > 24*time.Hour {
		add("%s must be between 1ms and 24h", KeyPasswordFailedLoginWindow)
	}
	if s.PasswordCacheTTL > 24*time.Hour {
		add("%s must not exceed 24h", KeyPasswordCacheTTL)
	}
	switch s.Authentication {
	case AuthTrustedHeader:
		for _, cidr := range s.TrustedHeaderCIDRs {
			if !validPrefix(cidr) {
				add("%s: %q is not a CIDR or IP address", KeyTrustedHeaderCIDRs, cidr)
			}
		}
	case AuthJWT:
		j := s.JWT
		if j.Issuer == "" {
			add("%s is required when %s is jwt", KeyJWTIssuer, KeySecurityAuth)
		}
		if j.Audience == "" {
			add("%s is required when %s is jwt", KeyJWTAudience, KeySecurityAuth)
		}
		switch {
		case j.JWKSFile != "" && j.JWKSURL != "":
			add("set only one of %s and %s", KeyJWTJWKSFile, KeyJWTJWKSURL)
		case j.JWKSFile == "" && j.JWKSURL == "":
			add("one of %s and %s is required when %s is jwt", KeyJWTJWKSURL, KeyJWTJWKSFile, KeySecurityAuth)
		case j.JWKSURL != "":
			if err := checkJWKSURL(j.JWKSURL); err != nil {
				add("%s: %v", KeyJWTJWKSURL, err)
			}
		}
		if j.PrincipalClaim == "" {
			add("%s must not be empty", KeyJWTPrincipalClaim)
		}
		checkDuration(add, KeyJWTClockSkew, j.ClockSkew)
		if j.ClockSkew > maxJWTClockSkew {
			add("%s must not exceed 10m", KeyJWTClockSkew)
		}
		checkDuration(add, KeyJWTRefreshInterval, j.RefreshInterval)
		checkDuration(add, KeyJWTFetchTimeout, j.FetchTimeout)
	case AuthMTLS:
		t := c.REST.TLS
		if !t.Enabled() || t.ClientCAFile == "" || t.ClientAuth == ClientAuthNone {
			add("%s mtls requires TLS on the REST listener with client certificates: set %s, %s, %s and %s to request or require",
				KeySecurityAuth, KeyTLSCertFile, KeyTLSKeyFile, KeyTLSClientCAFile, KeyTLSClientAuth)
		}
	}
	switch s.MTLSPrincipalField {
	case identity.PrincipalFieldCN, identity.PrincipalFieldSubject, identity.PrincipalFieldSANDNS,
		identity.PrincipalFieldSANEmail, identity.PrincipalFieldSANURI:
	default:
		add("%s: expected cn, subject, san-dns, san-email or san-uri", KeyMTLSPrincipalField)
	}
	if s.ActAs.Header == "" || !validHeaderName(s.ActAs.Header) || strings.EqualFold(s.ActAs.Header, "Authorization") {
		add("%s must be a legal HTTP header name (letters, digits, '-', '_') other than Authorization", KeyActAsHeader)
	} else if s.Authentication == AuthTrustedHeader && strings.EqualFold(s.ActAs.Header, s.EffectiveTrustedHeaderName()) {
		add("%s must differ from %s", KeyActAsHeader, KeyTrustedHeaderName)
	}
	for _, p := range s.ActAs.AllowedPrincipals {
		if !validPrincipalName(p) {
			add("%s: %q is not a valid principal name", KeyActAsAllowedPrincipals, p)
		}
	}
	if s.Quota.MaxPrincipals <= 0 {
		add("%s must be greater than zero", KeyQuotaMaxPrincipals)
	}
	if s.Quota.RequestsPerSecond < 0 || s.Quota.BytesPerSecond < 0 {
		add("%s and %s must not be negative", KeyQuotaRequestsPerSecond, KeyQuotaBytesPerSecond)
	}

	t := c.REST.TLS
	if t.Enabled() && (t.CertFile == "" || t.KeyFile == "") {
		add("%s and %s must be set together", KeyTLSCertFile, KeyTLSKeyFile)
	}
	switch t.MinVersion {
	case "1.2", "1.3":
	default:
		add("%s: expected 1.2 or 1.3", KeyTLSMinVersion)
	}
	switch t.ClientAuth {
	case ClientAuthNone:
	case ClientAuthRequest, ClientAuthRequire:
		if t.ClientCAFile == "" {
			add("%s %s requires %s", KeyTLSClientAuth, t.ClientAuth, KeyTLSClientCAFile)
		}
	default:
		add("%s: expected none, request or require", KeyTLSClientAuth)
	}
	if t.ClientCAFile != "" && !t.Enabled() {
		add("%s requires %s and %s", KeyTLSClientCAFile, KeyTLSCertFile, KeyTLSKeyFile)
	}
	checkDuration(add, KeyTLSReloadInterval, t.ReloadInterval)
}

// securityWarnings are the advisories about the security keys.
func (c *Config) securityWarnings() []string {
	var w []string
	s := c.Security
	if !c.REST.TLS.Enabled() && !isLoopback(c.REST.Listen) &&
		(s.Authentication == AuthPassword || s.Authentication == AuthToken || s.Authentication == AuthJWT) {
		w = append(w, fmt.Sprintf("%s %s: passwords and bearer tokens cross the network in clear text without TLS (%s)",
			KeySecurityAuth, s.Authentication, KeyTLSCertFile))
	}
	if s.Authentication == AuthTrust && len(s.ActAs.AllowedPrincipals) > 0 {
		w = append(w, fmt.Sprintf("%s has no effect when %s is trust: anonymous callers cannot act as anyone",
			KeyActAsAllowedPrincipals, KeySecurityAuth))
	}
	if s.Authentication == AuthMTLS && c.REST.TLS.ClientAuth == ClientAuthRequest {
		w = append(w, fmt.Sprintf("%s is request: connections without a client certificate are accepted and their requests answered 401", KeyTLSClientAuth))
	}
	return w
}

func validRealm(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' || s[i] == '"' || s[i] == '\\' {
			return false
		}
	}
	return s != ""
}

// validPrefix accepts a CIDR or a bare IP address.
func validPrefix(s string) bool {
	s = strings.TrimSpace(s)
	if _, err := netip.ParsePrefix(s); err == nil {
		return true
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.Zone() == ""
}

// validPrincipalName accepts 1-256 bytes of UTF-8 without control
// characters or surrounding white space, as the identity adapter does.
func validPrincipalName(s string) bool {
	if s == "" || len(s) > 256 || !utf8.ValidString(s) || strings.TrimSpace(s) != s {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) })
}

// checkJWKSURL accepts https, or http to a loopback host (tests, sidecars).
func checkJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errors.New("expected an absolute https URL")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if a, err := netip.ParseAddr(host); (err == nil && a.IsLoopback()) || host == "localhost" {
			return nil
		}
		return errors.New("plain http is accepted only for loopback hosts; use https")
	}
	return errors.New("expected an https URL")
}

// RedactURL hides the parts of a URL that may carry credentials (see
// identity.RedactURL).
func RedactURL(raw string) string { return identity.RedactURL(raw) }
