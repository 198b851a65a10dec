package bootstrap

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
)

// tlsReloader serves the REST listener's TLS configuration and reloads the
// certificate, its key and the client CA bundle when their files change
// (`gateway.rest.tls.*`). It polls the files' modification time and size
// every `gateway.rest.tls.reload-interval` (which also follows a Kubernetes
// secret's symlink swap); a new set that does not load (a certificate
// written before its key, say) is logged and the previous one kept until
// the next poll succeeds. Handshakes read the current set atomically through
// tls.Config.GetConfigForClient, so a reload never drops a connection and
// applies from the next handshake on.
type tlsReloader struct {
	cfg config.TLS
	log *slog.Logger

	current atomic.Pointer[tlsState]
	stop    chan struct{}
	done    chan struct{}
	started atomic.Bool
	once    sync.Once
}

// tlsState is one loaded set of files.
type tlsState struct {
	conf   *tls.Config
	leaf   *x509.Certificate
	stamps [3]fileStamp // cert, key, client CA
}

type fileStamp struct {
	mod  time.Time
	size int64
}

func stampOf(path string) (fileStamp, error) {
	if path == "" {
		return fileStamp{}, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size()}, nil
}

// newTLSReloader loads the files once; errors name the keys.
func newTLSReloader(cfg config.TLS, log *slog.Logger) (*tlsReloader, error) {
	r := &tlsReloader{cfg: cfg, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	st, err := r.load()
	if err != nil {
		return nil, err
	}
	r.current.Store(st)
	return r, nil
}

func (r *tlsReloader) minVersion() uint16 {
	if r.cfg.MinVersion == "1.3" {
		return tls.VersionTLS13
	}
	return tls.VersionTLS12
}

func (r *tlsReloader) clientAuth() tls.ClientAuthType {
	switch r.cfg.ClientAuth {
	case config.ClientAuthRequest:
		return tls.VerifyClientCertIfGiven
	case config.ClientAuthRequire:
		return tls.RequireAndVerifyClientCert
	}
	return tls.NoClientCert
}

// load reads the three files; the stamps are taken first so that a change
// racing with the read is seen again on the next poll.
func (r *tlsReloader) load() (*tlsState, error) {
	st := &tlsState{}
	for i, p := range []string{r.cfg.CertFile, r.cfg.KeyFile, r.cfg.ClientCAFile} {
		s, err := stampOf(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", []string{config.KeyTLSCertFile, config.KeyTLSKeyFile, config.KeyTLSClientCAFile}[i], err)
		}
		st.stamps[i] = s
	}
	cert, err := tls.LoadX509KeyPair(r.cfg.CertFile, r.cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("%s / %s: %w", config.KeyTLSCertFile, config.KeyTLSKeyFile, err)
	}
	st.leaf = cert.Leaf
	if st.leaf == nil && len(cert.Certificate) > 0 {
		st.leaf, _ = x509.ParseCertificate(cert.Certificate[0])
	}
	conf := &tls.Config{
		MinVersion:   r.minVersion(),
		Certificates: []tls.Certificate{cert},
		ClientAuth:   r.clientAuth(),
		NextProtos:   []string{"http/1.1"},
	}
	if r.cfg.ClientCAFile != "" {
		pem, err := os.ReadFile(r.cfg.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", config.KeyTLSClientCAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate found in %s", config.KeyTLSClientCAFile, r.cfg.ClientCAFile)
		}
		conf.ClientCAs = pool
	}
	st.conf = conf
	return st, nil
}

// Config returns the listener's tls.Config: every handshake takes the
// current set.
func (r *tlsReloader) Config() *tls.Config {
	return &tls.Config{
		MinVersion: r.minVersion(),
		NextProtos: []string{"http/1.1"},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return r.current.Load().conf, nil
		},
	}
}

// changed reports whether a file's stamp differs from the loaded set.
func (r *tlsReloader) changed() bool {
	cur := r.current.Load()
	for i, p := range []string{r.cfg.CertFile, r.cfg.KeyFile, r.cfg.ClientCAFile} {
		s, err := stampOf(p)
		if err != nil || !s.mod.Equal(cur.stamps[i].mod) || s.size != cur.stamps[i].size {
			return true
		}
	}
	return false
}

// reload loads the files again if they changed; it reports whether a new
// set is in use.
func (r *tlsReloader) reload() (bool, error) {
	if !r.changed() {
		return false, nil
	}
	st, err := r.load()
	if err != nil {
		return false, err
	}
	r.current.Store(st)
	return true, nil
}

// start polls until close.
func (r *tlsReloader) start() {
	r.log.Info("REST listener TLS", r.describe(r.current.Load())...)
	r.started.Store(true)
	go func() {
		defer close(r.done)
		t := time.NewTicker(r.cfg.ReloadInterval)
		defer t.Stop()
		failing := false
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
			}
			ok, err := r.reload()
			switch {
			case err != nil && !failing:
				failing = true
				r.log.Warn("REST listener TLS files changed but do not load; keeping the previous certificate", "error", err)
			case ok:
				failing = false
				r.log.Info("REST listener TLS certificate reloaded", r.describe(r.current.Load())...)
			case err == nil:
				failing = false
			}
		}
	}()
}

func (r *tlsReloader) describe(st *tlsState) []any {
	attrs := []any{"min_version", r.cfg.MinVersion, "client_auth", string(r.cfg.ClientAuth)}
	if st.leaf != nil {
		attrs = append(attrs, "subject", st.leaf.Subject.String(), "not_after", st.leaf.NotAfter.UTC().Format(time.RFC3339),
			"serial", st.leaf.SerialNumber.String())
	}
	return attrs
}

func (r *tlsReloader) close() {
	r.once.Do(func() {
		close(r.stop)
		if r.started.Load() {
			<-r.done
		}
	})
}
