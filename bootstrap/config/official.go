package config

import (
	"slices"
	"strings"
	"time"
)

// Keys of the official gateway's newest configuration (apache/fluss
// fluss-gateway/src/config.rs and conf/gateway.yaml at commit
// cc345385c3851cec92d915ccabe7622158a89ebe): the request deadline's new
// name, the logical identity labels and the named TLS profiles.
const (
	// KeyWriteRequestTimeout is the older name of KeyRequestTimeout, kept
	// as an alias.
	KeyWriteRequestTimeout = "gateway.rest.write.request-timeout"
	KeyGatewayID           = "gateway.id"
	KeyGatewayHost         = "gateway.host"
	KeyRESTTLSProfile      = "gateway.rest.tls.profile"
	KeyTLSProfiles         = "gateway.tls.profiles"
	// TLSProfileKeyPrefix starts the keys of one profile:
	// gateway.tls.profile.<name>.{certificate-file,private-key-file,handshake-timeout}.
	TLSProfileKeyPrefix = "gateway.tls.profile."

	tlsProfileCert      = "certificate-file"
	tlsProfileKey       = "private-key-file"
	tlsProfileHandshake = "handshake-timeout"
)

// DefaultTLSHandshakeTimeout is the official default handshake-timeout.
const DefaultTLSHandshakeTimeout = 5 * time.Second

var tlsProfileOptions = []string{tlsProfileCert, tlsProfileKey, tlsProfileHandshake}

// tlsSlot is one option of one TLS profile.
type tlsSlot struct {
	name, option string
}

// resolveTLSProfileKey maps gateway.tls.profile.<name>.<option> to its slot.
func resolveTLSProfileKey(key string) (tlsSlot, bool) {
	rest, ok := strings.CutPrefix(key, TLSProfileKeyPrefix)
	if !ok {
		return tlsSlot{}, false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 {
		return tlsSlot{}, false
	}
	name, option := rest[:i], rest[i+1:]
	if !validProfileName(name) || !slices.Contains(tlsProfileOptions, option) {
		return tlsSlot{}, false
	}
	return tlsSlot{name: name, option: option}, true
}

// resolveTLSProfileEnv maps FLUSS_GATEWAY__TLS__PROFILE__<NAME>__<OPTION>.
func resolveTLSProfileEnv(name string) (tlsSlot, bool) {
	rest, ok := strings.CutPrefix(name, EnvPrefix+"TLS__PROFILE__")
	if !ok {
		return tlsSlot{}, false
	}
	for _, opt := range tlsProfileOptions {
		if prof, ok := strings.CutSuffix(rest, "__"+envSuffix(opt)); ok {
			lower := strings.ToLower(strings.ReplaceAll(prof, "_", "-"))
			if validProfileName(lower) && envSuffix(lower) == prof {
				return tlsSlot{name: lower, option: opt}, true
			}
			lower = strings.ToLower(prof)
			if validProfileName(lower) {
				return tlsSlot{name: lower, option: opt}, true
			}
		}
	}
	return tlsSlot{}, false
}

// validProfileName: a letter or digit, then letters, digits, '-' or '_'.
func validProfileName(n string) bool {
	if n == "" || len(n) > 63 {
		return false
	}
	for i := 0; i < len(n); i++ {
		b := n[i]
		alnum := b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
		if !alnum && (i == 0 || b != '-' && b != '_') {
			return false
		}
	}
	return true
}

// applyTLSProfiles builds cfg.TLSProfiles from the declared names and the
// per-profile assignments, and points the REST listener at the profile
// `gateway.rest.tls.profile` names.
func (l *loader) applyTLSProfiles(cfg *Config) {
	if l.tlsDeclared == nil && len(l.tls) == 0 && cfg.REST.TLS.Profile == "" {
		return
	}
	cfg.TLSProfiles = map[string]TLSProfile{}
	for _, n := range l.tlsDeclared {
		if !validProfileName(n) {
			l.fail("%s: invalid TLS profile name %q", KeyTLSProfiles, n)
			continue
		}
		cfg.TLSProfiles[n] = TLSProfile{HandshakeTimeout: DefaultTLSHandshakeTimeout}
	}
	slots := make([]tlsSlot, 0, len(l.tls))
	for s := range l.tls {
		slots = append(slots, s)
	}
	slices.SortFunc(slots, func(a, b tlsSlot) int { return strings.Compare(a.name+"\x00"+a.option, b.name+"\x00"+b.option) })
	for _, s := range slots {
		a := l.tls[s]
		key := TLSProfileKeyPrefix + s.name + "." + s.option
		p, ok := cfg.TLSProfiles[s.name]
		if !ok {
			l.fail("%s: TLS profile %s is configured but not declared in %s", describe(key, a.origin), s.name, KeyTLSProfiles)
			continue
		}
		var err error
		switch s.option {
		case tlsProfileCert:
			p.CertificateFile, err = a.value.str()
		case tlsProfileKey:
			p.PrivateKeyFile, err = a.value.str()
		case tlsProfileHandshake:
			p.HandshakeTimeout, err = a.value.duration()
		}
		if err != nil {
			l.fail("%s: %v", describe(key, a.origin), err)
			continue
		}
		cfg.TLSProfiles[s.name] = p
	}
	for _, n := range l.tlsDeclared {
		p := cfg.TLSProfiles[n]
		if p.CertificateFile == "" || p.PrivateKeyFile == "" {
			l.fail("TLS profile %s: %s%s.%s and %s%s.%s are both required", n, TLSProfileKeyPrefix, n, tlsProfileCert, TLSProfileKeyPrefix, n, tlsProfileKey)
		}
	}
	name := cfg.REST.TLS.Profile
	if name == "" {
		return
	}
	p, ok := cfg.TLSProfiles[name]
	if !ok {
		l.fail("%s: TLS profile %q is not declared in %s", KeyRESTTLSProfile, name, KeyTLSProfiles)
		return
	}
	// The dump renders the profile's files under the cert-file/key-file
	// keys too; only different files are a conflict.
	if (cfg.REST.TLS.CertFile != "" || cfg.REST.TLS.KeyFile != "") &&
		(cfg.REST.TLS.CertFile != p.CertificateFile || cfg.REST.TLS.KeyFile != p.PrivateKeyFile) {
		l.fail("%s and %s/%s both configure the REST listener's certificate: use one", KeyRESTTLSProfile, KeyTLSCertFile, KeyTLSKeyFile)
		return
	}
	cfg.REST.TLS.CertFile, cfg.REST.TLS.KeyFile, cfg.REST.TLS.HandshakeTimeout = p.CertificateFile, p.PrivateKeyFile, p.HandshakeTimeout
}

// tlsProfileSettings renders the profiles for the dump, in name order.
func (c *Config) tlsProfileSettings() []KeyValue {
	if len(c.TLSProfiles) == 0 {
		return nil
	}
	names := make([]string, 0, len(c.TLSProfiles))
	for n := range c.TLSProfiles {
		names = append(names, n)
	}
	slices.Sort(names)
	out := []KeyValue{{Key: KeyTLSProfiles, Value: strings.Join(names, ",")}}
	for _, n := range names {
		p := c.TLSProfiles[n]
		out = append(out,
			KeyValue{Key: TLSProfileKeyPrefix + n + "." + tlsProfileCert, Value: p.CertificateFile},
			KeyValue{Key: TLSProfileKeyPrefix + n + "." + tlsProfileKey, Value: p.PrivateKeyFile},
			KeyValue{Key: TLSProfileKeyPrefix + n + "." + tlsProfileHandshake, Value: FormatDuration(p.HandshakeTimeout)})
	}
	return out
}

// checkAliases reports an alias and its new name set to different values.
func (l *loader) checkAliases() {
	for _, e := range globalEntries {
		if e.aliasOf == "" {
			continue
		}
		old, okOld := l.global[e.key]
		cur, okNew := l.global[e.aliasOf]
		if okOld && okNew && old.value.text != cur.value.text {
			l.fail("%s and %s (its older name) are set to different values (%q, %q): set %s only",
				describe(e.aliasOf, cur.origin), describe(e.key, old.origin), cur.value.text, old.value.text, e.aliasOf)
		}
	}
}
