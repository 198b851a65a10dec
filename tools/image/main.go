// Command image assembles the gateway's container image without a container
// engine: one layer holding the static binary (and optionally a CA bundle)
// on an empty base, written as an OCI image archive (a tar of an OCI image
// layout, https://github.com/opencontainers/image-spec/blob/main/image-layout.md)
// that `podman load`, `skopeo copy oci-archive:...` and registries' upload
// tools accept.
//
// The output is reproducible: every timestamp in the layer, the image config
// and the archive is the -created time (the commit time in `make image`),
// file owners are 0:0, entries are sorted, and gzip carries no name or time,
// so the same binary and flags give the same manifest digest.
//
//	go run . -binary bin/fluss-gateway -out bin/fluss-gateway-v1.tar \
//	    -version v1 -revision $(git rev-parse HEAD) -created $(git log -1 --format=%ct)
//
// It is its own Go module (tools/image/go.mod) so that go-containerregistry
// stays out of the gateway's dependencies.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths inside the image.
const (
	binaryPath = "usr/local/bin/fluss-gateway"
	caPath     = "etc/ssl/certs/ca-certificates.crt"
	configDir  = "etc/fluss-gateway"
)

type options struct {
	binary, out, caBundle                string
	version, revision, source, created   string
	user, arch, refName, title, licenses string
	description                          string
	restPort, metricsPort                int
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "static gateway binary (CGO_ENABLED=0)")
	flag.StringVar(&o.out, "out", "", "OCI image archive to write")
	flag.StringVar(&o.caBundle, "ca-bundle", "", "optional PEM CA bundle to ship as /"+caPath+" (JWKS over https)")
	flag.StringVar(&o.version, "version", "dev", "org.opencontainers.image.version")
	flag.StringVar(&o.revision, "revision", "", "org.opencontainers.image.revision (commit)")
	flag.StringVar(&o.source, "source", "", "org.opencontainers.image.source (repository URL)")
	flag.StringVar(&o.created, "created", "0", "creation time: Unix seconds or RFC 3339 (org.opencontainers.image.created)")
	flag.StringVar(&o.user, "user", "65532:65532", "numeric uid:gid the gateway runs as")
	flag.StringVar(&o.arch, "arch", "amd64", "GOARCH of the binary")
	flag.StringVar(&o.refName, "ref-name", "", "org.opencontainers.image.ref.name in the archive's index (default: fluss-gateway:<version>)")
	flag.StringVar(&o.title, "title", "fluss-gateway", "org.opencontainers.image.title")
	flag.StringVar(&o.description, "description", "Stateless HTTP/JSON gateway in front of Apache Fluss clusters", "org.opencontainers.image.description")
	flag.StringVar(&o.licenses, "licenses", "Apache-2.0", "org.opencontainers.image.licenses")
	flag.IntVar(&o.restPort, "rest-port", 8080, "exposed REST port")
	flag.IntVar(&o.metricsPort, "metrics-port", 9095, "exposed Prometheus port")
	flag.Parse()
	digest, size, err := build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Printf("image: %s manifest %s (%d bytes)\n", o.out, digest, size)
}

// parseCreated accepts Unix seconds or RFC 3339.
func parseCreated(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("-created %q: want Unix seconds or RFC 3339", s)
	}
	return t.UTC(), nil
}

func checkUser(u string) error {
	uid, gid, ok := strings.Cut(u, ":")
	for _, part := range []string{uid, gid} {
		n, err := strconv.ParseUint(part, 10, 32)
		if !ok || err != nil {
			return fmt.Errorf("-user %q: want numeric uid:gid", u)
		}
		if n == 0 {
			return fmt.Errorf("-user %q: the image runs as a non-root user", u)
		}
	}
	return nil
}

func build(o options) (v1.Hash, int64, error) {
	if o.binary == "" || o.out == "" {
		return v1.Hash{}, 0, errors.New("-binary and -out are required")
	}
	if err := checkUser(o.user); err != nil {
		return v1.Hash{}, 0, err
	}
	created, err := parseCreated(o.created)
	if err != nil {
		return v1.Hash{}, 0, err
	}
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return v1.Hash{}, 0, err
	}
	files := []file{{path: binaryPath, mode: 0o755, data: bin}}
	if o.caBundle != "" {
		ca, err := os.ReadFile(o.caBundle)
		if err != nil {
			return v1.Hash{}, 0, err
		}
		files = append(files, file{path: caPath, mode: 0o644, data: ca})
	}
	layerTar, err := layerTarball(files, created)
	if err != nil {
		return v1.Hash{}, 0, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return v1.Hash{}, 0, err
	}

	labels := map[string]string{
		"org.opencontainers.image.title":       o.title,
		"org.opencontainers.image.description": o.description,
		"org.opencontainers.image.version":     o.version,
		"org.opencontainers.image.created":     created.Format(time.RFC3339),
		"org.opencontainers.image.licenses":    o.licenses,
	}
	if o.revision != "" {
		labels["org.opencontainers.image.revision"] = o.revision
	}
	if o.source != "" {
		labels["org.opencontainers.image.source"] = o.source
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: created},
			CreatedBy: "tools/image: " + binaryPath,
			Comment:   "static fluss-gateway binary",
		},
	})
	if err != nil {
		return v1.Hash{}, 0, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, 0, err
	}
	cf = cf.DeepCopy()
	cf.Architecture = o.arch
	cf.OS = "linux"
	cf.Created = v1.Time{Time: created}
	cf.Config = v1.Config{
		User:       o.user,
		Entrypoint: []string{"/" + binaryPath},
		Cmd:        []string{"--config", "/" + configDir + "/gateway.yaml"},
		WorkingDir: "/",
		Env: []string{
			"PATH=/usr/local/bin",
			// The gateway reads its roots here when a bundle is shipped;
			// harmless otherwise.
			"SSL_CERT_FILE=/" + caPath,
		},
		ExposedPorts: map[string]struct{}{
			strconv.Itoa(o.restPort) + "/tcp":    {},
			strconv.Itoa(o.metricsPort) + "/tcp": {},
		},
		Labels:     labels,
		StopSignal: "SIGTERM",
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return v1.Hash{}, 0, err
	}
	img = mutate.Annotations(img, labels).(v1.Image)

	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, 0, err
	}
	refName := o.refName
	if refName == "" {
		refName = "fluss-gateway:" + o.version
	}
	dir, err := os.MkdirTemp("", "fluss-gateway-image-")
	if err != nil {
		return v1.Hash{}, 0, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, 0, err
	}
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": refName,
	})); err != nil {
		return v1.Hash{}, 0, err
	}
	size, err := archiveDir(dir, o.out, created)
	if err != nil {
		return v1.Hash{}, 0, err
	}
	return digest, size, nil
}

// file is one regular file of the layer.
type file struct {
	path string
	mode int64
	data []byte
}

// layerTarball writes the files and their parent directories, sorted, owned
// by 0:0, all with the time t. An empty /tmp is not needed: the gateway
// writes no files.
func layerTarball(files []file, t time.Time) ([]byte, error) {
	dirs := map[string]bool{configDir: true}
	for _, f := range files {
		for d := filepath.Dir(f.path); d != "."; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	type entry struct {
		hdr  *tar.Header
		data []byte
	}
	var entries []entry
	for d := range dirs {
		entries = append(entries, entry{hdr: &tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755}})
	}
	for _, f := range files {
		entries = append(entries, entry{hdr: &tar.Header{Typeflag: tar.TypeReg, Name: f.path, Mode: f.mode, Size: int64(len(f.data))}, data: f.data})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].hdr.Name < entries[j].hdr.Name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		e.hdr.ModTime = t
		e.hdr.Format = tar.FormatPAX
		e.hdr.PAXRecords = nil
		if err := tw.WriteHeader(e.hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// archiveDir tars an OCI layout directory into out, sorted, with fixed
// owners and time t, and returns the archive's size.
func archiveDir(dir, out string, t time.Time) (int64, error) {
	var paths []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			paths = append(paths, p)
		}
		return nil
	}); err != nil {
		return 0, err
	}
	sort.Strings(paths)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return 0, err
	}
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.Remove(tmp) }()
	tw := tar.NewWriter(f)
	for _, p := range paths {
		info, err := os.Lstat(p)
		if err != nil {
			return 0, err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		hdr := &tar.Header{Name: rel, ModTime: t, Mode: 0o644, Typeflag: tar.TypeReg, Size: info.Size(), Format: tar.FormatPAX}
		if info.IsDir() {
			hdr = &tar.Header{Name: rel + "/", ModTime: t, Mode: 0o755, Typeflag: tar.TypeDir, Format: tar.FormatPAX}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return 0, err
		}
		if !info.IsDir() {
			src, err := os.Open(p)
			if err != nil {
				return 0, err
			}
			_, err = io.Copy(tw, src)
			src.Close()
			if err != nil {
				return 0, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	st, err := os.Stat(tmp)
	if err != nil {
		return 0, err
	}
	return st.Size(), os.Rename(tmp, out)
}
