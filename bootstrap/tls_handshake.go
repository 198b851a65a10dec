package bootstrap

import (
	"crypto/tls"
	"net"
	"sync"
	"time"
)

// handshakeListener is tls.NewListener whose connections must complete the
// TLS handshake within timeout (the TLS profile's `handshake-timeout`, the
// official gateway's key): a client that connects and stalls the handshake
// is cut off then instead of holding the connection until the request read
// timeout.
type handshakeListener struct {
	net.Listener
	conf    *tls.Config
	timeout time.Duration
}

func newHandshakeListener(ln net.Listener, conf *tls.Config, timeout time.Duration) net.Listener {
	if timeout <= 0 {
		return tls.NewListener(ln, conf)
	}
	return &handshakeListener{Listener: ln, conf: conf, timeout: timeout}
}

func (l *handshakeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &handshakeConn{Conn: tls.Server(c, l.conf), timeout: l.timeout}, nil
}

// handshakeConn runs the handshake on first use under the handshake
// deadline (or the caller's earlier one), then restores the deadlines the
// caller set. It embeds *tls.Conn, so the HTTP server still sees a TLS
// connection (ConnectionState, Handshake).
type handshakeConn struct {
	*tls.Conn
	timeout time.Duration

	once sync.Once
	err  error

	mu             sync.Mutex
	readDL, writDL time.Time
}

func (c *handshakeConn) handshake() error {
	c.once.Do(func() {
		c.mu.Lock()
		rd, wd := c.readDL, c.writDL
		c.mu.Unlock()
		limit := time.Now().Add(c.timeout)
		earliest := func(d time.Time) time.Time {
			if !d.IsZero() && d.Before(limit) {
				return d
			}
			return limit
		}
		_ = c.Conn.SetReadDeadline(earliest(rd))
		_ = c.Conn.SetWriteDeadline(earliest(wd))
		c.err = c.Conn.Handshake()
		c.mu.Lock()
		rd, wd = c.readDL, c.writDL
		c.mu.Unlock()
		_ = c.Conn.SetReadDeadline(rd)
		_ = c.Conn.SetWriteDeadline(wd)
	})
	return c.err
}

// Handshake runs the handshake under the handshake deadline: fasthttp calls
// it directly (its next-protocol check) before the first Read, with only
// its own read timeout as the deadline.
func (c *handshakeConn) Handshake() error { return c.handshake() }

func (c *handshakeConn) Read(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *handshakeConn) Write(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

func (c *handshakeConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDL, c.writDL = t, t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *handshakeConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDL = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *handshakeConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.writDL = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}
