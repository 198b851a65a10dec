package http

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// lingeringPair returns a server-side connection accepted through l and the
// client side of it.
func lingeringPair(t *testing.T, l *Lingering) (server, client net.Conn) {
	t.Helper()
	client, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	server, err = l.Accept()
	require.NoError(t, err)
	return server, client
}

// Shutdown ends the lingering closes still draining and waits for their
// goroutines; a connection closed afterwards closes at once. Not parallel,
// so that the leak check sees only this test's goroutines.
func TestLingeringShutdownEndsCloses(t *testing.T) {
	before := goleak.IgnoreCurrent()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := LingeringListener(raw, time.Hour, 1<<20)

	s1, c1 := lingeringPair(t, l)
	s2, c2 := lingeringPair(t, l)
	require.IsType(t, &lingeringConn{}, s1)
	require.NoError(t, s1.Close())
	// The client sees the end of the stream while the server still drains.
	_ = c1.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c1.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF)
	_, err = c1.Write([]byte("more body"))
	require.NoError(t, err, "the server still reads what the client sends")

	done := make(chan struct{})
	go func() { l.Shutdown(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown waited for the linger timeout")
	}
	require.NoError(t, s2.Close())
	_ = c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.Copy(io.Discard, c2)
	assert.NoError(t, err, "closed at once after Shutdown: EOF")

	require.NoError(t, c1.Close())
	require.NoError(t, c2.Close())
	require.NoError(t, l.Close())
	goleak.VerifyNone(t, before)
}

// A listener with no linger timeout passes connections through.
func TestLingeringDisabled(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := LingeringListener(raw, 0, 0)
	defer l.Close()
	s, c := lingeringPair(t, l)
	defer c.Close()
	assert.IsType(t, &net.TCPConn{}, s)
	require.NoError(t, s.Close())
	l.Shutdown()
}
