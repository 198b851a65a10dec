package config

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

const (
	referencePath = "../../docs/configuration.md"
	referenceFrom = "<!-- generated from bootstrap/config (Reference): begin -->\n"
	referenceTo   = "<!-- generated: end -->\n"
	// updateReferenceEnv, set to 1, rewrites the generated table of
	// docs/configuration.md instead of comparing it.
	updateReferenceEnv = "FLUSS_GATEWAY_UPDATE_REFERENCE"
)

// TestConfigurationReference holds docs/configuration.md to the registry:
// every key, its default (as --print-config shows it), its environment
// variable and its description. After adding or changing a key, run
// FLUSS_GATEWAY_UPDATE_REFERENCE=1 go test ./bootstrap/config -run TestConfigurationReference.
func TestConfigurationReference(t *testing.T) {
	rows, err := Reference()
	require.NoError(t, err)
	page, err := os.ReadFile(referencePath)
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(page), referenceFrom)
	require.True(t, ok, "docs/configuration.md has no %q marker", referenceFrom)
	_, after, ok := strings.Cut(rest, referenceTo)
	require.True(t, ok, "docs/configuration.md has no %q marker", referenceTo)
	want := ReferenceMarkdown(rows)
	if os.Getenv(updateReferenceEnv) == "1" {
		require.NoError(t, os.WriteFile(referencePath, []byte(before+referenceFrom+want+referenceTo+after), 0o644))
		return
	}
	assert.Equal(t, want, rest[:len(rest)-len(after)-len(referenceTo)],
		"docs/configuration.md is out of date: run %s=1 go test ./bootstrap/config -run TestConfigurationReference", updateReferenceEnv)

	// The defaults in the table are the ones --print-config shows.
	def := Default()
	for _, kv := range def.Settings() {
		key := strings.Replace(kv.Key, ClusterKeyPrefix+DefaultClusterID+".", ClusterKeyPrefix+"<id>.", 1)
		i := slices.IndexFunc(rows, func(r ReferenceRow) bool { return r.Key == key })
		if assert.GreaterOrEqual(t, i, 0, key) && kv.Value != Redacted {
			assert.Equal(t, kv.Value, rows[i].Default, key)
		}
	}
}

// TestExampleConfigCoversEveryKey holds configs/gateway.example.yaml, the
// annotated configuration, to the registry: it names every key (set or in a
// comment), and what it sets outside the cluster section is the default.
func TestExampleConfigCoversEveryKey(t *testing.T) {
	t.Parallel()
	const path = "../../configs/gateway.example.yaml"
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	example := string(raw)
	rows, _ := Reference()
	for _, r := range rows {
		if r.AliasOf != "" {
			continue
		}
		key := strings.NewReplacer("<id>", DefaultClusterID, "<name>", "public").Replace(r.Key)
		if strings.Contains(r.Key, "<id>") && !strings.Contains(example, key) {
			key = strings.Replace(key, "."+DefaultClusterID+".", ".secure.", 1)
		}
		assert.True(t, strings.Contains(example, key+":"), "configs/gateway.example.yaml does not name %s", r.Key)
	}
	cfg, err := Load(Options{Path: path})
	require.NoError(t, err)
	def := Default()
	global := func(kvs []KeyValue) map[string]string {
		m := map[string]string{}
		for _, kv := range kvs {
			if kv.Key != ClustersKey && !strings.HasPrefix(kv.Key, ClusterKeyPrefix) {
				m[kv.Key] = kv.Value
			}
		}
		return m
	}
	assert.Equal(t, global(def.Settings()), global(cfg.Settings()), "the example sets a non-default value")
}

// TestHelmChartKeys holds the Helm chart to the registry: its `config`
// values load, and every gateway key its values and templates name exists.
func TestHelmChartKeys(t *testing.T) {
	t.Parallel()
	const chart = "../../deployments/helm/fluss-gateway"
	raw, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	require.NoError(t, err)
	var values struct {
		Config map[string]any `yaml:"config"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &values))
	require.NotEmpty(t, values.Config)
	flat, err := yaml.Marshal(values.Config)
	require.NoError(t, err)
	_, err = Load(Options{Path: writeFile(t, string(flat))})
	require.NoError(t, err, "the chart's config values do not load")

	rows, _ := Reference()
	known := func(k string) bool {
		k = regexp.MustCompile(`^gateway\.cluster\.[a-z][a-z0-9_]*\.`).ReplaceAllString(k, "gateway.cluster.<id>.")
		return slices.ContainsFunc(rows, func(r ReferenceRow) bool {
			return r.Key == k || strings.HasSuffix(k, ".") && strings.HasPrefix(r.Key, k)
		})
	}
	keyRE := regexp.MustCompile(`gateway\.(?:rest|security|metrics|shutdown|idempotency|cluster|clusters|tls|instance-id|id|host)\b[a-z0-9.-]*`)
	files, err := filepath.Glob(filepath.Join(chart, "templates", "*"))
	require.NoError(t, err)
	files = append(files, filepath.Join(chart, "values.yaml"), filepath.Join(chart, "values.schema.json"))
	for _, f := range files {
		text, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, k := range keyRE.FindAllString(string(text), -1) {
			// A key or a key prefix (ending in a dot), perhaps followed
			// by the full stop of a sentence.
			ok := known(k) || known(strings.TrimRight(k, ".")) || known(strings.TrimSuffix(k, "."))
			assert.True(t, ok, "%s names %s, which is not a configuration key", filepath.Base(f), k)
		}
	}
}
