package fluss

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/defaults"
)

// Defaults of the user identity mode.
const (
	// DefaultMaxUserSessions is the default cap on per-user connection sets.
	DefaultMaxUserSessions = 64
	// DefaultUserIdleTimeout is the default idle time after which a user's
	// connection set is closed.
	DefaultUserIdleTimeout = 10 * time.Minute
	// DefaultProbePrincipal is the authorization id the start probe asks
	// for; no such user needs to exist.
	DefaultProbePrincipal = "fluss-gateway-authzid-probe"
	// reprobeInterval bounds how often a user-mode session request probes
	// a cluster that was unreachable.
	reprobeInterval = time.Second
)

// ErrAuthzIDUnsupported is the cause of the user-mode failure against a
// Fluss cluster that refuses SASL authorization ids (Fluss 0.9.1; apache/fluss
// PR #3857 adds allow-listed impersonation).
var ErrAuthzIDUnsupported = errors.New("the Fluss cluster does not accept SASL authorization ids")

// probe states.
type probeState uint8

const (
	probePending probeState = iota // cluster unreachable so far
	probePassed
	probeRefused // the cluster refuses authorization ids: permanent
)

// userPool holds the connection sets of user identity mode: one per end user
// (the principal's ActAs when set, else its Name), each authenticated as the
// service account over SASL/PLAIN with the user as authorization id, so that
// Fluss authorizes every request as that user.
//
// Sets are created on demand; creating one connects and fetches the cluster
// metadata, so a user the cluster refuses to be impersonated (an allow-list,
// apache/fluss PR #3857) is answered 403 at once. At most max sets exist:
// when the pool is full, the least recently used set that serves no request
// is closed to make room; when every set is serving a request, the request
// is refused with 429 `resource_exhausted` and a Retry-After computed from
// the in-flight requests' deadlines (the earliest time a whole set is
// certain to be free; a set is busy from Session until the context given to
// Session ends, which for HTTP requests is the end of the request). A set
// that has served nothing for the idle timeout is closed.
//
// Nothing is shared between users: metadata, table ids, schemas and writer
// ids are per set, because what Fluss lets one principal see or do must not
// answer another's request. The price is memory and connections per active
// user, bounded by max.
type userPool struct {
	cfg   Config
	log   *slog.Logger
	max   int
	idle  time.Duration
	probe string
	now   func() time.Time

	probeMu   sync.Mutex // one probe at a time
	state     probeState
	refused   error
	lastProbe time.Time
	probeErr  error

	mu       sync.Mutex
	sessions map[string]*userSession
	closed   bool
	stop     chan struct{}
	done     chan struct{}
	closing  sync.WaitGroup
}

// userSession is one user's connection set and its use.
type userSession struct {
	user  string
	ready chan struct{} // closed once b or err is set
	b     *backend
	err   error

	// Guarded by userPool.mu.
	lastUsed time.Time
	inflight map[uint64]time.Time // request id -> deadline (zero: none)
	nextID   uint64
	evicted  bool
}

func newUserPool(ctx context.Context, cfg Config, log *slog.Logger) (*userPool, error) {
	u := &userPool{
		cfg:      cfg,
		log:      log,
		max:      cfg.MaxUserSessions,
		idle:     cfg.UserIdleTimeout,
		probe:    cfg.ProbePrincipal,
		now:      cfg.Now,
		sessions: map[string]*userSession{},
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	u.max = defaults.Positive(u.max, DefaultMaxUserSessions)
	u.idle = defaults.Positive(u.idle, DefaultUserIdleTimeout)
	if u.probe == "" {
		u.probe = DefaultProbePrincipal
	}
	if u.probe == cfg.Username {
		return nil, fmt.Errorf("the user-mode probe principal must differ from the service account %q", cfg.Username)
	}
	if u.now == nil {
		u.now = time.Now
	}
	if err := u.startProbe(ctx); err != nil {
		return nil, err
	}
	go u.janitor()
	return u, nil
}

// startProbe runs the probe once within ctx and the connect timeout. A
// refusal fails the start; an unreachable cluster is only logged: sessions
// probe again (at most every reprobeInterval) and are refused with 503
// until the probe passes.
func (u *userPool) startProbe(ctx context.Context) error {
	err := u.runProbe(ctx)
	switch {
	case err == nil:
		u.log.Info("user identity mode: the Fluss cluster accepts SASL authorization ids",
			"service_account", u.cfg.Username, "max_sessions", u.max, "idle_timeout", u.idle.String())
		return nil
	case u.state == probeRefused:
		return err
	default:
		u.log.Warn("user identity mode: the Fluss cluster is unreachable, so whether it accepts SASL authorization ids is unknown; "+
			"user sessions are refused with 503 until a probe on first use passes", "error", err)
		return nil
	}
}

// runProbe authenticates one connection as the service account with the
// probe principal as authorization id and records the outcome. Callers hold
// no lock; probes are serialised.
func (u *userPool) runProbe(ctx context.Context) error {
	u.probeMu.Lock()
	defer u.probeMu.Unlock()
	switch u.state {
	case probePassed:
		return nil
	case probeRefused:
		return u.refused
	}
	if !u.lastProbe.IsZero() && u.now().Sub(u.lastProbe) < reprobeInterval {
		return u.probeErr
	}
	timeout := u.cfg.ConnectTimeout
	timeout = defaults.Positive(timeout, rpc.DefaultDialTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := u.probeOnce(ctx)
	u.lastProbe, u.probeErr = u.now(), err
	switch {
	case err == nil:
		u.state = probePassed
	case errors.Is(err, ErrAuthzIDUnsupported) || errors.Is(err, errServiceAccountRefused):
		u.state, u.refused = probeRefused, err
	}
	return err
}

var errServiceAccountRefused = errors.New("the Fluss cluster refuses the service account")

// probeOnce tries the bootstrap servers in order until one answers.
func (u *userPool) probeOnce(ctx context.Context) error {
	var last error
	for _, addr := range u.bootstrap() {
		err := u.authenticate(ctx, addr, u.probe)
		if err == nil {
			return nil
		}
		if !rpc.IsAuthentication(err) {
			last = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if authzIDRefused(err) {
			return fmt.Errorf("identity mode `user` cannot start: %w: the server answered AUTHENTICATE_EXCEPTION (46) to "+
				"the service account %q asking for authorization id %q (%v). Fluss 0.9.1 rejects any authorization id "+
				"different from the username; impersonation needs a server with apache/fluss PR #3857 and the service "+
				"account on its allow-list. Use identity mode `service` with this cluster",
				ErrAuthzIDUnsupported, u.cfg.Username, u.probe, rpc.AsError(err).Message)
		}
		// Another authentication failure: the service account itself, or
		// an allow-list without the probe principal?
		plain := u.authenticate(ctx, addr, "")
		switch {
		case plain == nil:
			u.log.Warn("user identity mode: the Fluss cluster refused the probe authorization id but accepts the service account; "+
				"assuming an impersonation allow-list: users not on it are answered 403", "probe_principal", u.probe,
				"error", err)
			return nil
		case rpc.IsAuthentication(plain):
			return fmt.Errorf("identity mode `user` cannot start: %w %q: %v", errServiceAccountRefused, u.cfg.Username, rpc.AsError(plain).Message)
		default:
			last = plain
		}
	}
	if last == nil {
		last = errors.New("no bootstrap server")
	}
	return last
}

func (u *userPool) bootstrap() []string {
	var out []string
	for _, a := range u.cfg.BootstrapServers {
		for _, s := range strings.Split(a, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func (u *userPool) authenticate(ctx context.Context, addr, authzid string) error {
	conn, err := rpc.Dial(ctx, addr, rpc.ConnConfig{
		DialTimeout:   u.cfg.ConnectTimeout,
		ClientName:    "fluss-gateway-go",
		ClientVersion: u.cfg.ClientVersion,
		Hooks:         u.cfg.Hooks,
		SASL: &rpc.SASLConfig{Mechanism: "PLAIN", Username: u.cfg.Username, Password: u.cfg.Password,
			AuthorizationID: authzid},
	})
	if err != nil {
		return err
	}
	return conn.Close()
}

// authzIDRefused recognises Fluss 0.9.1's PlainSaslServer refusal.
func authzIDRefused(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "authorization id that is different from username")
}

// session returns p's connection set, creating it when needed.
func (u *userPool) session(ctx context.Context, p domain.Principal) (domain.Session, error) {
	user := p.FlussPrincipal()
	if user == "" {
		return nil, domain.Errorf(domain.KindUnauthorized,
			"cluster `%s` runs in user identity mode: anonymous callers have no Fluss principal", u.cfg.ID)
	}
	if err := u.ready(ctx); err != nil {
		return nil, err
	}
	s, err := u.acquire(ctx, user)
	if err != nil {
		return nil, err
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, &domain.Error{Kind: domain.KindTimeout, Cause: ctx.Err(),
			Message: fmt.Sprintf("connecting to cluster `%s` as %q did not finish before the request deadline", u.cfg.ID, user)}
	}
	if s.err != nil {
		return nil, s.err
	}
	return s.b.session, nil
}

// ready checks the probe, probing again when the cluster was unreachable.
func (u *userPool) ready(ctx context.Context) error {
	err := u.runProbe(ctx)
	if err == nil {
		return nil
	}
	u.probeMu.Lock()
	state := u.state
	u.probeMu.Unlock()
	if state == probeRefused {
		if errors.Is(err, ErrAuthzIDUnsupported) {
			return &domain.Error{Kind: domain.KindUnsupported, Cause: err,
				Message: fmt.Sprintf("cluster `%s` is configured for identity mode user, but %s (Fluss 0.9.1; apache/fluss PR #3857)",
					u.cfg.ID, ErrAuthzIDUnsupported)}
		}
		return &domain.Error{Kind: domain.KindUnavailable, Cause: err,
			Message: fmt.Sprintf("authentication to cluster `%s` failed: %v", u.cfg.ID, err)}
	}
	return &domain.Error{Kind: domain.KindUnavailable, Retryable: true, RetryAfterMillis: reprobeInterval.Milliseconds(), Cause: err,
		Message: fmt.Sprintf("cluster `%s` (identity mode user) is unreachable; cannot verify that it accepts SASL authorization ids: %v",
			u.cfg.ID, err)}
}

// acquire returns user's session, registered as in use until ctx ends. A
// new session is created in the background (detached from ctx's
// cancellation, bounded by the connect timeout) so that a caller giving up
// does not spoil it for the next.
func (u *userPool) acquire(ctx context.Context, user string) (*userSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil, domain.Errorf(domain.KindUnavailable, "cluster `%s` is closing", u.cfg.ID)
	}
	now := u.now()
	s := u.sessions[user]
	if s == nil {
		if len(u.sessions) >= u.max && !u.evictLocked() {
			return nil, u.exhaustedLocked(now)
		}
		s = &userSession{user: user, ready: make(chan struct{}), inflight: map[uint64]time.Time{}}
		u.sessions[user] = s
		go u.create(ctx, s)
	}
	s.lastUsed = now
	if ctx.Done() != nil {
		s.nextID++
		id := s.nextID
		dl, _ := ctx.Deadline()
		s.inflight[id] = dl
		context.AfterFunc(ctx, func() { u.release(s, id) })
	}
	return s, nil
}

func (u *userPool) release(s *userSession, id uint64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(s.inflight, id)
	s.lastUsed = u.now()
}

// create connects the session's backend and fetches the cluster metadata.
func (u *userPool) create(ctx context.Context, s *userSession) {
	timeout := u.cfg.ConnectTimeout
	timeout = defaults.Positive(timeout, rpc.DefaultDialTimeout)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	b, err := newBackend(u.cfg, s.user, u.eachCache, u.log)
	if err == nil {
		if _, cerr := b.client.Cluster(cctx); cerr != nil {
			_ = b.close(cctx)
			b, err = nil, u.connectError(s.user, cerr)
		}
	}
	u.mu.Lock()
	s.b, s.err = b, err
	if err != nil && u.sessions[s.user] == s {
		delete(u.sessions, s.user) // the next request tries again
	}
	closed := u.closed
	u.mu.Unlock()
	close(s.ready)
	if err != nil {
		u.log.Warn("user identity mode: cannot open a session", "user", s.user, "error", err)
	} else if closed {
		u.closeSession(s)
	} else {
		u.log.Debug("user identity mode: session opened", "user", s.user)
	}
}

func (u *userPool) connectError(user string, err error) error {
	if rpc.IsAuthentication(err) {
		return &domain.Error{Kind: domain.KindUnauthorized, Cause: err,
			Message: fmt.Sprintf("cluster `%s` refuses the service account acting as %q: %s", u.cfg.ID, user, rpc.AsError(err).Message)}
	}
	if de := domain.AsError(err); de != nil {
		return de
	}
	return &domain.Error{Kind: domain.KindUnavailable, Retryable: true, Cause: err,
		Message: fmt.Sprintf("cannot connect to cluster `%s` as %q: %v", u.cfg.ID, user, err)}
}

// evictLocked closes the least recently used session that serves no
// request; it reports whether one was found.
func (u *userPool) evictLocked() bool {
	var victim *userSession
	for _, s := range u.sessions {
		if len(s.inflight) > 0 || !isClosed(s.ready) {
			continue
		}
		if victim == nil || s.lastUsed.Before(victim.lastUsed) {
			victim = s
		}
	}
	if victim == nil {
		return false
	}
	delete(u.sessions, victim.user)
	victim.evicted = true
	u.closeSession(victim)
	u.log.Debug("user identity mode: session evicted to make room", "user", victim.user)
	return true
}

// exhaustedLocked is the 429 of a full pool whose sessions all serve
// requests. Its Retry-After is the earliest time a session is certain to
// be free: for each session the latest deadline of its requests, the
// earliest of those over sessions. Sessions whose requests have no deadline
// do not count; when none has one, the idle timeout is the estimate.
func (u *userPool) exhaustedLocked(now time.Time) error {
	wait := time.Duration(math.MaxInt64)
	for _, s := range u.sessions {
		var latest time.Time
		known := true
		for _, dl := range s.inflight {
			if dl.IsZero() {
				known = false
				break
			}
			if dl.After(latest) {
				latest = dl
			}
		}
		if !known {
			continue
		}
		free := latest.Sub(now) // a session still connecting has no requests yet: free now
		if len(s.inflight) == 0 {
			free = 0
		}
		wait = min(wait, free)
	}
	if wait == time.Duration(math.MaxInt64) {
		wait = u.idle
	}
	wait = max(wait, time.Millisecond)
	return &domain.Error{
		Kind:             domain.KindResourceExhausted,
		Retryable:        true,
		RetryAfterMillis: int64((wait + time.Millisecond - 1) / time.Millisecond),
		Message: fmt.Sprintf("cluster `%s`: all %d per-user connection sets (connection.max) are serving requests; retry after %s",
			u.cfg.ID, u.max, wait.Round(time.Millisecond)),
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// closeSession closes a session's backend in the background.
func (u *userPool) closeSession(s *userSession) {
	if s.b == nil {
		return
	}
	u.closing.Add(1)
	go func() {
		defer u.closing.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.b.close(ctx); err != nil {
			u.log.Warn("user identity mode: closing a session", "user", s.user, "error", err)
		}
	}()
}

// janitor closes sessions idle for the idle timeout.
func (u *userPool) janitor() {
	defer close(u.done)
	tick := min(max(u.idle/4, 10*time.Millisecond), 5*time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-u.stop:
			return
		case <-t.C:
		}
		u.sweep()
	}
}

// sweep closes the sessions idle for at least the idle timeout.
func (u *userPool) sweep() {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	for user, s := range u.sessions {
		if len(s.inflight) == 0 && isClosed(s.ready) && now.Sub(s.lastUsed) >= u.idle {
			delete(u.sessions, user)
			u.closeSession(s)
			u.log.Debug("user identity mode: idle session closed", "user", user)
		}
	}
}

// open returns the users with a session (tests, diagnostics).
func (u *userPool) open() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]string, 0, len(u.sessions))
	for user := range u.sessions {
		out = append(out, user)
	}
	return out
}

// close closes every session, draining their writers within ctx.
func (u *userPool) close(ctx context.Context) error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	sessions := u.sessions
	u.sessions = map[string]*userSession{}
	u.mu.Unlock()
	close(u.stop)
	<-u.done
	var errs []error
	for _, s := range sessions {
		select {
		case <-s.ready:
		case <-ctx.Done():
			continue // closed by create once it finishes
		}
		if s.b != nil {
			errs = append(errs, s.b.close(ctx))
		}
	}
	waited := make(chan struct{})
	go func() { u.closing.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
	}
	return errors.Join(errs...)
}

// eachCache calls fn with the metadata cache of every open session (DDL
// through one user's session invalidates what the others cached).
func (u *userPool) eachCache(fn func(*meta.Cache)) {
	u.mu.Lock()
	caches := make([]*meta.Cache, 0, len(u.sessions))
	for _, s := range u.sessions {
		if s.b != nil {
			caches = append(caches, s.b.cache)
		}
	}
	u.mu.Unlock()
	for _, c := range caches {
		fn(c)
	}
}
