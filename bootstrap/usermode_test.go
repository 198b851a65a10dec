package bootstrap

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
)

// userModeEnv configures token authentication and identity mode user
// against a fake cluster.
func userModeEnv(addr string, extra map[string]string) map[string]string {
	env := map[string]string{
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BACKEND":                      "",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS":           addr,
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECT_TIMEOUT":              "2s",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__IDENTITY_MODE":    "user",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__ACCOUNT": "svc",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET":  "svc-secret",
		"FLUSS_GATEWAY__SECURITY__AUTHENTICATION":                       "token",
		"FLUSS_GATEWAY__SECURITY__TOKENS":                               "tok-alice-0123456789abcdef:alice,tok-bob-0123456789abcdef:bob,tok-ingest-0123456789abcdef:ingest,tok-mallory-0123456789abcdef:mallory",
		"FLUSS_GATEWAY__SECURITY__ACT_AS__ALLOWED_PRINCIPALS":           "ingest",
		"FLUSS_GATEWAY__REST__WRITE__REQUEST_TIMEOUT":                   "4s",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// TestUserModeThroughTheGateway runs the whole gateway in identity mode user
// against a fake Fluss cluster that accepts allow-listed authorization ids
// (what apache/fluss PR #3857 adds): every HTTP caller reaches Fluss as
// itself, or as its act-as target; a user the cluster will not let the
// service account impersonate is 403; a Fluss authorization failure is 403;
// a full pool answers 429 with a computed Retry-After.
func TestUserModeThroughTheGateway(t *testing.T) {
	fc, err := flussfake.NewCluster(flussfake.ClusterConfig{
		SASLUsers:     map[string]string{"svc": "svc-secret"},
		Impersonation: map[string][]string{"svc": {flussProbe, "alice", "bob", "carol"}},
	})
	require.NoError(t, err)
	defer fc.Close()

	var mu sync.Mutex
	var principals []string
	for _, s := range fc.Servers() {
		s.Control(wire.KeyListDatabases, func(ctx context.Context, r *flussfake.Request) (proto.Message, error, bool) {
			mu.Lock()
			principals = append(principals, r.Principal)
			mu.Unlock()
			if r.Principal == "carol" {
				return nil, wire.NewServerError(wire.CodeAuthorizationException,
					"Principal FlussPrincipal{name='carol', type='User'} have no authorization to operate DESCRIBE on resource Resource{type=CLUSTER}"), true
			}
			return nil, nil, false
		})
	}

	rest, logs := startSecure(t, userModeEnv(fc.BootstrapAddr(), nil))
	base := "http://" + rest.Addr().String() + "/v1/clusters/default/databases"
	c := &http.Client{Timeout: 10 * time.Second}
	auth := func(tok string, more ...string) []string {
		return append([]string{"Authorization", "Bearer " + tok}, more...)
	}

	status, _, body := send(t, c, "GET", base, auth("tok-alice-0123456789abcdef")...)
	require.Equal(t, 200, status, body)
	status, _, body = send(t, c, "GET", base, auth("tok-bob-0123456789abcdef")...)
	require.Equal(t, 200, status, body)
	status, _, body = send(t, c, "GET", base, auth("tok-ingest-0123456789abcdef", "X-Fluss-Act-As", "carol")...)
	assert.Equal(t, 403, status, body)
	assert.Contains(t, body, `"code":"unauthorized"`)
	assert.Contains(t, body, "LIST_DATABASES on the cluster denied by the Fluss cluster")
	status, _, body = send(t, c, "GET", base, auth("tok-mallory-0123456789abcdef")...)
	assert.Equal(t, 403, status, body)
	assert.Contains(t, body, `refuses the service account acting as \"mallory\"`)
	status, _, body = send(t, c, "GET", base, auth("tok-alice-0123456789abcdef", "X-Fluss-Act-As", "bob")...)
	assert.Equal(t, 403, status, "alice may not act as anyone: %s", body)

	mu.Lock()
	assert.Equal(t, []string{"alice", "bob", "carol"}, principals, "Fluss saw the caller, or its act-as target")
	mu.Unlock()
	ids := fc.Coordinator.AuthorizationIDs()
	assert.Contains(t, ids, flussProbe, "the start probe")
	assert.Contains(t, ids, "carol")
	assert.Contains(t, logs.String(), "the Fluss cluster accepts SASL authorization ids")
	assert.NotContains(t, logs.String(), "svc-secret")
}

// flussProbe is the authorization id of the user-mode start probe.
const flussProbe = "fluss-gateway-authzid-probe"

// TestUserModePoolFullIsTooManyRequests holds one user's request in flight
// in a pool of one: another user is answered 429, with a Retry-After that
// is the in-flight request's remaining time, not a constant.
func TestUserModePoolFullIsTooManyRequests(t *testing.T) {
	fc, err := flussfake.NewCluster(flussfake.ClusterConfig{
		SASLUsers:     map[string]string{"svc": "svc-secret"},
		Impersonation: map[string][]string{"svc": {"*"}},
	})
	require.NoError(t, err)
	defer fc.Close()
	hold := make(chan struct{})
	entered := make(chan struct{}, 1)
	for _, s := range fc.Servers() {
		s.Control(wire.KeyListDatabases, func(ctx context.Context, r *flussfake.Request) (proto.Message, error, bool) {
			if r.Principal == "alice" {
				entered <- struct{}{}
				select {
				case <-hold:
				case <-ctx.Done():
				}
			}
			return nil, nil, false
		})
	}
	rest, _ := startSecure(t, userModeEnv(fc.BootstrapAddr(), map[string]string{
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__MAX": "1",
		"FLUSS_GATEWAY__REST__WRITE__REQUEST_TIMEOUT":      "3s",
	}))
	base := "http://" + rest.Addr().String() + "/v1/clusters/default/databases"
	c := &http.Client{Timeout: 10 * time.Second}

	done := make(chan int, 1)
	go func() {
		status, _, _ := send(t, c, "GET", base, "Authorization", "Bearer tok-alice-0123456789abcdef")
		done <- status
	}()
	<-entered
	status, hdr, body := send(t, c, "GET", base, "Authorization", "Bearer tok-bob-0123456789abcdef")
	require.Equal(t, 429, status, body)
	assert.Contains(t, body, `"code":"resource_exhausted"`)
	assert.Contains(t, body, "per-user connection sets (connection.max) are serving requests")
	retry, err := strconv.Atoi(hdr.Get("Retry-After"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, retry, 2, "alice's request has up to 3s left")
	assert.LessOrEqual(t, retry, 3)
	close(hold)
	assert.Equal(t, 200, <-done)
	// alice's session is idle now: bob's takes its place.
	status, _, body = send(t, c, "GET", base, "Authorization", "Bearer tok-bob-0123456789abcdef")
	assert.Equal(t, 200, status, body)
}

// TestUserModeRefusedAtStart: a fake server that behaves like Fluss 0.9.1
// (no authorization ids) fails the start with the explanation.
func TestUserModeRefusedAtStart(t *testing.T) {
	fc, err := flussfake.NewCluster(flussfake.ClusterConfig{SASLUsers: map[string]string{"svc": "svc-secret"}})
	require.NoError(t, err)
	defer fc.Close()
	app := fx.New(Options(testConfig(t, userModeEnv(fc.BootstrapAddr(), map[string]string{"FLUSS_GATEWAY__METRICS__ENABLED": "false"})), discard()))
	require.NoError(t, app.Err())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = app.Start(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cluster default: identity mode `user` cannot start: the Fluss cluster does not accept SASL authorization ids")
	assert.NotContains(t, err.Error(), "svc-secret")
}
