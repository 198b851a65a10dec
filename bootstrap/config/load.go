package config

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is a configuration failure listing every problem found. Problems
// name the key (and the environment variable when one supplied the value)
// and never quote a credential.
type Error struct {
	Problems []string
}

// Error joins the problems into one message.
func (e *Error) Error() string {
	return "invalid configuration: " + strings.Join(e.Problems, "; ")
}

// Options are the sources Load reads.
type Options struct {
	// Path is the YAML file; empty means none.
	Path string
	// Env is the process environment (see EnvMap); only FLUSS_GATEWAY__*
	// variables are read.
	Env map[string]string
	// BindAddress is the --bind-address command-line override of
	// gateway.rest.listen; empty means none.
	BindAddress string
}

// EnvMap turns os.Environ-style "KEY=value" pairs into a map.
func EnvMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// ResolvePath returns the configuration file to read: the --config flag
// value, else FLUSS_GATEWAY_CONFIG, else "" (defaults and environment only).
func ResolvePath(flagValue string, env map[string]string) string {
	if flagValue != "" {
		return flagValue
	}
	return env[ConfigPathEnv]
}

type assignment struct {
	value  scalar
	origin string // "" for the file, else the variable or flag name
}

type clusterSlot struct {
	id, suffix string
}

// loader accumulates the assignments of every source, later sources
// replacing earlier ones, before anything is applied.
type loader struct {
	problems []string
	global   map[string]assignment
	cluster  map[clusterSlot]assignment
	declared []string
	// tls and tlsDeclared are the TLS profile options and the names of
	// gateway.tls.profiles (official.go).
	tls         map[tlsSlot]assignment
	tlsDeclared []string
}

// Load reads the file, then the environment, then the command-line override,
// applies them over Default and validates the result.
func Load(opts Options) (*Config, error) {
	l := &loader{global: map[string]assignment{}, cluster: map[clusterSlot]assignment{}, tls: map[tlsSlot]assignment{}}
	if opts.Path != "" {
		l.readFile(opts.Path)
	}
	l.readEnv(opts.Env)
	if opts.BindAddress != "" {
		l.global[KeyRESTListen] = assignment{value: scalar{text: opts.BindAddress}, origin: "--bind-address"}
	}
	if len(l.problems) > 0 {
		return nil, &Error{Problems: l.problems}
	}
	cfg := l.apply()
	if len(l.problems) > 0 {
		return nil, &Error{Problems: l.problems}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (l *loader) fail(format string, args ...any) {
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}

func (l *loader) readFile(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		l.fail("cannot read configuration file: %v", err)
		return
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		l.fail("%s: %v", path, err)
		return
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return // empty file
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null" {
		return // only comments
	}
	if top.Kind != yaml.MappingNode {
		l.fail("%s: the configuration must be a mapping of flat dotted keys (gateway.…: value)", path)
		return
	}
	firstLine := map[string]int{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			l.fail("%s line %d: configuration keys must be strings", path, k.Line)
			continue
		}
		key := k.Value
		if line, dup := firstLine[key]; dup {
			l.fail("%s line %d: duplicate key %s (first set at line %d)", path, k.Line, key, line)
			continue
		}
		firstLine[key] = k.Line
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		l.fileEntry(key, v)
	}
}

func (l *loader) fileEntry(key string, v *yaml.Node) {
	if key == KeyTLSProfiles || strings.HasPrefix(key, TLSProfileKeyPrefix) {
		if v.Kind != yaml.ScalarNode {
			l.fail("%s: expected a scalar value", key)
			return
		}
		l.tlsEntry(key, "", scalar{text: v.Value, tag: v.ShortTag()})
		return
	}
	if key == ClustersKey {
		ids, err := clusterIDsFromNode(v)
		if err != nil {
			l.fail("%s: %v", key, err)
			return
		}
		l.declare(key, ids)
		return
	}
	slot, global, err := resolveKey(key)
	if err != nil {
		if v.Kind == yaml.MappingNode && !strings.Contains(key, ".") {
			err = fmt.Errorf("%w (keys are flat and dotted, for example gateway.rest.listen)", err)
		}
		l.problems = append(l.problems, err.Error())
		return
	}
	if v.Kind != yaml.ScalarNode {
		l.fail("%s: expected a scalar value", key)
		return
	}
	a := assignment{value: scalar{text: v.Value, tag: v.ShortTag()}}
	if global != nil {
		l.global[global.key] = a
	} else {
		l.cluster[slot] = a
	}
}

func (l *loader) readEnv(env map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(env)) {
		if !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		raw := env[name]
		if name == EnvVar(ClustersKey) {
			l.declare(name, splitIDs(raw))
			continue
		}
		if name == EnvVar(KeyTLSProfiles) {
			l.tlsEntry(KeyTLSProfiles, name, scalar{text: raw})
			continue
		}
		if s, ok := resolveTLSProfileEnv(name); ok {
			l.tls[s] = assignment{value: scalar{text: raw}, origin: name}
			continue
		}
		slot, global, err := resolveEnv(name)
		if err != nil {
			l.problems = append(l.problems, err.Error())
			continue
		}
		a := assignment{value: scalar{text: raw}, origin: name}
		if global != nil {
			l.global[global.key] = a
		} else {
			l.cluster[slot] = a
		}
	}
}

// declare records the declared cluster ids after checking them.
func (l *loader) declare(origin string, ids []string) {
	seen := map[string]bool{}
	for _, id := range ids {
		if !validClusterID(id) {
			l.fail("%s: invalid cluster ID %q: it must start with a lower-case letter and contain only lower-case letters, digits or underscores, at most 63 characters", origin, id)
			return
		}
		if seen[id] {
			l.fail("%s: duplicate cluster ID %q", origin, id)
			return
		}
		seen[id] = true
	}
	l.declared = ids
}

// tlsEntry records gateway.tls.profiles or one gateway.tls.profile.<name>.* option.
func (l *loader) tlsEntry(key, origin string, v scalar) {
	if key == KeyTLSProfiles {
		s, err := v.str()
		if err != nil {
			l.fail("%s: %v", describe(key, origin), err)
			return
		}
		l.tlsDeclared = splitList(s)
		return
	}
	slot, ok := resolveTLSProfileKey(key)
	if !ok {
		l.fail("unknown configuration key: %s (a TLS profile option is %s<name>.certificate-file, private-key-file or handshake-timeout)", key, TLSProfileKeyPrefix)
		return
	}
	l.tls[slot] = assignment{value: v, origin: origin}
}

func (l *loader) apply() *Config {
	l.checkAliases()
	cfg := Default()
	if l.declared != nil {
		cfg.Clusters = make([]Cluster, len(l.declared))
		for i, id := range l.declared {
			cfg.Clusters[i] = DefaultCluster(id)
		}
	}
	for _, e := range globalEntries {
		a, ok := l.global[e.key]
		if !ok {
			continue
		}
		if err := e.apply(&cfg, a.value); err != nil {
			l.fail("%s: %v", describe(e.key, a.origin), err)
		}
	}
	slots := slices.SortedFunc(maps.Keys(l.cluster), func(a, b clusterSlot) int {
		return strings.Compare(a.id+"\x00"+a.suffix, b.id+"\x00"+b.suffix)
	})
	for _, s := range slots {
		a := l.cluster[s]
		idx := slices.IndexFunc(cfg.Clusters, func(c Cluster) bool { return c.ID == s.id })
		if idx < 0 {
			l.fail("%s: %s.* is configured but %s is not declared in %s",
				describe(ClusterKey(s.id, s.suffix), a.origin), ClusterKeyPrefix+s.id, s.id, ClustersKey)
			continue
		}
		if err := findCluster(s.suffix).apply(&cfg.Clusters[idx], a.value); err != nil {
			l.fail("%s: %v", describe(ClusterKey(s.id, s.suffix), a.origin), err)
		}
	}
	l.applyTLSProfiles(&cfg)
	return &cfg
}

// describe names a key and, when it came from the environment or the command
// line, the variable or flag too.
func describe(key, origin string) string {
	if origin == "" {
		return key
	}
	return origin + " (" + key + ")"
}

// resolveKey maps a file key to its registry entry: a global one, or a
// per-cluster one with its slot.
func resolveKey(key string) (clusterSlot, *entry[Config], error) {
	if e := findGlobal(key); e != nil {
		return clusterSlot{}, e, nil
	}
	unknown := fmt.Errorf("unknown configuration key: %s", key)
	rest, ok := strings.CutPrefix(key, ClusterKeyPrefix)
	if !ok {
		return clusterSlot{}, nil, unknown
	}
	id, suffix, ok := strings.Cut(rest, ".")
	if !ok {
		return clusterSlot{}, nil, unknown
	}
	if !validClusterID(id) {
		return clusterSlot{}, nil, fmt.Errorf("invalid cluster ID in configuration key: %s", key)
	}
	if strings.HasPrefix(suffix, clientOptionPrefix) && len(suffix) > len(clientOptionPrefix) {
		return clusterSlot{}, nil, fmt.Errorf("%s: native Fluss client option overrides are not supported yet", key)
	}
	if findCluster(suffix) == nil {
		return clusterSlot{}, nil, unknown
	}
	return clusterSlot{id: id, suffix: suffix}, nil, nil
}

// resolveEnv maps an override variable to its registry entry.
func resolveEnv(name string) (clusterSlot, *entry[Config], error) {
	for i := range globalEntries {
		if EnvVar(globalEntries[i].key) == name {
			return clusterSlot{}, &globalEntries[i], nil
		}
	}
	unknown := fmt.Errorf("unknown configuration environment variable: %s", name)
	rest, ok := strings.CutPrefix(name, EnvPrefix+"CLUSTER__")
	if !ok {
		return clusterSlot{}, nil, unknown
	}
	rawID, option, ok := strings.Cut(rest, "__")
	if !ok {
		return clusterSlot{}, nil, unknown
	}
	id := strings.ToLower(rawID)
	if !validClusterID(id) || strings.ToUpper(id) != rawID {
		return clusterSlot{}, nil, unknown
	}
	if client, ok := strings.CutPrefix(option, "CLIENT__"); ok && client != "" {
		dotted := strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(client, "__", "."), "_", "-"))
		return clusterSlot{}, nil, fmt.Errorf("%s (%s): native Fluss client option overrides are not supported yet",
			name, ClusterKey(id, clientOptionPrefix+dotted))
	}
	for _, e := range clusterEntries {
		if envSuffix(e.key) == option {
			return clusterSlot{id: id, suffix: e.key}, nil, nil
		}
	}
	return clusterSlot{}, nil, unknown
}

func clusterIDsFromNode(v *yaml.Node) ([]string, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.ShortTag() == "!!null" {
			return nil, fmt.Errorf("value is missing")
		}
		return splitIDs(v.Value), nil
	case yaml.SequenceNode:
		ids := make([]string, 0, len(v.Content))
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" {
				return nil, fmt.Errorf("entries must be strings")
			}
			ids = append(ids, item.Value)
		}
		return ids, nil
	}
	return nil, fmt.Errorf("expected a comma-separated string or a list")
}

func splitIDs(s string) []string {
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}
