//go:build deploy

// Package deploy checks the deployment artefacts against the gateway itself.
// TestRenderedChartConfig reads the manifests `helm template` rendered for
// each value set (tests/deploy/test-deploy.sh writes them to
// $RENDERED_DIR/<set>.yaml) and runs the real gateway binary
// ($GATEWAY_BIN) with `--print-config` on each: the ConfigMap's gateway.yaml
// as --config and exactly the FLUSS_GATEWAY__* environment the Deployment
// gives the container, so the configuration a pod would start with is
// accepted by the gateway's own loader and validation.
package deploy

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
)

type manifest struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Template struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
	SecurityContext               struct {
		RunAsNonRoot   bool `yaml:"runAsNonRoot"`
		SeccompProfile struct {
			Type string `yaml:"type"`
		} `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	Containers []container `yaml:"containers"`
}

type container struct {
	Args  []string `yaml:"args"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	Env []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	ReadinessProbe probe `yaml:"readinessProbe"`
	LivenessProbe  probe `yaml:"livenessProbe"`
	Lifecycle      struct {
		PreStop struct {
			Sleep struct {
				Seconds int `yaml:"seconds"`
			} `yaml:"sleep"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	SecurityContext struct {
		ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

// placeholders stand in for values held in Secrets the chart does not
// create (existingSecret); each has the shape its key requires.
var placeholders = map[string]string{
	config.EnvVar(config.KeyUsers):  "placeholder:placeholder-secret",
	config.EnvVar(config.KeyTokens): "placeholder-token:placeholder",
}

func TestRenderedChartConfig(t *testing.T) {
	dir, bin := os.Getenv("RENDERED_DIR"), os.Getenv("GATEWAY_BIN")
	if dir == "" || bin == "" {
		t.Fatal("set RENDERED_DIR (rendered manifests) and GATEWAY_BIN (gateway binary); tests/deploy/test-deploy.sh does")
	}
	sets, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, sets, "no rendered value sets in %s", dir)
	for _, path := range sets {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".yaml"), func(t *testing.T) {
			checkRendered(t, path, bin)
		})
	}
}

func checkRendered(t *testing.T, path, bin string) {
	docs := readManifests(t, path)
	var cm, deploy *manifest
	secrets := map[string]map[string]string{}
	for i := range docs {
		m := &docs[i]
		switch m.Kind {
		case "ConfigMap":
			cm = m
		case "Deployment":
			deploy = m
		case "Secret":
			values := map[string]string{}
			for k, v := range m.Data {
				b, err := base64.StdEncoding.DecodeString(v)
				require.NoError(t, err, "secret %s key %s", m.Metadata.Name, k)
				values[k] = string(b)
			}
			for k, v := range m.StringData {
				values[k] = v
			}
			secrets[m.Metadata.Name] = values
		}
	}
	require.NotNil(t, cm, "no ConfigMap")
	require.NotNil(t, deploy, "no Deployment")
	require.Len(t, deploy.Spec.Template.Spec.Containers, 1)
	c := deploy.Spec.Template.Spec.Containers[0]

	work := t.TempDir()
	cfgPath := filepath.Join(work, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cm.Data["gateway.yaml"]), 0o600))
	require.Equal(t, "--config", c.Args[0])
	assert.Equal(t, "gateway.yaml", filepath.Base(c.Args[1]), "the container reads the ConfigMap's key")

	env := []string{"PATH=" + os.Getenv("PATH")}
	secretEnv := map[string]string{}
	for _, e := range c.Env {
		// OTEL_SDK_DISABLED=true also stops the Prometheus metrics the
		// ServiceMonitor/PodMonitor scrape (adapters/telemetry).
		assert.False(t, e.Name == "OTEL_SDK_DISABLED" && strings.EqualFold(e.Value, "true"), "the chart disables the metrics")
		if !strings.HasPrefix(e.Name, config.EnvPrefix) {
			continue
		}
		v := strings.ReplaceAll(e.Value, "$(POD_NAME)", "fluss-gateway-0")
		if ref := e.ValueFrom.SecretKeyRef; ref != nil {
			if own, ok := secrets[ref.Name]; ok {
				v, ok = own[ref.Key]
				require.True(t, ok, "%s: secret %s has no key %s", e.Name, ref.Name, ref.Key)
			} else if p, ok := placeholders[e.Name]; ok {
				v = p
			} else {
				v = "placeholder-from-" + ref.Name
			}
			secretEnv[e.Name] = v
		}
		env = append(env, e.Name+"="+v)
	}

	cmd := exec.Command(bin, "--config", cfgPath, "--print-config")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "the gateway refuses the rendered configuration:\n%s\nconfig:\n%s", stderr.String(), cm.Data["gateway.yaml"])
	effective := map[string]string{}
	require.NoError(t, yaml.Unmarshal(stdout.Bytes(), &effective), stdout.String())
	for name, v := range secretEnv {
		assert.NotContains(t, stdout.String(), v, "%s is printed", name)
	}

	// Listeners: the container ports the Service and probes use.
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	assert.Equal(t, "0.0.0.0:"+strconv.Itoa(ports["http"]), effective[config.KeyRESTListen])
	assert.Equal(t, "0.0.0.0:"+strconv.Itoa(ports["metrics"]), effective[config.KeyMetricsListen])
	assert.Equal(t, "/ready", c.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, "/health", c.LivenessProbe.HTTPGet.Path)
	assert.Equal(t, "http", c.ReadinessProbe.HTTPGet.Port)

	// Shutdown: the pod's grace period covers the preStop sleep, the
	// gateway's readiness grace and drain, and its stop margin (5 s).
	grace := durationOf(t, effective[config.KeyReadinessGrace])
	drain := durationOf(t, effective["gateway.shutdown.drain-timeout"])
	preStop := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	total := time.Duration(deploy.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	assert.GreaterOrEqual(t, total, preStop+grace+drain+5*time.Second,
		"terminationGracePeriodSeconds %v < preStop %v + readiness grace %v + drain %v + 5s", total, preStop, grace, drain)

	// Hardening.
	ps := deploy.Spec.Template.Spec
	assert.True(t, ps.SecurityContext.RunAsNonRoot)
	assert.Equal(t, "RuntimeDefault", ps.SecurityContext.SeccompProfile.Type)
	assert.True(t, c.SecurityContext.ReadOnlyRootFilesystem)
	require.NotNil(t, c.SecurityContext.AllowPrivilegeEscalation)
	assert.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
	assert.Equal(t, []string{"ALL"}, c.SecurityContext.Capabilities.Drop)
	t.Logf("%s: accepted; %d clusters, authentication %s, terminationGracePeriodSeconds %d",
		filepath.Base(path), len(strings.Split(effective[config.ClustersKey], ",")), effective[config.KeySecurityAuth], ps.TerminationGracePeriodSeconds)
}

func durationOf(t *testing.T, s string) time.Duration {
	t.Helper()
	if s == "0s" {
		return 0
	}
	d, err := config.ParseDuration(s)
	require.NoError(t, err, s)
	return d
}

func readManifests(t *testing.T, path string) []manifest {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dec := yaml.NewDecoder(f)
	var out []manifest
	for {
		var m manifest
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, path)
		if m.Kind != "" {
			out = append(out, m)
		}
	}
}
