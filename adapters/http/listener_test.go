package http

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	nethttp "net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

// failingListener fails its first n accepts with err, then accepts from the
// real listener.
type failingListener struct {
	net.Listener
	mu  sync.Mutex
	n   int
	err error
}

func (f *failingListener) Accept() (net.Conn, error) {
	f.mu.Lock()
	if f.n > 0 {
		f.n--
		f.mu.Unlock()
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", f.err)}
	}
	f.mu.Unlock()
	return f.Listener.Accept()
}

func loopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln
}

// Finding "the REST listener stops accepting forever" on EMFILE: the guard
// retries with a backoff, counts and logs the failures, and /ready answers
// 503 while they last.
func TestGuardedListenerSurvivesEMFILE(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ln := loopback(t)
	ready := NewReadiness()
	ready.SetServing()
	var logs testlog.Buffer
	fl := &failingListener{Listener: ln, n: 8, err: syscall.EMFILE}
	g := GuardListener(fl, ListenerLimits{Readiness: ready, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer g.Close()

	sawNotReady := make(chan bool, 1)
	go func() {
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if !ready.Ready() {
				sawNotReady <- true
				return
			}
			time.Sleep(time.Millisecond)
		}
		sawNotReady <- false
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	c, err := g.Accept()
	require.NoError(t, err, "accept errors are retried, never returned")
	defer c.Close()
	assert.True(t, <-sawNotReady, "/ready failed while accepting failed")
	assert.True(t, ready.Ready(), "ready again once a connection was accepted")
	assert.Equal(t, int64(8), g.AcceptFailures())
	assert.Contains(t, logs.String(), "cannot accept connections")
	assert.Contains(t, logs.String(), "descriptor_limit=true")
	assert.Contains(t, logs.String(), "accepts connections again")
}

func TestGuardedListenerCloseEndsAcceptAndBackoff(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ln := loopback(t)
	g := GuardListener(&failingListener{Listener: ln, n: 1 << 30, err: syscall.EMFILE}, ListenerLimits{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	done := make(chan error, 1)
	go func() { _, err := g.Accept(); done <- err }()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, g.Close())
	select {
	case err := <-done:
		assert.True(t, errors.Is(err, net.ErrClosed), "%v", err)
	case <-time.After(2 * time.Second):
		t.Fatal("Accept did not end when the listener closed")
	}
}

// The global cap: at MaxConns the listener stops accepting until a
// connection's socket is closed.
func TestGuardedListenerGlobalCap(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ln := loopback(t)
	g := GuardListener(ln, ListenerLimits{MaxConns: 2})
	defer g.Close()
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer c.Close()
	}
	var accepted []net.Conn
	for range 2 {
		c, err := g.Accept()
		require.NoError(t, err)
		accepted = append(accepted, c)
	}
	assert.Equal(t, int64(2), g.Open())
	third := make(chan net.Conn, 1)
	go func() {
		c, err := g.Accept()
		if err == nil {
			third <- c
		}
		close(third)
	}()
	select {
	case <-third:
		t.Fatal("accepted over the cap")
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, accepted[0].Close())
	select {
	case c, ok := <-third:
		require.True(t, ok)
		require.NoError(t, c.Close())
	case <-time.After(2 * time.Second):
		t.Fatal("a freed slot did not admit the waiting connection")
	}
	require.NoError(t, accepted[1].Close())
	assert.Zero(t, g.Open())
}

// Finding "connections closed after a 413: the per-address cap frees its
// slot but the fd lingers 2 s": the count now lasts until the socket is
// closed, after the lingering close.
func TestPerAddressCapCountsLingeringConnections(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ln := loopback(t)
	g := GuardListener(ln, ListenerLimits{MaxConnsPerAddress: 1})
	lingering := LingeringListener(g, 300*time.Millisecond, 1<<20)
	defer lingering.Close()

	first, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer first.Close()
	c1, err := lingering.Accept()
	require.NoError(t, err)
	// The server ends the connection; the client keeps it open, so the
	// socket lingers.
	require.NoError(t, c1.Close())

	second, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer second.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := lingering.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	// While the first socket lingers, the second connection is refused.
	require.NoError(t, second.SetReadDeadline(time.Now().Add(2*time.Second)))
	line, err := bufio.NewReader(second).ReadString('\n')
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(line, "HTTP/1.1 429"), line)
	assert.Equal(t, int64(1), g.RefusedPerAddress())

	// After the linger timeout the address has its slot again.
	require.Eventually(t, func() bool { return g.Open() == 0 }, 3*time.Second, 10*time.Millisecond,
		"the lingering socket is closed after the linger timeout")
	third, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer third.Close()
	select {
	case c := <-accepted:
		require.NotNil(t, c)
		require.NoError(t, c.Close())
	case <-time.After(3 * time.Second):
		t.Fatal("the address did not get its slot back after the linger")
	}
	require.NoError(t, lingering.Close())
	assert.Eventually(t, func() bool { return g.Open() == 0 }, 2*time.Second, 10*time.Millisecond)
}

// Finding "1,100 connections declaring bodies over the limit (fd limit
// 1,024): the REST listener stops accepting forever": fasthttp ends its
// accept loop on EMFILE. Served through the guard, the gateway answers
// /health as soon as descriptors are available again.
func TestServerKeepsServingThroughEMFILE(t *testing.T) {
	g := newGateway(t)
	ln := loopback(t)
	guard := GuardListener(&failingListener{Listener: ln, n: 10, err: syscall.EMFILE},
		ListenerLimits{Readiness: g.readiness, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	served := make(chan error, 1)
	go func() { served <- g.app.Listener(guard) }()
	defer func() {
		_ = g.app.ShutdownWithTimeout(5 * time.Second)
		<-served
	}()
	client := &nethttp.Client{Timeout: 10 * time.Second}
	start := time.Now()
	resp, err := client.Get("http://" + ln.Addr().String() + "/health")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Less(t, time.Since(start), 5*time.Second, "10 failed accepts back off 655 ms in all")
	select {
	case err := <-served:
		t.Fatalf("the serve loop ended: %v", err)
	default:
	}
}
