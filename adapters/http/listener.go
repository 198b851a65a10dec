package http

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
	"github.com/google/uuid"
)

// Connection and descriptor limits of the REST listener (issue 21).

// acceptBackoff spaces the retries of an accept loop that cannot accept
// (descriptor limit): 5 ms doubling to 100 ms. The cap is short: once
// descriptors are free again the listener must serve within a second (a
// retried accept costs one system call).
var acceptBackoff = backoff.Policy{Initial: 5 * time.Millisecond, Max: 100 * time.Millisecond}

// acceptLogEvery spaces the log lines of a lasting accept failure.
const acceptLogEvery = 10 * time.Second

// ListenerLimits configure GuardListener.
type ListenerLimits struct {
	// MaxConns caps the open connections in all (gateway.rest.max-connections),
	// counted until their socket is closed, lingering close included; at
	// the cap the listener stops accepting and new connections wait in the
	// kernel's accept queue. 0: no cap.
	MaxConns int
	// MaxConnsPerAddress caps the open connections of one client IP address
	// (gateway.rest.max-connections-per-address), counted the same way; one
	// more is answered 429 and closed. 0: no cap.
	MaxConnsPerAddress int
	// Readiness, when set, reports not ready (/ready 503) while accepting
	// fails.
	Readiness *Readiness
	// Logger receives the accept failures; nil: slog.Default().
	Logger *slog.Logger
}

// GuardedListener is a net.Listener whose Accept never fails but for a
// closed listener: errors such as EMFILE (the descriptor limit) are logged,
// counted, turn /ready to 503 while they last and are retried with a
// backoff, where fasthttp would end its accept loop for good. It also
// enforces ListenerLimits' connection caps. Its connections offer CloseWrite
// when the underlying ones do (LingeringListener wraps them).
type GuardedListener struct {
	net.Listener
	limits ListenerLimits
	log    *slog.Logger
	slots  chan struct{} // one per open connection; nil: no cap

	mu     sync.Mutex
	perIP  map[string]int
	closed chan struct{}
	once   sync.Once

	open           atomic.Int64
	acceptFailures atomic.Int64
	refused        atomic.Int64
	failing        atomic.Bool
}

// GuardListener wraps ln (see GuardedListener).
func GuardListener(ln net.Listener, limits ListenerLimits) *GuardedListener {
	g := &GuardedListener{Listener: ln, limits: limits, log: limits.Logger, perIP: map[string]int{}, closed: make(chan struct{})}
	if g.log == nil {
		g.log = slog.Default()
	}
	if limits.MaxConns > 0 {
		g.slots = make(chan struct{}, limits.MaxConns)
	}
	return g
}

// Open returns the connections open now (lingering ones included).
func (g *GuardedListener) Open() int64 { return g.open.Load() }

// AcceptFailures counts the failed accepts (each retried).
func (g *GuardedListener) AcceptFailures() int64 { return g.acceptFailures.Load() }

// RefusedPerAddress counts the connections refused by the per-address cap.
func (g *GuardedListener) RefusedPerAddress() int64 { return g.refused.Load() }

// Close closes the listener and ends a pending Accept.
func (g *GuardedListener) Close() error {
	g.once.Do(func() { close(g.closed) })
	return g.Listener.Close()
}

// Accept waits for a connection slot, then accepts, retrying any error but
// the listener's closing.
func (g *GuardedListener) Accept() (net.Conn, error) {
	waits := acceptBackoff.Start()
	var lastLog time.Time
	var streak int
	for {
		if g.slots != nil {
			select {
			case g.slots <- struct{}{}:
			case <-g.closed:
				return nil, net.ErrClosed
			}
		}
		c, err := g.Listener.Accept()
		if err != nil {
			g.releaseSlot()
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			streak++
			g.acceptFailures.Add(1)
			if g.failing.CompareAndSwap(false, true) && g.limits.Readiness != nil {
				g.limits.Readiness.setAcceptFailing(true)
			}
			wait := waits.Next()
			if time.Since(lastLog) >= acceptLogEvery {
				g.log.Error("REST listener cannot accept connections; retrying", "error", err,
					"descriptor_limit", isDescriptorLimit(err), "failures", streak, "open_connections", g.open.Load(),
					"retry_in", wait.String())
				lastLog = time.Now()
			}
			select {
			case <-time.After(wait):
			case <-g.closed:
				return nil, net.ErrClosed
			}
			continue
		}
		if g.failing.CompareAndSwap(true, false) {
			if g.limits.Readiness != nil {
				g.limits.Readiness.setAcceptFailing(false)
			}
			g.log.Warn("REST listener accepts connections again", "failures", streak)
		}
		waits, streak, lastLog = acceptBackoff.Start(), 0, time.Time{}
		ip := connIP(c)
		if !g.takeAddress(ip) {
			g.refused.Add(1)
			g.open.Add(1)
			go g.refuse(c, ip)
			continue
		}
		g.open.Add(1)
		return &guardedConn{Conn: c, g: g, ip: ip}, nil
	}
}

func (g *GuardedListener) releaseSlot() {
	if g.slots != nil {
		<-g.slots
	}
}

// takeAddress counts one more connection of ip, or reports that its cap is
// reached.
func (g *GuardedListener) takeAddress(ip string) bool {
	if g.limits.MaxConnsPerAddress <= 0 || ip == "" {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.perIP[ip] >= g.limits.MaxConnsPerAddress {
		return false
	}
	g.perIP[ip]++
	return true
}

func (g *GuardedListener) releaseAddress(ip string) {
	if g.limits.MaxConnsPerAddress <= 0 || ip == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.perIP[ip] <= 1 {
		delete(g.perIP, ip)
		return
	}
	g.perIP[ip]--
}

// refuse answers a connection over its address's cap with 429 and the
// error envelope, then closes it; its slot is held until then.
func (g *GuardedListener) refuse(c net.Conn, ip string) {
	defer func() {
		_ = c.Close()
		g.open.Add(-1)
		g.releaseSlot()
	}()
	body := fmt.Sprintf(`{"error":{"code":"resource_exhausted","message":"too many connections from %s (gateway.rest.max-connections-per-address: %d)","request_id":%q}}`,
		ip, g.limits.MaxConnsPerAddress, uuid.NewString())
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	// Read briefly what the client sent, so the close does not reset the
	// connection before the client has read the answer.
	if cw, ok := c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		_ = c.SetReadDeadline(time.Now().Add(refuseLinger))
		buf := make([]byte, 4<<10)
		for n := 0; n < 64<<10; {
			m, err := c.Read(buf)
			n += m
			if err != nil {
				break
			}
		}
	}
}

// refuseLinger bounds how long a refused connection is read before it is
// closed.
const refuseLinger = 200 * time.Millisecond

// guardedConn releases its slot and its address's count when its socket is
// closed (after the lingering close, if any).
type guardedConn struct {
	net.Conn
	g    *GuardedListener
	ip   string
	once sync.Once
}

func (c *guardedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.g.open.Add(-1)
		c.g.releaseAddress(c.ip)
		c.g.releaseSlot()
	})
	return err
}

// CloseWrite shuts down the sending side when the connection supports it.
func (c *guardedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// connIP is the client IP of c ("" when it has none).
func connIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return ""
}

// isDescriptorLimit reports whether err is the process or system descriptor
// limit (EMFILE, ENFILE).
func isDescriptorLimit(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
