package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testOptions(t *testing.T, out string) options {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fluss-gateway")
	require.NoError(t, os.WriteFile(bin, []byte("\x7fELF not really a binary"), 0o755))
	ca := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\n"), 0o644))
	return options{binary: bin, out: out, caBundle: ca, version: "1.2.3", revision: "abc123",
		source: "https://example.com/repo", created: "1700000000", user: "65532:65532", arch: "amd64",
		title: "fluss-gateway", licenses: "Apache-2.0", restPort: 8080, metricsPort: 9095}
}

// untar reads a tar stream into name -> header and content.
func untar(t *testing.T, r io.Reader) (map[string]*tar.Header, map[string][]byte) {
	hdrs, data := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return hdrs, data
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		hdrs[h.Name], data[h.Name] = h, b
	}
}

func TestBuildIsReproducibleAndWellFormed(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(t, filepath.Join(dir, "a.tar"))
	d1, _, err := build(o)
	require.NoError(t, err)
	o.out = filepath.Join(dir, "b.tar")
	d2, _, err := build(o)
	require.NoError(t, err)
	assert.Equal(t, d1, d2)
	a, err := os.ReadFile(filepath.Join(dir, "a.tar"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "b.tar"))
	require.NoError(t, err)
	assert.Equal(t, a, b, "archives are byte-identical")

	f, err := os.Open(filepath.Join(dir, "a.tar"))
	require.NoError(t, err)
	defer f.Close()
	hdrs, files := untar(t, f)
	for name, h := range hdrs {
		assert.Equal(t, int64(1700000000), h.ModTime.Unix(), name)
		assert.Zero(t, h.Uid, name)
	}
	var index struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	require.NoError(t, json.Unmarshal(files["index.json"], &index))
	require.Len(t, index.Manifests, 1)
	assert.Equal(t, d1.String(), index.Manifests[0].Digest)
	assert.Equal(t, "fluss-gateway:1.2.3", index.Manifests[0].Annotations["org.opencontainers.image.ref.name"])
	blob := func(digest string) []byte { return files["blobs/sha256/"+digest[len("sha256:"):]] }
	var man struct {
		Config      struct{ Digest string } `json:"config"`
		Layers      []struct{ Digest, MediaType string }
		Annotations map[string]string `json:"annotations"`
	}
	require.NoError(t, json.Unmarshal(blob(index.Manifests[0].Digest), &man))
	assert.Equal(t, map[string]string{
		"org.opencontainers.image.title":       "fluss-gateway",
		"org.opencontainers.image.description": "",
		"org.opencontainers.image.version":     "1.2.3",
		"org.opencontainers.image.revision":    "abc123",
		"org.opencontainers.image.source":      "https://example.com/repo",
		"org.opencontainers.image.created":     "2023-11-14T22:13:20Z",
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}, man.Annotations)
	var cfg struct {
		Created string `json:"created"`
		Config  struct {
			User       string
			Entrypoint []string
			Labels     map[string]string
		} `json:"config"`
	}
	require.NoError(t, json.Unmarshal(blob(man.Config.Digest), &cfg))
	assert.Equal(t, "65532:65532", cfg.Config.User)
	assert.Equal(t, []string{"/usr/local/bin/fluss-gateway"}, cfg.Config.Entrypoint)
	assert.Equal(t, man.Annotations, cfg.Config.Labels)
	assert.Equal(t, "2023-11-14T22:13:20Z", cfg.Created)

	require.Len(t, man.Layers, 1)
	assert.Equal(t, "application/vnd.oci.image.layer.v1.tar+gzip", man.Layers[0].MediaType)
	gz, err := gzip.NewReader(bytes.NewReader(blob(man.Layers[0].Digest)))
	require.NoError(t, err)
	lh, ld := untar(t, gz)
	assert.Equal(t, []byte("\x7fELF not really a binary"), ld["usr/local/bin/fluss-gateway"])
	assert.Equal(t, int64(0o755), lh["usr/local/bin/fluss-gateway"].Mode)
	assert.Contains(t, lh, "etc/ssl/certs/ca-certificates.crt")
	assert.Contains(t, lh, "etc/fluss-gateway/")
}

func TestBuildRefusesRoot(t *testing.T) {
	for _, user := range []string{"0:0", "root", "65532", "1000:0"} {
		o := testOptions(t, filepath.Join(t.TempDir(), "x.tar"))
		o.user = user
		_, _, err := build(o)
		assert.Error(t, err, user)
	}
}
