package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"
)

// newServer starts a fake server that answers ListTables with one table named
// after the requested database (so each answer is tied to its request).
func newServer(t *testing.T, cfg flussfake.ServerConfig) *flussfake.Server {
	t.Helper()
	s, err := flussfake.NewServer(cfg)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	s.Handle(wire.KeyListTables, flussfake.Typed(func(_ context.Context, _ *flussfake.Request, req *flusspb.ListTablesRequest) (proto.Message, error) {
		return &flusspb.ListTablesResponse{TableName: []string{"t_" + req.GetDatabaseName()}}, nil
	}))
	return s
}

func dial(t *testing.T, s *flussfake.Server, cfg rpc.ConnConfig) *rpc.Conn {
	t.Helper()
	c, err := rpc.Dial(context.Background(), s.Addr(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func listTables(ctx context.Context, c *rpc.Conn, db string) (string, error) {
	var resp flusspb.ListTablesResponse
	if err := c.Call(ctx, wire.KeyListTables, &flusspb.ListTablesRequest{DatabaseName: proto.String(db)}, &resp); err != nil {
		return "", err
	}
	if len(resp.GetTableName()) != 1 {
		return "", fmt.Errorf("want one table, got %v", resp.GetTableName())
	}
	return resp.GetTableName()[0], nil
}

func rpcErr(t *testing.T, err error) *rpc.Error {
	t.Helper()
	require.Error(t, err)
	e := rpc.AsError(err)
	require.NotNil(t, e, "want *rpc.Error, got %T: %v", err, err)
	var cl rpc.Classified
	require.True(t, errors.As(err, &cl), "every rpc error satisfies Classified")
	return e
}

func TestCallRoundTrip(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{Type: flussfake.TypeTablet})
	c := dial(t, s, rpc.ConnConfig{})
	assert.Equal(t, rpc.ServerTablet, c.ServerType())
	got, err := listTables(context.Background(), c, "db1")
	require.NoError(t, err)
	assert.Equal(t, "t_db1", got)
	assert.Equal(t, 1, s.Requests(wire.KeyAPIVersions))
	assert.Equal(t, 0, s.Requests(wire.KeyAuthenticate), "PLAINTEXT needs no Authenticate")
}

func TestVersionNegotiation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		advertise map[wire.APIKey]wire.VersionRange
		key       wire.APIKey
		want      int16
		ok        bool
	}{
		{"0.9.1 PutKv", nil, wire.KeyPutKv, 1, true},
		{"1.0 PutKv 0..2", map[wire.APIKey]wire.VersionRange{wire.KeyPutKv: {Min: 0, Max: 2}}, wire.KeyPutKv, 2, true},
		{"newer server PutKv 0..3 capped at client max", map[wire.APIKey]wire.VersionRange{wire.KeyPutKv: {Min: 0, Max: 3}}, wire.KeyPutKv, 2, true},
		{"old server PutKv 0..0", map[wire.APIKey]wire.VersionRange{wire.KeyPutKv: {Min: 0, Max: 0}}, wire.KeyPutKv, 0, true},
		{"no overlap", map[wire.APIKey]wire.VersionRange{wire.KeyPutKv: {Min: 3, Max: 4}}, wire.KeyPutKv, 0, false},
		{"not listed", nil, wire.KeyLookup, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, flussfake.ServerConfig{Versions: tc.advertise})
			s.Handle(wire.KeyPutKv, func(context.Context, *flussfake.Request) (proto.Message, error) {
				return &flusspb.PutKvResponse{}, nil
			})
			c := dial(t, s, rpc.ConnConfig{})
			v, ok := c.Version(tc.key)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, v)
			if tc.ok {
				return
			}
			// Refused locally: the server never sees it (it would not answer).
			err := c.Call(context.Background(), tc.key, &flusspb.PutKvRequest{
				Acks: proto.Int32(-1), TableId: proto.Int64(1), TimeoutMs: proto.Int32(1000),
			}, &flusspb.PutKvResponse{})
			e := rpcErr(t, err)
			assert.True(t, e.NotSent())
			assert.False(t, e.Retriable())
			assert.ErrorIs(t, err, rpc.ErrUnsupportedAPI)
			assert.Equal(t, wire.CodeUnsupportedVersion, e.Code)
			assert.Equal(t, 0, s.Requests(tc.key))
		})
	}
}

func TestVersionIsSentInHeader(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	seen := make(chan int16, 1)
	s.Handle(wire.KeyPutKv, func(_ context.Context, r *flussfake.Request) (proto.Message, error) {
		seen <- r.Header.Version
		return &flusspb.PutKvResponse{}, nil
	})
	c := dial(t, s, rpc.ConnConfig{})
	require.NoError(t, c.Call(context.Background(), wire.KeyPutKv, &flusspb.PutKvRequest{
		Acks: proto.Int32(-1), TableId: proto.Int64(1), TimeoutMs: proto.Int32(1000),
	}, &flusspb.PutKvResponse{}))
	assert.Equal(t, int16(1), <-seen)
}

func TestServerTypeCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		server flussfake.ServerConfig
		expect rpc.ServerType
		ok     bool
	}{
		{"match", flussfake.ServerConfig{Type: flussfake.TypeCoordinator}, rpc.ServerCoordinator, true},
		{"bootstrap skips check", flussfake.ServerConfig{Type: flussfake.TypeCoordinator}, rpc.ServerUnknown, true},
		{"mismatch", flussfake.ServerConfig{Type: flussfake.TypeTablet}, rpc.ServerCoordinator, false},
		{"server omits type", flussfake.ServerConfig{Type: flussfake.TypeTablet, OmitServerType: true}, rpc.ServerCoordinator, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, tc.server)
			c, err := rpc.Dial(context.Background(), s.Addr(), rpc.ConnConfig{ExpectedServerType: tc.expect})
			if tc.ok {
				require.NoError(t, err)
				_ = c.Close()
				return
			}
			e := rpcErr(t, err)
			assert.ErrorIs(t, err, rpc.ErrServerType)
			assert.True(t, e.NotSent())
			assert.True(t, e.Retriable())
			assert.True(t, e.InvalidatesMetadata())
		})
	}
}

func TestSASL(t *testing.T) {
	t.Parallel()
	users := map[string]string{"alice": "alice-secret"}
	tests := []struct {
		name     string
		listener map[string]string
		sasl     *rpc.SASLConfig
		wantAuth bool   // dial fails with an authentication error
		contains string // in the error message
	}{
		{"ok", users, &rpc.SASLConfig{Username: "alice", Password: "alice-secret"}, false, ""},
		{"authzid equal to user", users, &rpc.SASLConfig{Username: "alice", Password: "alice-secret", AuthorizationID: "alice"}, false, ""},
		{"wrong password", users, &rpc.SASLConfig{Username: "alice", Password: "nope"}, true, "Invalid username or password"},
		{"unknown user", users, &rpc.SASLConfig{Username: "mallory", Password: "x"}, true, "Invalid username or password"},
		{"impersonation refused", users, &rpc.SASLConfig{Username: "alice", Password: "alice-secret", AuthorizationID: "bob"}, true, "authorization id"},
		{"SASL against PLAINTEXT listener", nil, &rpc.SASLConfig{Username: "alice", Password: "alice-secret"}, true, "PLAINTEXT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, flussfake.ServerConfig{SASLUsers: tc.listener})
			c, err := rpc.Dial(context.Background(), s.Addr(), rpc.ConnConfig{SASL: tc.sasl})
			if !tc.wantAuth {
				require.NoError(t, err)
				defer c.Close()
				_, err = listTables(context.Background(), c, "x")
				require.NoError(t, err)
				return
			}
			e := rpcErr(t, err)
			assert.True(t, rpc.IsAuthentication(err))
			assert.Equal(t, wire.CodeAuthenticateException, e.Code)
			assert.True(t, e.NotSent())
			assert.False(t, e.Retriable())
			assert.Contains(t, err.Error(), "authentication failed")
			assert.Contains(t, err.Error(), tc.contains)
			assert.NotContains(t, err.Error(), tc.sasl.Password, "never echo the password")
		})
	}
}

func TestSASLRequiredButNotConfigured(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{SASLUsers: map[string]string{"alice": "pw"}})
	c := dial(t, s, rpc.ConnConfig{})
	_, err := listTables(context.Background(), c, "x")
	e := rpcErr(t, err)
	assert.Equal(t, rpc.Answered, e.Outcome)
	assert.True(t, rpc.IsAuthentication(err))
}

func TestSASLConfigValidation(t *testing.T) {
	t.Parallel()
	_, err := rpc.Dial(context.Background(), "127.0.0.1:1", rpc.ConnConfig{SASL: &rpc.SASLConfig{Username: "a"}})
	assert.True(t, rpc.IsAuthentication(err))
	_, err = rpc.Dial(context.Background(), "127.0.0.1:1", rpc.ConnConfig{SASL: &rpc.SASLConfig{Mechanism: "SCRAM-SHA-256", Username: "a", Password: "b"}})
	assert.True(t, rpc.IsAuthentication(err))
}

func TestRetriableAuthenticationIsRetried(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{SASLUsers: map[string]string{"alice": "pw"}, RetriableAuthFailures: 2})
	start := time.Now()
	c := dial(t, s, rpc.ConnConfig{SASL: &rpc.SASLConfig{Username: "alice", Password: "pw"}})
	assert.Equal(t, 3, s.Requests(wire.KeyAuthenticate))
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "100 ms then 200 ms backoff")
	_, err := listTables(context.Background(), c, "x")
	require.NoError(t, err)
}

func TestPipeliningOutOfOrder(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	const n = 8
	release := make(map[string]chan struct{}, n)
	var mu sync.Mutex
	ids := make(map[int32]bool)
	arrived := make(chan string, n)
	for i := range n {
		release[fmt.Sprintf("db%d", i)] = make(chan struct{})
	}
	s.Control(wire.KeyListTables, func(ctx context.Context, r *flussfake.Request) (proto.Message, error, bool) {
		var req flusspb.ListTablesRequest
		if err := proto.Unmarshal(r.Body, &req); err != nil {
			return nil, flussfake.ErrDrop, true
		}
		mu.Lock()
		ids[r.Header.RequestID] = true
		mu.Unlock()
		arrived <- req.GetDatabaseName()
		select {
		case <-release[req.GetDatabaseName()]:
		case <-ctx.Done():
		}
		return &flusspb.ListTablesResponse{TableName: []string{"t_" + req.GetDatabaseName()}}, nil, true
	})
	c := dial(t, s, rpc.ConnConfig{RequestTimeout: 10 * time.Second})

	var wg sync.WaitGroup
	results := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = listTables(context.Background(), c, fmt.Sprintf("db%d", i))
		}()
	}
	// All n requests are in flight on one connection at once...
	for range n {
		select {
		case <-arrived:
		case <-time.After(5 * time.Second):
			t.Fatal("requests were not pipelined")
		}
	}
	// ...and are answered in reverse order.
	for i := n - 1; i >= 0; i-- {
		close(release[fmt.Sprintf("db%d", i)])
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, fmt.Sprintf("t_db%d", i), results[i])
	}
	assert.Len(t, ids, n, "distinct request ids")
	assert.Equal(t, 1, s.Connections())
}

func TestTimeoutOnDroppedRequest(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	s.ControlOnce(wire.KeyListTables, func(context.Context, *flussfake.Request) (proto.Message, error, bool) {
		return nil, flussfake.ErrDrop, true
	})
	c := dial(t, s, rpc.ConnConfig{RequestTimeout: 150 * time.Millisecond})
	start := time.Now()
	_, err := listTables(context.Background(), c, "a")
	e := rpcErr(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
	assert.True(t, e.Ambiguous())
	assert.True(t, e.Retriable())
	assert.ErrorIs(t, err, rpc.ErrTimeout)
	assert.Equal(t, wire.CodeRequestTimeOut, e.Code)

	// The connection survives a silent drop.
	got, err := listTables(context.Background(), c, "b")
	require.NoError(t, err)
	assert.Equal(t, "t_b", got)
}

func TestLateResponseIsDiscarded(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	s.ControlOnce(wire.KeyListTables, func(context.Context, *flussfake.Request) (proto.Message, error, bool) {
		time.Sleep(300 * time.Millisecond)
		return &flusspb.ListTablesResponse{TableName: []string{"late"}}, nil, true
	})
	c := dial(t, s, rpc.ConnConfig{RequestTimeout: 100 * time.Millisecond})
	_, err := listTables(context.Background(), c, "a")
	require.ErrorIs(t, err, rpc.ErrTimeout)

	time.Sleep(300 * time.Millisecond) // the late answer arrives and is dropped
	c2 := c
	got, err := listTables(context.Background(), c2, "b")
	require.NoError(t, err)
	assert.Equal(t, "t_b", got)
}

func TestContextCancellation(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	s.Control(wire.KeyListTables, func(ctx context.Context, _ *flussfake.Request) (proto.Message, error, bool) {
		<-ctx.Done()
		return nil, flussfake.ErrDrop, true
	})
	c := dial(t, s, rpc.ConnConfig{})

	t.Run("before send", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := listTables(ctx, c, "a")
		e := rpcErr(t, err)
		assert.True(t, e.NotSent())
		assert.False(t, e.Retriable())
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := listTables(ctx, c, "a")
		e := rpcErr(t, err)
		assert.True(t, e.Ambiguous())
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := listTables(ctx, c, "a")
		e := rpcErr(t, err)
		assert.True(t, e.Ambiguous())
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, wire.CodeRequestTimeOut, e.Code)
	})
	assert.Nil(t, c.Err(), "cancellation does not kill the connection")
}

func TestErrorResponse(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	s.ControlOnce(wire.KeyListTables, func(context.Context, *flussfake.Request) (proto.Message, error, bool) {
		return nil, wire.NewServerError(wire.CodeDatabaseNotExist, "Database a does not exist."), true
	})
	s.ControlOnce(wire.KeyListTables, func(context.Context, *flussfake.Request) (proto.Message, error, bool) {
		return nil, wire.NewServerError(wire.CodeNotLeaderOrFollower, ""), true
	})
	c := dial(t, s, rpc.ConnConfig{})

	_, err := listTables(context.Background(), c, "a")
	e := rpcErr(t, err)
	assert.Equal(t, rpc.Answered, e.Outcome)
	assert.Equal(t, wire.CodeDatabaseNotExist, e.Code)
	assert.Equal(t, "Database a does not exist.", e.Message)
	assert.False(t, e.Retriable())
	assert.ErrorIs(t, err, &wire.ServerError{Code: wire.CodeDatabaseNotExist})
	code, ok := rpc.CodeOf(err)
	assert.True(t, ok)
	assert.Equal(t, wire.CodeDatabaseNotExist, code)
	assert.Equal(t, int32(4), e.FlussErrorCode())

	_, err = listTables(context.Background(), c, "a")
	e = rpcErr(t, err)
	assert.Equal(t, wire.CodeNotLeaderOrFollower, e.Code)
	assert.True(t, e.Retriable())
	assert.True(t, e.InvalidatesMetadata())
	assert.Equal(t, wire.CodeNotLeaderOrFollower.Description(), e.Message, "default text when the server sends none")

	assert.Nil(t, c.Err(), "ERROR_RESPONSE leaves the connection usable")
}

func TestServerFailureFailsEverythingInFlight(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	blocked := make(chan struct{})
	s.Control(wire.KeyListTables, func(ctx context.Context, r *flussfake.Request) (proto.Message, error, bool) {
		var req flusspb.ListTablesRequest
		_ = proto.Unmarshal(r.Body, &req)
		switch req.GetDatabaseName() {
		case "wait":
			close(blocked)
			<-ctx.Done()
			return nil, flussfake.ErrDrop, true
		case "boom":
			return nil, &flussfake.ServerFailure{Code: wire.CodeCorruptMessage, Message: "pipeline broke"}, true
		}
		return nil, nil, false
	})
	c := dial(t, s, rpc.ConnConfig{RequestTimeout: 10 * time.Second})

	waitErr := make(chan error, 1)
	go func() {
		_, err := listTables(context.Background(), c, "wait")
		waitErr <- err
	}()
	<-blocked
	_, err := listTables(context.Background(), c, "boom")
	e := rpcErr(t, err)
	assert.True(t, e.Ambiguous())
	assert.True(t, e.Retriable())
	assert.Equal(t, wire.CodeCorruptMessage, e.Code)
	assert.Contains(t, e.Error(), "pipeline broke")

	select {
	case err := <-waitErr:
		e := rpcErr(t, err)
		assert.True(t, e.Ambiguous())
		assert.Equal(t, wire.CodeCorruptMessage, e.Code)
	case <-time.After(5 * time.Second):
		t.Fatal("in-flight request not failed by SERVER_FAILURE")
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("connection not closed")
	}

	_, err = listTables(context.Background(), c, "later")
	e = rpcErr(t, err)
	assert.True(t, e.NotSent(), "a dead connection sends nothing")
	assert.True(t, e.Retriable())
}

func TestConnectionLossFailsInFlightWithNetworkError(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	s.ControlOnce(wire.KeyListTables, func(context.Context, *flussfake.Request) (proto.Message, error, bool) {
		return nil, flussfake.ErrCloseConn, true
	})
	c := dial(t, s, rpc.ConnConfig{})
	_, err := listTables(context.Background(), c, "a")
	e := rpcErr(t, err)
	assert.True(t, e.Ambiguous())
	assert.True(t, e.Retriable())
	assert.Equal(t, wire.CodeNetworkException, e.Code)
	assert.True(t, e.InvalidatesMetadata())
	<-c.Done()
}

func TestClientCloseFailsInFlight(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	arrived := make(chan struct{})
	s.Control(wire.KeyListTables, func(ctx context.Context, _ *flussfake.Request) (proto.Message, error, bool) {
		close(arrived)
		<-ctx.Done()
		return nil, flussfake.ErrDrop, true
	})
	c, err := rpc.Dial(context.Background(), s.Addr(), rpc.ConnConfig{})
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() { _, err := listTables(context.Background(), c, "a"); errc <- err }()
	<-arrived
	require.NoError(t, c.Close())
	err = <-errc
	e := rpcErr(t, err)
	assert.True(t, e.Ambiguous())
	assert.ErrorIs(t, err, rpc.ErrClosed)
	assert.False(t, e.Retriable())
}

func TestDialFailure(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	_, err = rpc.Dial(context.Background(), addr, rpc.ConnConfig{DialTimeout: time.Second})
	e := rpcErr(t, err)
	assert.True(t, e.NotSent())
	assert.True(t, e.Retriable())
	assert.Equal(t, wire.CodeNetworkException, e.Code)
}

func TestHandshakeTimeout(t *testing.T) {
	t.Parallel()
	// A listener that accepts but never answers ApiVersions.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = nc.Close() })
		}
	}()
	_, err = rpc.Dial(context.Background(), ln.Addr().String(), rpc.ConnConfig{DialTimeout: 100 * time.Millisecond})
	e := rpcErr(t, err)
	assert.True(t, e.NotSent())
	assert.True(t, e.Retriable())
	assert.ErrorIs(t, err, rpc.ErrTimeout)
}

func TestMissingRequiredFieldIsNotSent(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	c := dial(t, s, rpc.ConnConfig{})
	err := c.Call(context.Background(), wire.KeyListTables, &flusspb.ListTablesRequest{}, &flusspb.ListTablesResponse{})
	e := rpcErr(t, err)
	assert.True(t, e.NotSent())
	assert.False(t, e.Retriable())
	assert.Equal(t, 0, s.Requests(wire.KeyListTables))
	assert.Nil(t, c.Err())
}

func TestUndecodableResponse(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	c := dial(t, s, rpc.ConnConfig{})
	// The server answers ListTables; decoding that as DatabaseExistsResponse
	// misses its required field 1 (a bool).
	var resp flusspb.DatabaseExistsResponse
	err := c.Call(context.Background(), wire.KeyListTables, &flusspb.ListTablesRequest{DatabaseName: proto.String("a")}, &resp)
	e := rpcErr(t, err)
	assert.True(t, e.Ambiguous())
	assert.False(t, e.Retriable())
	assert.ErrorIs(t, err, rpc.ErrProtocol)
	assert.Nil(t, c.Err(), "one bad body does not desynchronise the stream")
}

func TestResponseFrameLimit(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	s.ControlOnce(wire.KeyListTables, func(context.Context, *flussfake.Request) (proto.Message, error, bool) {
		return &flusspb.ListTablesResponse{TableName: []string{string(make([]byte, 4096))}}, nil, true
	})
	c := dial(t, s, rpc.ConnConfig{MaxResponseFrameSize: 1024})
	_, err := listTables(context.Background(), c, "a")
	e := rpcErr(t, err)
	assert.True(t, e.Ambiguous())
	assert.ErrorIs(t, err, rpc.ErrProtocol)
	assert.ErrorIs(t, err, wire.ErrFrameTooLarge)
	<-c.Done()
}

type recorder struct {
	mu       sync.Mutex
	connects []error
	requests []string
	discon   int
}

func (r *recorder) OnFlussConnect(_ string, _ time.Duration, err error) {
	r.mu.Lock()
	r.connects = append(r.connects, err)
	r.mu.Unlock()
}

func (r *recorder) OnFlussRequest(_ context.Context, _ string, api string, version int16, reqB, respB int, _ time.Duration, err error) {
	r.mu.Lock()
	r.requests = append(r.requests, fmt.Sprintf("%s v%d %t %t %v", api, version, reqB > 0, respB > 0, err == nil))
	r.mu.Unlock()
}

func (r *recorder) OnFlussDisconnect(string, error) {
	r.mu.Lock()
	r.discon++
	r.mu.Unlock()
}

func TestHooks(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{})
	rec := &recorder{}
	c, err := rpc.Dial(context.Background(), s.Addr(), rpc.ConnConfig{Hooks: []any{rec, "not a hook"}})
	require.NoError(t, err)
	_, err = listTables(context.Background(), c, "a")
	require.NoError(t, err)
	_ = c.Call(context.Background(), wire.KeyLookup, &flusspb.LookupRequest{TableId: proto.Int64(1)}, &flusspb.LookupResponse{})
	require.NoError(t, c.Close())

	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, []error{nil}, rec.connects)
	assert.Equal(t, []string{"LIST_TABLES v0 true true true", "LOOKUP v0 false false false"}, rec.requests)
	assert.Equal(t, 1, rec.discon)
}

// silentServer accepts connections and never answers: a dial to it hangs in
// the handshake until it is canceled or times out.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// Client.Close cancels a dial that its caller gave up on and waits for it:
// no goroutine is left waiting for the dial timeout. Not parallel, so that
// the leak check sees only this test's goroutines.
func TestClientCloseEndsDials(t *testing.T) {
	before := goleak.IgnoreCurrent()
	addr := silentServer(t)
	c, err := rpc.NewClient(rpc.Config{BootstrapServers: []string{addr}, DialTimeout: time.Hour, MetadataAttempts: 1})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err = c.Metadata(ctx, &flusspb.MetadataRequest{})
	require.Error(t, err)
	start := time.Now()
	require.NoError(t, c.Close())
	assert.Less(t, time.Since(start), 5*time.Second)
	goleak.VerifyNone(t, before, goleak.IgnoreAnyFunction("github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc_test.silentServer.func1"))
}

// readers counts the goroutines running a connection's reader loop.
func readers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "rpc.(*Conn).readLoop(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// Conn.Close returns only once the connection's reader goroutine has ended
// (checked at once, not after a grace period). Not parallel: the count
// must see no other test's connections.
func TestConnCloseEndsReader(t *testing.T) {
	base := readers()
	s := newServer(t, flussfake.ServerConfig{})
	conn, err := rpc.Dial(context.Background(), s.Addr(), rpc.ConnConfig{})
	require.NoError(t, err)
	require.Equal(t, base+1, readers())
	require.NoError(t, conn.Close())
	assert.LessOrEqual(t, readers(), base)
}
