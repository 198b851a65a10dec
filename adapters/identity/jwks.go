package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
)

const (
	// maxJWKSBytes bounds a JWKS document.
	maxJWKSBytes = 1 << 20
	// unknownKeyRefreshGap is the minimum time between two reloads caused
	// by tokens naming an unknown key id (a rotation at the issuer).
	unknownKeyRefreshGap = 30 * time.Second
)

// keySet is one loaded JWKS.
type keySet struct {
	kf   keyfunc.Keyfunc
	size int
}

// parseKeySet keeps the asymmetric signature keys of a JWKS. Symmetric
// ("oct") keys, encryption keys and keys the library cannot use are
// skipped; a set without any usable key is an error.
func parseKeySet(raw []byte) (*keySet, error) {
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, errors.New("not a JWK Set document")
	}
	store := jwkset.NewMemoryStorage()
	n := 0
	for _, m := range set.Keys {
		if m.KTY == jwkset.KtyOct || (m.USE != "" && m.USE != jwkset.UseSig) {
			continue
		}
		jwk, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
		if err != nil {
			continue
		}
		if err := store.KeyWrite(context.Background(), jwk); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, errors.New("the JWK Set has no usable signature verification key")
	}
	kf, err := keyfunc.New(keyfunc.Options{Storage: store})
	if err != nil {
		return nil, err
	}
	return &keySet{kf: kf, size: n}, nil
}

// keySource holds the current key set of a JWKS file or URL and reloads it
// periodically and when a token names an unknown key. A failed reload keeps
// the previous set.
type keySource struct {
	key          string // configuration key of the source
	load         func(ctx context.Context) ([]byte, error)
	fetchTimeout time.Duration
	refreshGap   time.Duration
	now          func() time.Time
	logger       *slog.Logger

	current atomic.Pointer[keySet]

	mu          sync.Mutex // guards lastAttempt and inflight
	lastAttempt time.Time
	// inflight is closed when the running on-demand reload ends; nil when
	// none runs.
	inflight chan struct{}
	// base ends detached reloads when the source closes.
	base context.Context

	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

func (s *keySource) reload(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.fetchTimeout)
	defer cancel()
	raw, err := s.load(ctx)
	if err != nil {
		return err
	}
	ks, err := parseKeySet(raw)
	if err != nil {
		return err
	}
	s.current.Store(ks)
	return nil
}

// refreshForUnknownKey reloads the set after a token named a key id that
// `used` lacks. It reports whether a newer set is available: either this
// call loaded it or a concurrent reload did. Reloads are at most every
// refreshGap, so forged key ids cannot make the gateway hammer the issuer.
//
// The reload runs detached from the caller, bounded by the fetch timeout
// alone: a caller whose own deadline is tiny (X-Fluss-Request-Timeout: 1ns)
// stops waiting, but cannot make the reload fail and so spend the attempt
// that a token signed with a freshly rotated key needs. Concurrent callers
// share one reload.
func (s *keySource) refreshForUnknownKey(ctx context.Context, used *keySet) bool {
	s.mu.Lock()
	if s.current.Load() != used {
		s.mu.Unlock()
		return true
	}
	done := s.inflight
	if done == nil {
		now := s.now()
		if now.Sub(s.lastAttempt) < s.refreshGap {
			s.mu.Unlock()
			return false
		}
		s.lastAttempt = now
		done = make(chan struct{})
		s.inflight = done
		go func() {
			defer close(done)
			err := s.reload(s.background())
			if err != nil {
				s.logFailure(err)
			}
			s.mu.Lock()
			s.inflight = nil
			s.mu.Unlock()
		}()
	}
	s.mu.Unlock()
	select {
	case <-done:
		return s.current.Load() != used
	case <-ctx.Done():
		return false
	}
}

// background is the context of detached reloads: it ends when the source
// is closed.
func (s *keySource) background() context.Context {
	if s.base != nil {
		return s.base
	}
	return context.Background()
}

// start launches the periodic reload.
func (s *keySource) start(interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	s.base, s.stop = ctx, cancel
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.mu.Lock()
				s.lastAttempt = s.now()
				s.mu.Unlock()
				if err := s.reload(ctx); err != nil && ctx.Err() == nil {
					s.logFailure(err)
				}
			}
		}
	}()
}

func (s *keySource) close() {
	s.closeOnce.Do(func() {
		if s.stop != nil {
			s.stop()
			<-s.done
		}
	})
}

func (s *keySource) logFailure(err error) {
	if s.logger != nil {
		s.logger.Warn("JWKS reload failed; keeping the previous key set", "key", s.key, "error", err)
	}
}

// fileLoader reads a JWKS file.
func fileLoader(path string) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readBounded(f)
	}
}

// httpLoader downloads a JWKS; ctx carries the fetch timeout.
func httpLoader(client *http.Client, u string) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/jwk-set+json, application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, redactURLError(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
			return nil, fmt.Errorf("HTTP status %d", resp.StatusCode)
		}
		return readBounded(resp.Body)
	}
}

func readBounded(r io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxJWKSBytes {
		return nil, fmt.Errorf("the JWK Set exceeds %d bytes", maxJWKSBytes)
	}
	return raw, nil
}

// checkJWKSURL accepts https URLs, and plain http only towards loopback
// hosts (a sidecar or a test server): keys fetched over an unauthenticated
// channel could be swapped by anyone on the path.
func checkJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errors.New("must be an absolute http(s) URL")
	}
	if u.User != nil {
		return errors.New("must not embed credentials")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
		return errors.New("must use https (plain http is accepted for loopback hosts only)")
	default:
		return errors.New("must be an absolute http(s) URL")
	}
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// defaultJWKSClient refuses redirects that would leave https.
func defaultJWKSClient() *http.Client {
	return &http.Client{
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			return checkJWKSURL(req.URL.String())
		},
	}
}

// redactURLError keeps a failed fetch's operation and cause but not its URL,
// whose query may carry a credential (?api_key=...): the error reaches
// startup errors and logs.
func redactURLError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	return fmt.Errorf("%s %s: %w", ue.Op, RedactURL(ue.URL), ue.Err)
}

// RedactURL hides the parts of a URL that may carry credentials: the user
// info, the query (?api_key=...) and the fragment. A URL that does not parse
// is hidden whole. Startup logs, --print-config and fetch errors show JWKS
// URLs only through it.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "******"
	}
	if u.User != nil {
		u.User = url.User("******")
	}
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery = "******", false
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = "******", ""
	}
	return u.String()
}
