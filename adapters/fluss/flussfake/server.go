// Package flussfake is a minimal in-process Fluss server for tests, in the
// style of franz-go's kfake: a loopback TCP listener that speaks the real
// framing (package wire) and message bodies (package flusspb), answers
// ApiVersions and SASL/PLAIN Authenticate like a Fluss 0.9.1 server, dispatches
// other APIs to a handler map, and lets tests inject faults: drop a request
// (no answer, as Fluss does for unparseable bodies), answer with an error
// code, send SERVER_FAILURE, close the connection, or delay.
//
// A Server answers requests concurrently, so responses may leave in another
// order than the requests came (as with a real server). Cluster wires one
// coordinator and N tablet servers together with GetMetadata and an in-memory
// catalog of databases, tables and partitions.
package flussfake

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"google.golang.org/protobuf/proto"
)

// Server types reported in ApiVersionsResponse.server_type.
const (
	TypeCoordinator int32 = 1
	TypeTablet      int32 = 2
)

// Request is one decoded request frame.
type Request struct {
	Header wire.RequestHeader
	// Body is the raw protobuf body; Typed handlers decode it.
	Body []byte
	// Server is the receiving server.
	Server *Server
	// ConnID numbers the server's accepted connections from 1.
	ConnID int64
	// Principal is the authenticated SASL user, "" on a PLAINTEXT listener.
	Principal string
}

// Handler answers one request. Return a message for SUCCESS_RESPONSE, a
// *wire.ServerError for ERROR_RESPONSE, or one of the fault values ErrDrop,
// ErrCloseConn, *ServerFailure. Any other error becomes UNKNOWN_SERVER_ERROR.
// ctx ends when the connection closes.
type Handler func(ctx context.Context, r *Request) (proto.Message, error)

// ControlFunc intercepts requests before their handler. When handled is
// false the request continues to the next control and then to the handler.
type ControlFunc func(ctx context.Context, r *Request) (resp proto.Message, err error, handled bool)

// Faults a handler or control may return.
var (
	// ErrDrop makes the server send nothing, like Fluss does for unknown API
	// keys and bodies it cannot parse.
	ErrDrop = errors.New("flussfake: drop request")
	// ErrCloseConn closes the connection without answering.
	ErrCloseConn = errors.New("flussfake: close connection")
)

// ServerFailure makes the server send a SERVER_FAILURE frame (type 2, no
// request id) with this code and message, then close the connection.
type ServerFailure struct {
	Code    wire.ErrorCode
	Message string
}

// Error describes the fault.
func (f *ServerFailure) Error() string {
	return fmt.Sprintf("flussfake: server failure %s: %s", f.Code, f.Message)
}

// Typed adapts a handler for one request message type: the body is decoded
// into a fresh *Req; a body that does not parse (including a missing required
// field) is dropped without an answer, as the real server does.
func Typed[Req any, PReq interface {
	*Req
	proto.Message
}](fn func(ctx context.Context, r *Request, req PReq) (proto.Message, error)) Handler {
	return func(ctx context.Context, r *Request) (proto.Message, error) {
		req := PReq(new(Req))
		if err := proto.Unmarshal(r.Body, req); err != nil {
			return nil, ErrDrop
		}
		return fn(ctx, r, req)
	}
}

// ServerConfig configures a Server.
type ServerConfig struct {
	// Type is TypeCoordinator or TypeTablet (default TypeTablet).
	Type int32
	// NodeID is the server id reported in metadata.
	NodeID int32
	// SASLUsers, when not nil, makes the listener require SASL/PLAIN with
	// these username -> password pairs.
	SASLUsers map[string]string
	// Versions overrides the advertised version range per API (default:
	// wire.Server091Versions for every API with a handler).
	Versions map[wire.APIKey]wire.VersionRange
	// OmitServerType leaves server_type out of ApiVersionsResponse.
	OmitServerType bool
	// Addr is the listen address (default 127.0.0.1:0).
	Addr string
	// RetriableAuthFailures answers the first n Authenticate requests of
	// the server with RETRIABLE_AUTHENTICATE_EXCEPTION (code 51).
	RetriableAuthFailures int
	// Impersonation, when not nil, lets the listed SASL users authenticate
	// with an authorization id other than their name (the principal becomes
	// the authorization id), as a server with apache/fluss PR #3857 does:
	// user -> the authorization ids it may use, "*" for any. A user not
	// listed, or an id not allowed, is refused with AUTHENTICATE_EXCEPTION.
	// Nil behaves like Fluss 0.9.1: any authorization id other than the
	// username is refused.
	Impersonation map[string][]string
}

// Server is one fake Fluss server on a loopback listener.
type Server struct {
	cfg ServerConfig
	ln  net.Listener

	mu       sync.Mutex
	handlers map[wire.APIKey]Handler
	controls []*control
	conns    map[int64]*serverConn
	counts   map[wire.APIKey]int
	closed   bool

	authzIDs     []string // authorization id of every successful Authenticate
	authFailures atomic.Int64
	nextConn     atomic.Int64
	wg           sync.WaitGroup
}

type control struct {
	key  wire.APIKey // 0 = every key
	once bool
	fn   ControlFunc
}

// NewServer starts a server; it accepts connections until Close. Only
// ApiVersions and Authenticate are handled until Handle registers more.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Type == 0 {
		cfg.Type = TypeTablet
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		ln:       ln,
		handlers: make(map[wire.APIKey]Handler),
		conns:    make(map[int64]*serverConn),
		counts:   make(map[wire.APIKey]int),
	}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr returns the listener's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// NodeID returns the configured node id.
func (s *Server) NodeID() int32 { return s.cfg.NodeID }

// Type returns TypeCoordinator or TypeTablet.
func (s *Server) Type() int32 { return s.cfg.Type }

// Handle registers (or replaces) the handler of key; the key is then listed
// in ApiVersions.
func (s *Server) Handle(key wire.APIKey, h Handler) {
	s.mu.Lock()
	s.handlers[key] = h
	s.mu.Unlock()
}

// Unhandle removes the handler of key: the key disappears from ApiVersions
// (for new connections) and requests for it are dropped silently.
func (s *Server) Unhandle(key wire.APIKey) {
	s.mu.Lock()
	delete(s.handlers, key)
	s.mu.Unlock()
}

// Control adds an interceptor for key (0 = all keys) that stays until the
// returned function removes it.
func (s *Server) Control(key wire.APIKey, fn ControlFunc) (remove func()) {
	c := &control{key: key, fn: fn}
	s.mu.Lock()
	s.controls = append(s.controls, c)
	s.mu.Unlock()
	return func() { s.removeControl(c) }
}

// ControlOnce adds an interceptor for key that is removed after it first
// handles a request.
func (s *Server) ControlOnce(key wire.APIKey, fn ControlFunc) {
	s.mu.Lock()
	s.controls = append(s.controls, &control{key: key, once: true, fn: fn})
	s.mu.Unlock()
}

func (s *Server) removeControl(c *control) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.controls {
		if x == c {
			s.controls = append(s.controls[:i:i], s.controls[i+1:]...)
			return
		}
	}
}

// Requests returns how many requests with key the server received (including
// dropped ones).
func (s *Server) Requests(key wire.APIKey) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[key]
}

// AuthorizationIDs returns the authorization id ("" when none) of every
// successful SASL authentication, in order.
func (s *Server) AuthorizationIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.authzIDs)
}

// Connections returns the number of open connections.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// CloseConnections closes every open connection (the listener stays up).
func (s *Server) CloseConnections() {
	s.mu.Lock()
	conns := make([]*serverConn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// Close stops the listener, closes every connection and waits for the
// server's goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	_ = s.ln.Close()
	s.CloseConnections()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		c := &serverConn{
			s:      s,
			id:     s.nextConn.Add(1),
			nc:     nc,
			ctx:    ctx,
			cancel: cancel,
			authed: s.cfg.SASLUsers == nil,
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = nc.Close()
			cancel()
			return
		}
		s.conns[c.id] = c
		s.mu.Unlock()
		s.wg.Add(1)
		go c.serve()
	}
}

type serverConn struct {
	s      *Server
	id     int64
	nc     net.Conn
	ctx    context.Context
	cancel context.CancelFunc

	wmu       sync.Mutex
	mu        sync.Mutex
	authed    bool
	principal string
	closeOnce sync.Once
	inflight  sync.WaitGroup
}

func (c *serverConn) close() {
	c.closeOnce.Do(func() {
		c.cancel()
		_ = c.nc.Close()
		c.s.mu.Lock()
		delete(c.s.conns, c.id)
		c.s.mu.Unlock()
	})
}

func (c *serverConn) serve() {
	defer c.s.wg.Done()
	defer c.close()
	br := bufio.NewReader(c.nc)
	for {
		payload, err := wire.ReadFrame(br, wire.MaxRequestFrameSize)
		if err != nil {
			if errors.Is(err, wire.ErrFrameTooLarge) {
				c.serverFailure(wire.CodeUnknownServerError, "frame too large")
			}
			c.close() // cancels handlers blocked on ctx before waiting for them
			c.inflight.Wait()
			return
		}
		h, body, err := wire.DecodeRequest(payload)
		if err != nil {
			c.serverFailure(wire.CodeCorruptMessage, err.Error())
			c.close()
			c.inflight.Wait()
			return
		}
		c.s.mu.Lock()
		c.s.counts[h.Key]++
		c.s.mu.Unlock()
		req := &Request{Header: h, Body: body, Server: c.s, ConnID: c.id}

		// Handshake APIs are answered in order on the read goroutine, like
		// the real server's network layer does; everything else
		// concurrently.
		if h.Key == wire.KeyAPIVersions || h.Key == wire.KeyAuthenticate {
			c.dispatch(req)
			continue
		}
		c.inflight.Add(1)
		go func() {
			defer c.inflight.Done()
			c.dispatch(req)
		}()
	}
}

func (c *serverConn) dispatch(r *Request) {
	c.mu.Lock()
	authed := c.authed
	r.Principal = c.principal
	c.mu.Unlock()

	var resp proto.Message
	var err error
	handled := false
	if r.Header.Key != wire.KeyAPIVersions && r.Header.Key != wire.KeyAuthenticate {
		resp, err, handled = c.runControls(r)
	}
	if !handled {
		switch {
		case r.Header.Key == wire.KeyAPIVersions:
			resp, err = c.apiVersions(r)
		case r.Header.Key == wire.KeyAuthenticate:
			resp, err = c.authenticate(r)
		case !authed:
			err = wire.NewServerError(wire.CodeAuthenticateException,
				"The connection has not completed authentication yet.")
		default:
			c.s.mu.Lock()
			h := c.s.handlers[r.Header.Key]
			c.s.mu.Unlock()
			if h == nil {
				err = ErrDrop // unknown or foreign API: no answer
			} else {
				resp, err = h(c.ctx, r)
			}
		}
	}
	c.respond(r, resp, err)
}

func (c *serverConn) runControls(r *Request) (proto.Message, error, bool) {
	c.s.mu.Lock()
	ctrls := append([]*control(nil), c.s.controls...)
	c.s.mu.Unlock()
	for _, ct := range ctrls {
		if ct.key != 0 && ct.key != r.Header.Key {
			continue
		}
		resp, err, handled := ct.fn(c.ctx, r)
		if handled {
			if ct.once {
				c.s.removeControl(ct)
			}
			return resp, err, true
		}
	}
	return nil, nil, false
}

func (c *serverConn) respond(r *Request, resp proto.Message, err error) {
	var sf *ServerFailure
	var se *wire.ServerError
	switch {
	case errors.Is(err, ErrDrop):
		return
	case errors.Is(err, ErrCloseConn):
		c.close()
		return
	case errors.As(err, &sf):
		c.serverFailure(sf.Code, sf.Message)
		c.close()
		return
	case errors.As(err, &se):
		c.write(wire.AppendResponse(nil, wire.ResponseError, r.Header.RequestID,
			wire.AppendErrorResponse(nil, se.Code, se.Message)))
		return
	case err != nil:
		c.write(wire.AppendResponse(nil, wire.ResponseError, r.Header.RequestID,
			wire.AppendErrorResponse(nil, wire.CodeUnknownServerError, err.Error())))
		return
	}
	if resp == nil {
		resp = &flusspb.CreateDatabaseResponse{} // an empty message
	}
	body, merr := proto.Marshal(resp)
	if merr != nil {
		c.write(wire.AppendResponse(nil, wire.ResponseError, r.Header.RequestID,
			wire.AppendErrorResponse(nil, wire.CodeUnknownServerError, "fake encode: "+merr.Error())))
		return
	}
	c.write(wire.AppendResponse(nil, wire.ResponseSuccess, r.Header.RequestID, body))
}

func (c *serverConn) serverFailure(code wire.ErrorCode, msg string) {
	c.write(wire.AppendResponse(nil, wire.ResponseServerFailure, 0, wire.AppendErrorResponse(nil, code, msg)))
}

func (c *serverConn) write(frame []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, _ = c.nc.Write(frame)
}

func (c *serverConn) apiVersions(r *Request) (proto.Message, error) {
	var req flusspb.ApiVersionsRequest
	if err := proto.Unmarshal(r.Body, &req); err != nil {
		return nil, ErrDrop
	}
	c.s.mu.Lock()
	keys := []wire.APIKey{wire.KeyAPIVersions, wire.KeyAuthenticate}
	for k := range c.s.handlers {
		if k != wire.KeyAPIVersions && k != wire.KeyAuthenticate {
			keys = append(keys, k)
		}
	}
	overrides := c.s.cfg.Versions
	c.s.mu.Unlock()

	resp := &flusspb.ApiVersionsResponse{}
	if !c.s.cfg.OmitServerType {
		resp.ServerType = proto.Int32(c.s.cfg.Type)
	}
	slices.Sort(keys)
	for _, k := range keys {
		vr, ok := overrides[k]
		if !ok {
			if vr, ok = wire.Server091Versions(k); !ok {
				vr = wire.VersionRange{}
			}
		}
		resp.ApiVersions = append(resp.ApiVersions, &flusspb.PbApiVersion{
			ApiKey: proto.Int32(int32(k)), MinVersion: proto.Int32(int32(vr.Min)), MaxVersion: proto.Int32(int32(vr.Max)),
		})
	}
	return resp, nil
}

// authenticate mirrors apache/fluss PlainSaslServer: the token must split on
// NUL into exactly three parts, user and password non-empty and matching, and
// the authzid empty or equal to the user.
func (c *serverConn) authenticate(r *Request) (proto.Message, error) {
	var req flusspb.AuthenticateRequest
	if err := proto.Unmarshal(r.Body, &req); err != nil {
		return nil, ErrDrop
	}
	if c.s.authFailures.Add(1) <= int64(c.s.cfg.RetriableAuthFailures) {
		return nil, wire.NewServerError(wire.CodeRetriableAuthenticateException, "try again")
	}
	users := c.s.cfg.SASLUsers
	fail := func(msg string) (proto.Message, error) {
		return nil, wire.NewServerError(wire.CodeAuthenticateException, msg)
	}
	if users == nil {
		if !strings.EqualFold(req.GetProtocol(), "PLAINTEXT") {
			return fail(fmt.Sprintf("listener expects protocol PLAINTEXT, client sent %s", req.GetProtocol()))
		}
		return &flusspb.AuthenticateResponse{}, nil
	}
	if !strings.EqualFold(req.GetProtocol(), "PLAIN") {
		return fail(fmt.Sprintf("SASL mechanism %s is not enabled", req.GetProtocol()))
	}
	parts := bytes.Split(req.GetToken(), []byte{0})
	if len(parts) != 3 {
		return fail(fmt.Sprintf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts)))
	}
	authzid, user, pass := string(parts[0]), string(parts[1]), string(parts[2])
	switch {
	case user == "":
		return fail("Authentication failed: username not specified")
	case pass == "":
		return fail("Authentication failed: password not specified")
	}
	if want, ok := users[user]; !ok || want != pass {
		return fail("Authentication failed: Invalid username or password")
	}
	principal := user
	if authzid != "" && authzid != user {
		imp := c.s.cfg.Impersonation
		if imp == nil {
			return fail("Authentication failed: Client requested an authorization id that is different from username")
		}
		allowed := imp[user]
		if !slices.Contains(allowed, "*") && !slices.Contains(allowed, authzid) {
			return fail(fmt.Sprintf("Authentication failed: user %s is not allowed to impersonate %s", user, authzid))
		}
		principal = authzid
	}
	c.mu.Lock()
	c.authed = true
	c.principal = principal
	c.mu.Unlock()
	c.s.mu.Lock()
	c.s.authzIDs = append(c.s.authzIDs, authzid)
	c.s.mu.Unlock()
	return &flusspb.AuthenticateResponse{Challenge: []byte{}}, nil
}
