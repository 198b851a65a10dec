package rpc_test

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
)

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
