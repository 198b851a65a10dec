package http

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

var (
	errNoCreds  = errors.New("no credentials")
	errBadCreds = errors.New("bad credentials")
)

// bearerIdentity accepts "Bearer tok-<name>" as <name>, resolves an act-as
// header for "ingest" only and knows its challenges, like the identity
// adapter's token method wrapped with act-as.
type bearerIdentity struct{}

func (bearerIdentity) Authenticate(_ context.Context, c domain.Credentials) (domain.Principal, error) {
	v := c.Header("Authorization")
	if v == "" {
		return domain.Principal{}, &domain.Error{Kind: domain.KindUnauthenticated, Message: "missing Bearer credentials", Cause: errNoCreds}
	}
	name, ok := strings.CutPrefix(v, "Bearer tok-")
	if !ok {
		return domain.Principal{}, &domain.Error{Kind: domain.KindUnauthenticated, Message: "invalid bearer token", Cause: errBadCreds}
	}
	p := domain.Principal{Name: name, Method: "token"}
	if target := c.Header("X-Fluss-Act-As"); target != "" && target != name {
		if name != "ingest" {
			return domain.Principal{}, domain.Errorf(domain.KindUnauthorized, "principal %q may not act as another principal", name)
		}
		p.ActAs = target
	}
	return p, nil
}

func (bearerIdentity) ChallengeFor(err error) string {
	switch {
	case errors.Is(err, errBadCreds):
		return `Bearer realm="t", error="invalid_token"`
	default:
		return `Bearer realm="t"`
	}
}

func bearer(name string) []string { return []string{"Authorization", "Bearer tok-" + name} }

// withTablesAs is withTables with credentials.
func (g *gateway) withTablesAs(headers ...string) *gateway {
	g.t.Helper()
	for _, c := range []struct{ path, body string }{
		{db, `{"database":"d"}`},
		{db + "/d/tables", usersTable},
		{db + "/d/tables", eventsTable},
	} {
		r := g.call("POST", c.path, c.body, headers...)
		require.Equal(g.t, 201, r.status, string(r.body))
	}
	return g
}

// testClock is a settable clock; while auto, every reading advances it by
// 10s (so that set-up requests never hit a quota).
type testClock struct {
	mu   sync.Mutex
	now  time.Time
	auto bool
}

func newTestClock() *testClock { return &testClock{now: time.Unix(1_700_000_000, 0), auto: true} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.auto {
		c.now = c.now.Add(10 * time.Second)
	}
	return c.now
}

func (c *testClock) freeze() { c.mu.Lock(); c.auto = false; c.mu.Unlock() }

func (c *testClock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func TestAuthenticationAnswersAndLogs(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withIdentity(bearerIdentity{})).withTablesAs(bearer("admin")...)

	r := g.call("GET", db, "")
	require.Equal(t, 401, r.status)
	assert.Equal(t, "unauthenticated", r.errorCode(t))
	assert.Equal(t, `Bearer realm="t"`, r.header.Get("WWW-Authenticate"))

	r = g.call("GET", db, "", "Authorization", "Basic c2VjcmV0LXZhbHVl")
	require.Equal(t, 401, r.status)
	assert.Equal(t, `Bearer realm="t", error="invalid_token"`, r.header.Get("WWW-Authenticate"))

	r = g.call("GET", db, "", bearer("alice")...)
	require.Equal(t, 200, r.status, string(r.body))
	assert.Empty(t, r.header.Get("WWW-Authenticate"))

	// Act-as: allowed for ingest, 403 for others.
	r = g.call("GET", db, "", append(bearer("alice"), "X-Fluss-Act-As", "bob")...)
	require.Equal(t, 403, r.status)
	assert.Equal(t, "unauthorized", r.errorCode(t))
	assert.Empty(t, r.header.Get("WWW-Authenticate"), "a 403 carries no challenge")
	r = g.call("GET", db, "", append(bearer("ingest"), "X-Fluss-Act-As", "bob")...)
	require.Equal(t, 200, r.status)

	// Probes and the document stay open.
	assert.Equal(t, 200, g.call("GET", "/health", "").status)
	assert.Equal(t, 200, g.call("GET", "/v1/openapi.json", "").status)

	logs := g.logs.String()
	assert.NotContains(t, logs, "c2VjcmV0LXZhbHVl", "credentials are never logged")
	assert.NotContains(t, logs, "tok-alice")
	var seen []string
	for _, rec := range testlog.Records(t, logs, "request") {
		if rec["route"] != "/v1/clusters/{cluster}/databases" {
			continue
		}
		s := strings.Join([]string{stringAttr(rec, "principal"), stringAttr(rec, "act_as"), stringAttr(rec, "auth_error")}, "|")
		seen = append(seen, s)
	}
	assert.Contains(t, seen, "alice||")
	assert.Contains(t, seen, "ingest|bob|")
	assert.Contains(t, seen, "||missing Bearer credentials")
	assert.Contains(t, seen, "||invalid bearer token")
}

func stringAttr(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// TestPrincipalReachesTheUseCases checks that the principal and its act-as
// target travel in the request context down to the data ports, and that
// an authentication failure reaches no port.
func TestPrincipalReachesTheUseCases(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withIdentity(bearerIdentity{})).withTablesAs(bearer("admin")...)
	var mu sync.Mutex
	var got []domain.Principal
	g.writer.set(func(ctx context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		p, ok := domain.PrincipalFromContext(ctx)
		require.True(t, ok)
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
		return make([]domain.EntryResult, len(b.Entries)), nil
	})
	r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1)), append(bearer("ingest"), "X-Fluss-Act-As", "carol")...)
	require.Equal(t, 200, r.status, string(r.body))
	require.Equal(t, 401, g.call("POST", usersWrite, entries(upsert("a", "eu", 1))).status)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []domain.Principal{{Name: "ingest", Method: "token", ActAs: "carol"}}, got)
	assert.Equal(t, "carol", got[0].FlussPrincipal())
}

func withQuota(q Quota) gatewayOption {
	return func(o *Options, _ *Deps) { o.Quota = q }
}

func TestQuotaPerPrincipal(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	g := newGateway(t, withIdentity(bearerIdentity{}), withQuota(Quota{RequestsPerSecond: 2, Now: clock}))

	// An unauthenticated request costs no token.
	require.Equal(t, 401, g.call("GET", db, "").status)
	require.Equal(t, 200, g.call("GET", db, "", bearer("alice")...).status)
	require.Equal(t, 200, g.call("GET", "/v1/clusters", "", bearer("alice")...).status)
	r := g.call("GET", db, "", bearer("alice")...)
	require.Equal(t, 429, r.status)
	assert.Equal(t, "resource_exhausted", r.errorCode(t))
	// 2 tokens per second: the third request of the same instant is due in
	// exactly 500ms.
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	assert.Contains(t, r.message(t), `quota of principal "alice" exceeded (2 requests per second); retry after 500ms`)
	assert.Equal(t, 200, g.call("GET", db, "", bearer("bob")...).status, "bob has his own bucket")

	// The refused reservation was cancelled: after 500ms one token is back.
	advance(499 * time.Millisecond)
	r = g.call("GET", db, "", bearer("alice")...)
	require.Equal(t, 429, r.status)
	assert.Contains(t, r.message(t), "retry after 1ms")
	advance(time.Millisecond)
	require.Equal(t, 200, g.call("GET", db, "", bearer("alice")...).status)

	// Probes are never limited.
	for i := 0; i < 5; i++ {
		require.Equal(t, 200, g.call("GET", "/health", "").status)
	}
}

func TestQuotaBytesAndPerTable(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	g := newGateway(t, withQuota(Quota{BytesPerSecond: 1000, Now: clock.Now})).withTables()
	clock.freeze()
	clock.advance(20 * time.Second) // the buckets refill after set-up
	body := entries(upsert("a", "eu", 1))
	// The bucket holds a burst of the largest body.
	available := testMaxBody
	var r response
	for i := 0; i < 1000; i++ {
		r = g.call("POST", usersWrite, body)
		if r.status != 200 {
			break
		}
		available -= len(body)
	}
	require.Equal(t, 429, r.status, string(r.body))
	want := time.Duration(len(body)-available) * time.Second / 1000
	assert.Contains(t, r.message(t), "quota of anonymous callers exceeded (1000 bytes per second); retry after "+want.Round(time.Millisecond).String())
	wantHeader := (want + time.Second - 1) / time.Second
	assert.Equal(t, strconv.Itoa(int(wantHeader)), r.header.Get("Retry-After"))

	clock = newTestClock()
	pt := newGateway(t, withQuota(Quota{RequestsPerSecond: 1, PerTable: true, Now: clock.Now})).withTables()
	clock.freeze()
	clock.advance(20 * time.Second)
	require.Equal(t, 200, pt.call("POST", usersWrite, body).status)
	require.Equal(t, 200, pt.call("POST", eventsWrite, `{"entries":[{"id":"x","append":{"ts":1,"msg":"m"}}]}`).status,
		"another table has its own bucket")
	r = pt.call("POST", usersWrite, body)
	require.Equal(t, 429, r.status)
	assert.Contains(t, r.message(t), "on this table")
	// Routes without a table share the principal's bucket.
	require.Equal(t, 200, pt.call("GET", db, "").status)
	require.Equal(t, 429, pt.call("GET", "/v1/clusters", "").status)
}

func withAuditLogger(l *slog.Logger) gatewayOption {
	return func(o *Options, _ *Deps) { o.AuditLogger = l }
}

func TestAuditLogOfWrites(t *testing.T) {
	t.Parallel()
	audit := &testlog.Buffer{}
	g := newGateway(t, withIdentity(bearerIdentity{}), withAuditLogger(slog.New(slog.NewJSONHandler(audit, nil)))).withTablesAs(bearer("admin")...)
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		out := make([]domain.EntryResult, len(b.Entries))
		if len(out) > 1 {
			out[1] = domain.EntryResult{Code: "timeout", Message: "m", Retryable: true, Applied: domain.AppliedUnknown}
		}
		return out, nil
	})
	r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1), upsert("b", "eu", 2), upsert("c", "eu", 3)),
		append(bearer("ingest"), "X-Fluss-Act-As", "carol", HeaderRequestID, "00000000-0000-4000-8000-000000000001")...)
	require.Equal(t, 200, r.status, string(r.body))
	require.Equal(t, 401, g.call("POST", usersWrite, entries(upsert("a", "eu", 1)), HeaderRequestID, "00000000-0000-4000-8000-000000000002").status)
	require.Equal(t, 400, g.call("POST", usersWrite, `{"entries":[{"id":"x"}]}`, append(bearer("alice"), HeaderRequestID, "00000000-0000-4000-8000-000000000003")...).status)
	// Reads are not audited; the set-up's DDL is (event ddl, authorize.go).
	require.Equal(t, 200, g.call("GET", db, "", bearer("alice")...).status)

	var recs []map[string]any
	ddl := 0
	for _, r := range testlog.Records(t, audit.String(), AuditMessage) {
		switch r["event"] {
		case "write":
			recs = append(recs, r)
		case "ddl":
			ddl++
		}
	}
	assert.Equal(t, 3, ddl, "one database and two tables created")
	require.Len(t, recs, 3, audit.String())
	ok := recs[0]
	assert.Equal(t, "write", ok["event"])
	assert.Equal(t, "00000000-0000-4000-8000-000000000001", ok["request_id"])
	assert.Equal(t, true, ok["authenticated"])
	assert.Equal(t, "ingest", ok["principal"])
	assert.Equal(t, "token", ok["auth_method"])
	assert.Equal(t, "carol", ok["act_as"])
	assert.Equal(t, "default", ok["cluster"])
	assert.Equal(t, "d.users", ok["table"])
	assert.Equal(t, float64(200), ok["status"])
	assert.Equal(t, float64(3), ok["entries"])
	assert.Equal(t, float64(2), ok["succeeded"])
	assert.Equal(t, float64(1), ok["failed"])
	assert.Equal(t, float64(1), ok["applied_unknown"])
	assert.Equal(t, map[string]any{"timeout": float64(1)}, ok["failed_by_code"])

	unauth := recs[1]
	assert.Equal(t, "00000000-0000-4000-8000-000000000002", unauth["request_id"])
	assert.Equal(t, false, unauth["authenticated"])
	assert.Equal(t, float64(401), unauth["status"])
	assert.Equal(t, "unauthenticated", unauth["error_code"])
	assert.Nil(t, unauth["principal"])

	bad := recs[2]
	assert.Equal(t, float64(400), bad["status"])
	assert.Equal(t, "invalid_argument", bad["error_code"])
	assert.Nil(t, bad["entries"], "no verdicts for a refused request")

	assert.Empty(t, testlog.Records(t, g.logs.String(), AuditMessage), "audit records go to the audit logger only")
	assert.NotContains(t, audit.String(), "tok-", "no credential in the audit log")

	// Without an AuditLogger, the records go to the main logger tagged logger=audit.
	d := newGateway(t).withTables()
	require.Equal(t, 200, d.call("POST", usersWrite, entries(upsert("a", "eu", 1))).status)
	recs = testlog.Records(t, d.logs.String(), AuditMessage)
	require.Len(t, recs, 4, "three DDL set-up records and the write")
	recs = recs[3:]
	assert.Equal(t, AuditLoggerName, recs[0]["logger"])
	assert.Equal(t, "anonymous", recs[0]["principal"], "trust mode: named as the start log names it")
	assert.Equal(t, "trust", recs[0]["auth_method"])
	access := testlog.Records(t, d.logs.String(), "request")
	require.NotEmpty(t, access)
	assert.Equal(t, "anonymous", access[len(access)-1]["principal"], "the access log names the trust principal the same way")
}

func TestWriteDeniedByTheClusterIsForbidden(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	denied := domain.EntryResult{Code: "unauthorized", Message: "No WRITE permission on table d.users", Applied: domain.AppliedNo}
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		out := make([]domain.EntryResult, len(b.Entries))
		for i := range out {
			out[i] = denied
		}
		return out, nil
	})
	r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1), upsert("b", "eu", 2)))
	require.Equal(t, 403, r.status, string(r.body))
	assert.Equal(t, "unauthorized", r.errorCode(t))
	assert.Equal(t, "write to table `d.users` denied by the Fluss cluster for all 2 entries; nothing was written: No WRITE permission on table d.users", r.message(t))

	// Partly denied: per-entry verdicts.
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		out := make([]domain.EntryResult, len(b.Entries))
		out[0] = denied
		return out, nil
	})
	r = g.call("POST", usersWrite, entries(upsert("a", "eu", 1), upsert("b", "eu", 2)))
	require.Equal(t, 200, r.status, string(r.body))
	assert.Contains(t, string(r.body), `"error_code":"unauthorized"`)
}
