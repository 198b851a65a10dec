package config

import (
	"strconv"
	"strings"
)

// KeyValue is one effective configuration setting in dump form.
type KeyValue struct {
	Key   string
	Value string
}

// Settings lists every effective setting as flat keys in registry order,
// credentials rendered as Redacted and unset optional values omitted.
func (c *Config) Settings() []KeyValue {
	var out []KeyValue
	for _, e := range globalEntries {
		if e.aliasOf != "" {
			continue
		}
		if v := e.render(c); v != "" {
			out = append(out, KeyValue{Key: e.key, Value: v})
		}
	}
	out = append(out, c.tlsProfileSettings()...)
	out = append(out, KeyValue{Key: ClustersKey, Value: strings.Join(c.ClusterIDs(), ",")})
	for i := range c.Clusters {
		cl := &c.Clusters[i]
		for _, e := range clusterEntries {
			v := e.render(cl)
			if v == "" || v == "0" {
				continue
			}
			out = append(out, KeyValue{Key: ClusterKey(cl.ID, e.key), Value: v})
		}
	}
	return out
}

// Redacted renders the effective configuration as a YAML file of flat keys
// with every credential replaced by Redacted; it is safe to log.
func (c *Config) Redacted() string {
	var b strings.Builder
	for _, kv := range c.Settings() {
		b.WriteString(kv.Key)
		b.WriteString(": ")
		b.WriteString(strconv.Quote(kv.Value))
		b.WriteByte('\n')
	}
	return b.String()
}

// String returns Redacted, so printing a Config never leaks a credential.
func (c *Config) String() string { return c.Redacted() }

// GoString returns Redacted for %#v as well.
func (c *Config) GoString() string { return c.Redacted() }
