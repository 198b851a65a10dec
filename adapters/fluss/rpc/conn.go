package rpc

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
	"github.com/fluss-gateway/fluss-gateway-go/internal/defaults"
	"google.golang.org/protobuf/proto"
)

// ServerType is the kind of Fluss server behind a connection, as reported by
// ApiVersionsResponse.server_type.
type ServerType int8

// Server types. ServerUnknown is used for bootstrap addresses, which may be
// either kind; it disables the server-type check.
const (
	ServerUnknown     ServerType = 0
	ServerCoordinator ServerType = 1
	ServerTablet      ServerType = 2
)

// String names the server type.
func (t ServerType) String() string {
	switch t {
	case ServerCoordinator:
		return "coordinator"
	case ServerTablet:
		return "tablet server"
	default:
		return "unknown server"
	}
}

// Defaults applied by ConnConfig and Config.
const (
	// DefaultDialTimeout bounds TCP connect plus the ApiVersions and
	// Authenticate handshake.
	DefaultDialTimeout = 10 * time.Second
	// DefaultRequestTimeout bounds one request from write to response; it
	// matches the Java client's client.request-timeout (30 s).
	DefaultRequestTimeout = 30 * time.Second
	// DefaultClientName and DefaultClientVersion are sent in ApiVersions
	// (the server only uses them for metrics).
	DefaultClientName    = "fluss-gateway-go"
	DefaultClientVersion = "0.1.0"
)

// SASLConfig enables SASL authentication on a connection. Only the PLAIN
// mechanism exists in Fluss 0.9.1 (apache/fluss: fluss-common/.../security/
// auth/sasl/plain/PlainSaslServer.java).
type SASLConfig struct {
	// Mechanism is the SASL mechanism name sent as AuthenticateRequest.protocol;
	// empty means "PLAIN".
	Mechanism string
	// Username and Password are the PLAIN credentials; both must be non-empty.
	Username string
	Password string
	// AuthorizationID is the optional PLAIN authzid ("act as"). Fluss 0.9.1
	// rejects any value other than "" or Username with
	// AUTHENTICATE_EXCEPTION; servers with apache/fluss PR #3857 accept
	// allow-listed impersonation.
	AuthorizationID string
}

func (s *SASLConfig) mechanism() string {
	if s.Mechanism == "" {
		return "PLAIN"
	}
	return s.Mechanism
}

func (s *SASLConfig) validate() error {
	if s.mechanism() != "PLAIN" {
		return fmt.Errorf("fluss rpc: SASL mechanism %q is not supported (only PLAIN)", s.Mechanism)
	}
	if s.Username == "" || s.Password == "" {
		return errors.New("fluss rpc: SASL/PLAIN needs a non-empty username and password")
	}
	return nil
}

// plainToken builds the RFC 4616 message: authzid NUL authcid NUL password.
func plainToken(authzid, user, password string) []byte {
	tok := make([]byte, 0, len(authzid)+len(user)+len(password)+2)
	tok = append(tok, authzid...)
	tok = append(tok, 0)
	tok = append(tok, user...)
	tok = append(tok, 0)
	tok = append(tok, password...)
	return tok
}

// ConnConfig configures one connection. The zero value is usable: every zero
// field takes its default.
type ConnConfig struct {
	// DialTimeout bounds connect + handshake (default DefaultDialTimeout).
	DialTimeout time.Duration
	// RequestTimeout bounds each request from the moment it is queued for
	// writing (default DefaultRequestTimeout). It catches requests the server
	// drops without answering.
	RequestTimeout time.Duration
	// ClientName and ClientVersion go into ApiVersionsRequest.
	ClientName    string
	ClientVersion string
	// ExpectedServerType, when not ServerUnknown, makes Dial fail with
	// ErrServerType if the server reports another type.
	ExpectedServerType ServerType
	// SASL, when not nil, authenticates the connection after ApiVersions.
	SASL *SASLConfig
	// MaxResponseFrameSize caps a response frame, length prefix included
	// (default wire.DefaultMaxResponseFrameSize). A larger frame closes the
	// connection with a protocol error.
	MaxResponseFrameSize int
	// Hooks are observers; see ConnectHook, DisconnectHook and RequestHook.
	Hooks []any
	// DialContext opens the TCP connection (default net.Dialer.DialContext).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (c ConnConfig) withDefaults() ConnConfig {
	c.DialTimeout = defaults.Positive(c.DialTimeout, DefaultDialTimeout)
	c.RequestTimeout = defaults.Positive(c.RequestTimeout, DefaultRequestTimeout)
	if c.ClientName == "" {
		c.ClientName = DefaultClientName
	}
	if c.ClientVersion == "" {
		c.ClientVersion = DefaultClientVersion
	}
	c.MaxResponseFrameSize = defaults.Positive(c.MaxResponseFrameSize, wire.DefaultMaxResponseFrameSize)
	if c.DialContext == nil {
		var d net.Dialer
		c.DialContext = d.DialContext
	}
	return c
}

// Conn is one established connection to one Fluss server: ApiVersions done,
// SASL done if configured. It is safe for concurrent use; concurrent calls
// are pipelined on the socket and matched to their responses by request id,
// in whatever order the server answers.
//
// A Conn never reconnects. Once it fails (I/O error, SERVER_FAILURE frame,
// protocol error) or is closed, every call returns an error; Client replaces
// dead connections.
type Conn struct {
	addr  string
	cfg   ConnConfig
	nc    net.Conn
	hooks hooks

	// Set during the handshake, read-only afterwards.
	serverType ServerType
	advertised map[wire.APIKey]wire.VersionRange
	versions   map[wire.APIKey]int16

	// wtoken serialises frame writes; a channel so that waiting for it can be
	// abandoned when the caller's context ends.
	wtoken chan struct{}

	mu          sync.Mutex
	nextID      int32
	pending     map[int32]chan wire.Response
	closeErr    error
	established bool

	closed    chan struct{}
	readDone  chan struct{} // closed when readLoop has returned
	closeOnce sync.Once
}

// Dial connects to addr, sends ApiVersions (checking the server type when
// cfg.ExpectedServerType is set), negotiates a version per API and, when
// cfg.SASL is set, authenticates. It fails with an *Error whose Outcome is
// NotSent: a network error (retriable, code NETWORK_EXCEPTION), a
// server-type mismatch (ErrServerType), or an authentication failure (code
// AUTHENTICATE_EXCEPTION, not retriable; see IsAuthentication).
func Dial(ctx context.Context, addr string, cfg ConnConfig) (*Conn, error) {
	cfg = cfg.withDefaults()
	start := time.Now()
	c, err := dial(ctx, addr, cfg)
	hooks(cfg.Hooks).connect(addr, time.Since(start), err)
	return c, err
}

func dial(parent context.Context, addr string, cfg ConnConfig) (*Conn, error) {
	if cfg.SASL != nil {
		if err := cfg.SASL.validate(); err != nil {
			return nil, &Error{Outcome: NotSent, Code: wire.CodeAuthenticateException, API: wire.KeyAuthenticate,
				Addr: addr, Message: err.Error()}
		}
	}
	ctx, cancel := context.WithTimeout(parent, cfg.DialTimeout)
	defer cancel()

	nc, err := cfg.DialContext(ctx, "tcp", addr)
	if err != nil {
		if parent.Err() != nil {
			return nil, contextError(NotSent, 0, addr, parent.Err())
		}
		return nil, networkError(NotSent, 0, addr, "connect failed", err)
	}
	c := &Conn{
		addr:     addr,
		cfg:      cfg,
		nc:       nc,
		hooks:    hooks(cfg.Hooks),
		wtoken:   make(chan struct{}, 1),
		pending:  make(map[int32]chan wire.Response),
		closed:   make(chan struct{}),
		readDone: make(chan struct{}),
	}
	go c.readLoop()

	if err := c.handshake(ctx); err != nil {
		c.fail(err)
		<-c.readDone
		e := AsError(err)
		if e == nil {
			e = networkError(NotSent, 0, addr, "handshake failed", err)
		}
		out := *e
		out.Outcome = NotSent
		switch {
		case parent.Err() != nil:
			return nil, contextError(NotSent, out.API, addr, parent.Err())
		case ctx.Err() != nil:
			return nil, networkError(NotSent, out.API, addr,
				fmt.Sprintf("handshake did not finish within %s", cfg.DialTimeout), ErrTimeout)
		}
		return nil, &out
	}
	c.mu.Lock()
	c.established = true
	c.mu.Unlock()
	return c, nil
}

func (c *Conn) handshake(ctx context.Context) error {
	var av flusspb.ApiVersionsResponse
	_, _, err := c.roundTrip(ctx, wire.KeyAPIVersions, 0, &flusspb.ApiVersionsRequest{
		ClientSoftwareName:    proto.String(c.cfg.ClientName),
		ClientSoftwareVersion: proto.String(c.cfg.ClientVersion),
	}, &av)
	if err != nil {
		return err
	}
	c.serverType = ServerType(av.GetServerType())
	if want := c.cfg.ExpectedServerType; want != ServerUnknown && av.ServerType != nil && c.serverType != want {
		return &Error{Outcome: NotSent, Code: wire.CodeNetworkException, API: wire.KeyAPIVersions, Addr: c.addr,
			Message: fmt.Sprintf("expected a %s, the server is a %s", want, c.serverType),
			Err:     ErrServerType, retriable: true}
	}
	c.advertised = make(map[wire.APIKey]wire.VersionRange, len(av.GetApiVersions()))
	c.versions = make(map[wire.APIKey]int16, len(av.GetApiVersions()))
	for _, v := range av.GetApiVersions() {
		key := wire.APIKey(v.GetApiKey())
		server := wire.VersionRange{Min: int16(v.GetMinVersion()), Max: int16(v.GetMaxVersion())}
		c.advertised[key] = server
		if client, ok := wire.ClientVersions(key); ok {
			if use, ok := wire.Negotiate(client, server); ok {
				c.versions[key] = use
			}
		}
	}
	if c.cfg.SASL != nil {
		return c.authenticate(ctx, c.cfg.SASL)
	}
	return nil
}

// authenticate runs the SASL/PLAIN exchange: one Authenticate round trip whose
// success answer carries an empty challenge. RETRIABLE_AUTHENTICATE_EXCEPTION
// is retried with exponential backoff (100 ms doubling to 5 s, as the Java
// client does) until ctx ends.
func (c *Conn) authenticate(ctx context.Context, s *SASLConfig) error {
	req := &flusspb.AuthenticateRequest{
		Protocol: proto.String(s.mechanism()),
		Token:    plainToken(s.AuthorizationID, s.Username, s.Password),
	}
	wait := backoff.Policy{Initial: 100 * time.Millisecond, Max: 5 * time.Second}.Start()
	for {
		var ar flusspb.AuthenticateResponse
		_, _, err := c.roundTrip(ctx, wire.KeyAuthenticate, 0, req, &ar)
		if err == nil {
			if len(ar.GetChallenge()) != 0 {
				return &Error{Outcome: NotSent, Code: wire.CodeAuthenticateException, API: wire.KeyAuthenticate,
					Addr: c.addr, Message: "unexpected SASL challenge after PLAIN credentials", Err: ErrProtocol}
			}
			return nil
		}
		e := AsError(err)
		if e == nil || e.Outcome != Answered {
			return err
		}
		switch e.Code {
		case wire.CodeRetriableAuthenticateException:
			if !wait.Wait(ctx) {
				return err
			}
			continue
		case wire.CodeAuthenticateException:
			who := s.Username
			if s.AuthorizationID != "" && s.AuthorizationID != s.Username {
				who += " as " + s.AuthorizationID
			}
			return &Error{Outcome: NotSent, Code: e.Code, API: wire.KeyAuthenticate, Addr: c.addr,
				Message: fmt.Sprintf("SASL/%s authentication failed for %q: %s", s.mechanism(), who, e.Message),
				Err:     e.Err}
		default:
			return err
		}
	}
}

// Addr returns the server address the connection was dialed to.
func (c *Conn) Addr() string { return c.addr }

// ServerType returns the type the server reported in ApiVersions
// (ServerUnknown when it sent none).
func (c *Conn) ServerType() ServerType { return c.serverType }

// Version returns the version Call uses for key: min(client max, server max).
// ok is false when the server did not list key or no common version exists.
func (c *Conn) Version(key wire.APIKey) (version int16, ok bool) {
	v, ok := c.versions[key]
	return v, ok
}

// Advertised returns the version range the server listed for key.
func (c *Conn) Advertised(key wire.APIKey) (wire.VersionRange, bool) {
	r, ok := c.advertised[key]
	return r, ok
}

// Done is closed when the connection has failed or been closed.
func (c *Conn) Done() <-chan struct{} { return c.closed }

// Err returns why the connection ended, or nil while it is alive.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// Close closes the connection and returns once its reader goroutine has
// ended. Requests in flight fail with an Ambiguous error wrapping
// ErrClosed; later calls fail NotSent.
func (c *Conn) Close() error {
	c.fail(ErrClosed)
	<-c.readDone
	return nil
}

// Call sends req with API key and the negotiated version, waits for the
// answer and decodes it into resp. It returns nil on SUCCESS_RESPONSE and an
// *Error otherwise:
//
//   - the server did not list key: NotSent, ErrUnsupportedAPI;
//   - req misses a required field or exceeds wire.MaxRequestFrameSize:
//     NotSent, not retriable;
//   - ctx ended or the request timeout fired before the frame was written:
//     NotSent; after it was written: Ambiguous (ErrTimeout or ctx.Err());
//   - the connection failed (I/O error, SERVER_FAILURE): Ambiguous if the
//     frame was written, NotSent otherwise; retriable;
//   - ERROR_RESPONSE: Answered, with the server's code and message.
//
// Call is safe for concurrent use.
func (c *Conn) Call(ctx context.Context, key wire.APIKey, req, resp proto.Message) error {
	start := time.Now()
	var reqBytes, respBytes int
	var err error
	version, ok := c.versions[key]
	if !ok {
		err = c.unsupported(key)
	} else {
		reqBytes, respBytes, err = c.roundTrip(ctx, key, version, req, resp)
	}
	c.hooks.request(ctx, c.addr, key.String(), version, reqBytes, respBytes, time.Since(start), err)
	return err
}

func (c *Conn) unsupported(key wire.APIKey) error {
	var msg string
	client, implemented := wire.ClientVersions(key)
	server, listed := c.advertised[key]
	switch {
	case !implemented:
		msg = fmt.Sprintf("this client does not implement %s", key)
	case !listed:
		msg = fmt.Sprintf("the %s does not serve %s", c.serverType, key)
	default:
		msg = fmt.Sprintf("no common version of %s: client %d..%d, server %d..%d",
			key, client.Min, client.Max, server.Min, server.Max)
	}
	return &Error{Outcome: NotSent, Code: wire.CodeUnsupportedVersion, API: key, Addr: c.addr,
		Message: msg, Err: ErrUnsupportedAPI}
}

// bufPool recycles request encoding buffers.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledBuf keeps huge one-off request buffers out of the pool.
const maxPooledBuf = 1 << 20

// aLongTimeAgo is a deadline in the past, used to abort a blocked write.
var aLongTimeAgo = time.Unix(1, 0)

// roundTrip encodes, writes and awaits one request. It returns the request
// and response frame sizes for hooks.
func (c *Conn) roundTrip(ctx context.Context, key wire.APIKey, version int16, req, resp proto.Message) (int, int, error) {
	if f, ok := ctx.Value(writtenKey{}).(func()); ok {
		written := sync.OnceFunc(f)
		defer written() // not written at all
		ctx = context.WithValue(ctx, writtenKey{}, written)
	}
	if err := ctx.Err(); err != nil {
		return 0, 0, contextError(NotSent, key, c.addr, err)
	}
	if reason := c.Err(); reason != nil {
		return 0, 0, connClosedError(NotSent, key, c.addr, reason)
	}

	bp := bufPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledBuf {
			bufPool.Put(bp)
		}
	}()
	buf := wire.BeginRequest((*bp)[:0], wire.RequestHeader{Key: key, Version: version})
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, req)
	*bp = buf[:0]
	if err != nil {
		return 0, 0, &Error{Outcome: NotSent, API: key, Addr: c.addr,
			Message: "cannot encode request: " + err.Error(), Err: err}
	}
	if len(buf) > wire.MaxRequestFrameSize {
		return 0, 0, &Error{Outcome: NotSent, Code: wire.CodeRecordTooLargeException, API: key, Addr: c.addr,
			Message: fmt.Sprintf("request frame of %d bytes exceeds the server limit of %d bytes",
				len(buf), wire.MaxRequestFrameSize)}
	}
	if err := wire.FinishFrame(buf, 0); err != nil {
		return 0, 0, &Error{Outcome: NotSent, API: key, Addr: c.addr, Message: err.Error(), Err: err}
	}

	timer := time.NewTimer(c.cfg.RequestTimeout)
	defer timer.Stop()
	deadline := time.Now().Add(c.cfg.RequestTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}

	// Wait for the right to write.
	select {
	case c.wtoken <- struct{}{}:
	case <-ctx.Done():
		return 0, 0, contextError(NotSent, key, c.addr, ctx.Err())
	case <-timer.C:
		return 0, 0, contextError(NotSent, key, c.addr, ErrTimeout)
	case <-c.closed:
		return 0, 0, connClosedError(NotSent, key, c.addr, c.Err())
	}

	ch := make(chan wire.Response, 1)
	c.mu.Lock()
	if c.closeErr != nil {
		reason := c.closeErr
		c.mu.Unlock()
		<-c.wtoken
		return 0, 0, connClosedError(NotSent, key, c.addr, reason)
	}
	id := c.nextID
	c.nextID++ // wraps to negative after MaxInt32; ids stay unique among in-flight requests
	c.pending[id] = ch
	c.mu.Unlock()
	binary.BigEndian.PutUint32(buf[wire.LengthSize+4:], uint32(id))

	n, werr := c.write(ctx, buf, deadline)
	<-c.wtoken
	if f, ok := ctx.Value(writtenKey{}).(func()); ok {
		f()
	}
	if werr != nil && n < len(buf) {
		c.forget(id)
		// The server never received a complete frame, so it cannot act on it.
		var cause error
		switch {
		case ctx.Err() != nil:
			cause = ctx.Err()
		case errors.Is(werr, os.ErrDeadlineExceeded):
			cause = ErrTimeout
		}
		if n > 0 || cause == nil {
			// A partial frame desynchronises the stream; an I/O error means
			// the socket is gone. Either way the connection is finished.
			c.fail(networkError(Ambiguous, 0, c.addr, "write failed", werr))
		}
		if cause != nil {
			return n, 0, contextError(NotSent, key, c.addr, cause)
		}
		return n, 0, networkError(NotSent, key, c.addr, "write failed", werr)
	}

	var r wire.Response
	select {
	case r = <-ch:
	case <-ctx.Done():
		var ok bool
		if r, ok = c.abandon(id, ch); !ok {
			return len(buf), 0, contextError(Ambiguous, key, c.addr, ctx.Err())
		}
	case <-timer.C:
		var ok bool
		if r, ok = c.abandon(id, ch); !ok {
			return len(buf), 0, contextError(Ambiguous, key, c.addr, ErrTimeout)
		}
	case <-c.closed:
		var ok bool
		if r, ok = c.abandon(id, ch); !ok {
			return len(buf), 0, connClosedError(Ambiguous, key, c.addr, c.Err())
		}
	}
	respBytes := wire.LengthSize + wire.ResponseHeaderSize + len(r.Body)
	return len(buf), respBytes, c.decode(key, r, resp)
}

// write writes one whole frame. The write deadline is the request deadline;
// cancelling ctx moves it into the past to unblock a stuck write.
func (c *Conn) write(ctx context.Context, frame []byte, deadline time.Time) (int, error) {
	_ = c.nc.SetWriteDeadline(deadline)
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = c.nc.SetWriteDeadline(aLongTimeAgo)
		close(fired)
	})
	n, err := c.nc.Write(frame)
	if !stop() {
		<-fired // make sure the callback cannot touch the next writer's deadline
	}
	return n, err
}

// forget removes a pending request; a late response to it is dropped.
func (c *Conn) forget(id int32) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// abandon forgets id and returns a response that raced in, if any.
func (c *Conn) abandon(id int32, ch chan wire.Response) (wire.Response, bool) {
	c.forget(id)
	select {
	case r := <-ch:
		return r, true
	default:
		return wire.Response{}, false
	}
}

func (c *Conn) decode(key wire.APIKey, r wire.Response, resp proto.Message) error {
	switch r.Type {
	case wire.ResponseSuccess:
		if err := proto.Unmarshal(r.Body, resp); err != nil {
			return &Error{Outcome: Ambiguous, Code: wire.CodeCorruptMessage, API: key, Addr: c.addr,
				Message: "cannot decode response: " + err.Error(), Err: errors.Join(ErrProtocol, err)}
		}
		return nil
	case wire.ResponseError:
		se, err := wire.DecodeErrorResponse(r.Body)
		if err != nil {
			return &Error{Outcome: Ambiguous, Code: wire.CodeCorruptMessage, API: key, Addr: c.addr,
				Message: "cannot decode error response: " + err.Error(), Err: errors.Join(ErrProtocol, err)}
		}
		return answered(key, c.addr, se)
	default:
		return &Error{Outcome: Ambiguous, Code: wire.CodeCorruptMessage, API: key, Addr: c.addr,
			Message: "unexpected response type " + r.Type.String(), Err: ErrProtocol}
	}
}

// readLoop reads response frames and hands each to its waiting caller. It
// ends the connection on the first I/O error, malformed frame or
// SERVER_FAILURE frame.
func (c *Conn) readLoop() {
	defer close(c.readDone)
	br := bufio.NewReaderSize(c.nc, 32<<10)
	for {
		payload, err := wire.ReadFrame(br, c.cfg.MaxResponseFrameSize)
		if err != nil {
			if errors.Is(err, wire.ErrMalformed) {
				c.fail(&Error{Outcome: Ambiguous, Code: wire.CodeCorruptMessage, Addr: c.addr,
					Message: "bad response frame: " + err.Error(), Err: errors.Join(ErrProtocol, err), retriable: true})
			} else {
				c.fail(networkError(Ambiguous, 0, c.addr, "connection lost", err))
			}
			return
		}
		r, err := wire.DecodeResponse(payload)
		if err != nil {
			c.fail(&Error{Outcome: Ambiguous, Code: wire.CodeCorruptMessage, Addr: c.addr,
				Message: "bad response frame: " + err.Error(), Err: errors.Join(ErrProtocol, err), retriable: true})
			return
		}
		if r.Type == wire.ResponseServerFailure {
			se, derr := wire.DecodeErrorResponse(r.Body)
			if derr != nil {
				se = wire.NewServerError(wire.CodeUnknownServerError, "undecodable server failure: "+derr.Error())
			}
			c.fail(&Error{Outcome: Ambiguous, Code: se.Code, Addr: c.addr,
				Message: "server failure: " + se.Message, Err: se, retriable: true})
			return
		}
		c.mu.Lock()
		ch := c.pending[r.RequestID]
		delete(c.pending, r.RequestID)
		c.mu.Unlock()
		if ch != nil {
			ch <- r // buffered; each id is delivered at most once
		}
		// else: the caller gave up (timeout, cancellation); drop the answer.
	}
}

// fail ends the connection once with reason; waiters observe c.closed.
func (c *Conn) fail(reason error) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closeErr = reason
		c.pending = make(map[int32]chan wire.Response)
		established := c.established
		c.mu.Unlock()
		close(c.closed)
		_ = c.nc.Close()
		if established {
			if errors.Is(reason, ErrClosed) {
				reason = nil
			}
			c.hooks.disconnect(c.addr, reason)
		}
	})
}

type writtenKey struct{}

// WithWritten returns a context whose call runs f once, as soon as the
// request's frame has been written to the connection (or the write failed,
// or the call ended without writing). A caller that must keep several
// pipelined requests in order on one connection starts the next call only
// after f ran for the previous one. Conn.Call and Client.CallTabletServerLane
// honour it (the latter not for the metadata refresh or dial before the
// request); other Client calls must not be given it.
func WithWritten(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, writtenKey{}, f)
}
