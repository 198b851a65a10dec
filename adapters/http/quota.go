package http

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/time/rate"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/defaults"
	"github.com/fluss-gateway/fluss-gateway-go/internal/lru"
)

// Quota configures per-principal rate limits (gateway.security.quota.*).
// Zero rates are unlimited; with both zero there is no quota.
type Quota struct {
	// RequestsPerSecond and BytesPerSecond are token buckets with one second
	// of burst (and at least the largest request body for bytes), per
	// authenticated principal.
	RequestsPerSecond int
	BytesPerSecond    int64
	// PerTable gives each (principal, cluster, database, table) of the
	// table routes its own buckets; other routes stay per principal.
	PerTable bool
	// MaxPrincipals bounds the least-recently-used set of buckets
	// (default 10000). An evicted principal starts again with full buckets.
	MaxPrincipals int
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// DefaultQuotaPrincipals is the default Quota.MaxPrincipals.
const DefaultQuotaPrincipals = 10_000

// quotas holds one pair of buckets per key in an LRU. A request is never
// queued: when its tokens are not available now it is refused with 429
// `resource_exhausted` and a Retry-After of the exact delay the token bucket
// reports for its reservation (rounded up to whole seconds in the header,
// exact in the message), and the reservation is cancelled.
type quotas struct {
	cfg     Quota
	maxBody int64
	now     func() time.Time

	mu      sync.Mutex
	entries *lru.Cache[string, *quotaEntry] // at most MaxPrincipals
}

type quotaEntry struct {
	requests *rate.Limiter
	bytes    *rate.Limiter
}

func newQuotas(cfg Quota, maxBody int64) *quotas {
	if cfg.RequestsPerSecond <= 0 && cfg.BytesPerSecond <= 0 {
		return nil
	}
	cfg.MaxPrincipals = defaults.Positive(cfg.MaxPrincipals, DefaultQuotaPrincipals)
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &quotas{cfg: cfg, maxBody: maxBody, now: now, entries: lru.New[string, *quotaEntry](cfg.MaxPrincipals, nil)}
}

func (q *quotas) entry(key string) *quotaEntry {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e, ok := q.entries.Get(key); ok {
		return e
	}
	e := &quotaEntry{}
	if n := q.cfg.RequestsPerSecond; n > 0 {
		e.requests = rate.NewLimiter(rate.Limit(n), n)
	}
	if n := q.cfg.BytesPerSecond; n > 0 {
		burst := int(min(max(n, q.maxBody), math.MaxInt32))
		e.bytes = rate.NewLimiter(rate.Limit(n), burst)
	}
	q.entries.Put(key, e)
	return e
}

// admit takes one request token and n byte tokens for key, or returns how
// long until they would be available.
func (q *quotas) admit(key string, n int) time.Duration {
	e := q.entry(key)
	now := q.now()
	res, delay := reserveRequestAndBytes(now, e.requests, e.bytes, n)
	if delay > 0 {
		for _, r := range res {
			r.CancelAt(now)
		}
	}
	return delay
}

// quota is the per-route middleware; it runs after authentication.
func (a *api) quota(r routeSpec) fiber.Handler {
	if a.quotas == nil || r.open || r.public {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	perTable := a.quotas.cfg.PerTable && r.hasTable()
	return func(c *fiber.Ctx) error {
		p, _ := c.Locals(localPrincipal).(domain.Principal)
		key := "p:" + p.Name
		if perTable {
			// The decoded names the handlers use: "u%73ers" is "users"
			// and shares its budget.
			var err error
			if key, err = tableQuotaKey(c, p.Name); err != nil {
				return err
			}
		}
		size := 0
		if streamedMediaType(c) == "" {
			var err error
			if size, err = a.decodedBodySize(c, r); err != nil {
				return err
			}
		} else {
			// A streamed body pays for its bytes as they are read
			// (chargeStreamed); here only the request is counted.
			c.Locals(localQuotaKey, key)
		}
		delay := a.quotas.admit(key, size)
		if delay <= 0 {
			return c.Next()
		}
		who := "anonymous callers"
		if p.Name != "" {
			who = fmt.Sprintf("principal %q", p.Name)
		}
		scope := ""
		if perTable {
			scope = " on this table"
		}
		addLogAttrs(c, "quota_delay_ms", float64(delay.Microseconds())/1000)
		return &domain.Error{
			Kind:             domain.KindResourceExhausted,
			Retryable:        true,
			RetryAfterMillis: int64((delay + time.Millisecond - 1) / time.Millisecond),
			Message: fmt.Sprintf("quota of %s%s exceeded (%s); retry after %s",
				who, scope, a.quotas.describe(), delay.Round(time.Millisecond)),
		}
	}
}

func (q *quotas) describe() string {
	switch {
	case q.cfg.RequestsPerSecond > 0 && q.cfg.BytesPerSecond > 0:
		return fmt.Sprintf("%d requests and %d bytes per second", q.cfg.RequestsPerSecond, q.cfg.BytesPerSecond)
	case q.cfg.RequestsPerSecond > 0:
		return fmt.Sprintf("%d requests per second", q.cfg.RequestsPerSecond)
	default:
		return fmt.Sprintf("%d bytes per second", q.cfg.BytesPerSecond)
	}
}

// hasTable reports whether the route's path names a table.
func (r routeSpec) hasTable() bool { return strings.HasPrefix(r.path, pathTable) }

// tableQuotaKey is the per-table quota key of a request: the principal and
// the decoded, validated cluster, database and table names.
func tableQuotaKey(c *fiber.Ctx, principal string) (string, error) {
	key := "t:" + strconv.Quote(principal)
	for _, name := range []string{"cluster", "database", "table"} {
		v, err := pathParam(c, name)
		if err != nil {
			return "", err
		}
		if name != "cluster" {
			if verr := domain.ValidateName(name, v); verr != nil {
				return "", verr
			}
		}
		key += "/" + strconv.Quote(v)
	}
	return key, nil
}
