package identity

import (
	"container/list"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Defaults of the failed-login throttle of password mode.
const (
	DefaultMaxFailedLogins   = 10
	DefaultFailedLoginWindow = time.Minute
	// maxThrottledKeys bounds the remembered addresses and user names; the
	// least recently failed are forgotten first.
	maxThrottledKeys = 10_000
)

// loginThrottle limits failed password logins per source address and per
// user name: each has a token bucket of max failures refilled over window.
// While either bucket of a request is empty the request is refused with 429
// resource_exhausted before any bcrypt work, valid credentials included
// (otherwise a correct guess would still be recognisable).
type loginThrottle struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	lru   list.List // of *throttleEntry, most recent first
	items map[string]*list.Element
}

type throttleEntry struct {
	key string
	lim *rate.Limiter
}

func newLoginThrottle(max int, window time.Duration) *loginThrottle {
	if max <= 0 || window <= 0 {
		return nil
	}
	return &loginThrottle{max: max, window: window, now: time.Now, items: map[string]*list.Element{}}
}

func (t *loginThrottle) limiter(key string, create bool) *rate.Limiter {
	if el, ok := t.items[key]; ok {
		t.lru.MoveToFront(el)
		return el.Value.(*throttleEntry).lim
	}
	if !create {
		return nil
	}
	lim := rate.NewLimiter(rate.Every(t.window/time.Duration(t.max)), t.max)
	t.items[key] = t.lru.PushFront(&throttleEntry{key: key, lim: lim})
	for t.lru.Len() > maxThrottledKeys {
		old := t.lru.Remove(t.lru.Back()).(*throttleEntry)
		delete(t.items, old.key)
	}
	return lim
}

// check refuses a login attempt from addr for user while one of their
// buckets is empty.
func (t *loginThrottle) check(addr, user string) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	var wait time.Duration
	for _, key := range []string{"a:" + addr, "u:" + user} {
		lim := t.limiter(key, false)
		if lim == nil || lim.TokensAt(now) >= 1 {
			continue
		}
		r := lim.ReserveN(now, 1)
		wait = max(wait, r.DelayFrom(now))
		r.CancelAt(now)
	}
	if wait <= 0 {
		return nil
	}
	return &domain.Error{
		Kind:             domain.KindResourceExhausted,
		Retryable:        true,
		RetryAfterMillis: int64((wait + time.Millisecond - 1) / time.Millisecond),
		Message: fmt.Sprintf("too many failed logins from this address or for this user name (%d per %s); retry after %s",
			t.max, t.window, wait.Round(time.Second)),
	}
}

// failed records a failed attempt.
func (t *loginThrottle) failed(addr, user string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, key := range []string{"a:" + addr, "u:" + user} {
		t.limiter(key, true).AllowN(now, 1)
	}
}
