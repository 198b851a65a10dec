package rpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
	"google.golang.org/protobuf/proto"
)

// Node is one Fluss server as listed by GetMetadata. Coordinator and tablet
// server ids are separate namespaces (a cluster has coordinator 0 and tablet
// server 0), so a node is identified by (Type, ID).
type Node struct {
	ID   int32
	Host string
	Port int
	Type ServerType
	Rack string
}

// Addr returns host:port.
func (n Node) Addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

// String renders "tablet server 1 (host:port)".
func (n Node) String() string { return fmt.Sprintf("%s %d (%s)", n.Type, n.ID, n.Addr()) }

// Cluster is a snapshot of the cluster's servers from the last metadata
// response.
type Cluster struct {
	// Coordinator is the coordinator server, nil if the response named none.
	Coordinator *Node
	// TabletServers are the alive tablet servers, ordered by id.
	TabletServers []Node
	// FetchedAt is when the snapshot was taken.
	FetchedAt time.Time
}

// TabletServer returns the tablet server with the given id.
func (c Cluster) TabletServer(id int32) (Node, bool) {
	for _, n := range c.TabletServers {
		if n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// Config configures a Client. Only BootstrapServers is required.
type Config struct {
	// BootstrapServers are host:port addresses of any Fluss servers (usually
	// the coordinator's client listener). Metadata is first fetched from them.
	BootstrapServers []string
	// DialTimeout, RequestTimeout, ClientName, ClientVersion,
	// MaxResponseFrameSize, Hooks and DialContext are passed to every
	// connection; see ConnConfig.
	DialTimeout          time.Duration
	RequestTimeout       time.Duration
	ClientName           string
	ClientVersion        string
	MaxResponseFrameSize int
	Hooks                []any
	DialContext          func(ctx context.Context, network, addr string) (net.Conn, error)
	// SASL, when set, authenticates every connection.
	SASL *SASLConfig
	// MetadataAttempts is how many rounds over all known servers a metadata
	// fetch makes before giving up (default 3), waiting MetadataBackoff
	// (default 100 ms, doubled per round) in between. A response that lists
	// no tablet server counts as a failed round (the cluster is starting).
	MetadataAttempts int
	MetadataBackoff  time.Duration
}

func (c Config) connConfig(expect ServerType) ConnConfig {
	return ConnConfig{
		DialTimeout:          c.DialTimeout,
		RequestTimeout:       c.RequestTimeout,
		ClientName:           c.ClientName,
		ClientVersion:        c.ClientVersion,
		ExpectedServerType:   expect,
		SASL:                 c.SASL,
		MaxResponseFrameSize: c.MaxResponseFrameSize,
		Hooks:                c.Hooks,
		DialContext:          c.DialContext,
	}.withDefaults()
}

// Client talks to one Fluss cluster: it discovers the coordinator and tablet
// servers through GetMetadata, keeps one lazily dialed connection per server
// address (re-dialed after it fails), and routes calls to the coordinator,
// to any tablet server or to a given tablet server. It is safe for concurrent
// use. Client does not retry answered or ambiguous requests; it only moves on
// to another server when a request was not sent, and refreshes its metadata
// after errors that invalidate it.
type Client struct {
	cfg       Config
	bootstrap []string

	mu      sync.Mutex
	conns   map[string]*connSlot
	cluster *Cluster
	stale   bool
	closed  bool

	refreshMu sync.Mutex // one metadata refresh at a time

	// life cancels the dials in progress when the client closes; dials
	// counts them so that Close can wait for them.
	life    context.Context
	endLife context.CancelFunc
	dials   sync.WaitGroup
}

type connSlot struct {
	conn    *Conn
	dialing chan struct{} // closed when the running dial ends
	err     error         // result of the last dial
}

// NewClient validates cfg and returns a Client. It does no I/O; the first
// call (or Cluster) connects.
func NewClient(cfg Config) (*Client, error) {
	var boot []string
	for _, a := range cfg.BootstrapServers {
		for _, s := range strings.Split(a, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			if _, _, err := net.SplitHostPort(s); err != nil {
				return nil, fmt.Errorf("fluss rpc: bootstrap server %q: %w", s, err)
			}
			boot = append(boot, s)
		}
	}
	if len(boot) == 0 {
		return nil, errors.New("fluss rpc: no bootstrap servers")
	}
	if cfg.SASL != nil {
		if err := cfg.SASL.validate(); err != nil {
			return nil, err
		}
	}
	if cfg.MetadataAttempts <= 0 {
		cfg.MetadataAttempts = 3
	}
	if cfg.MetadataBackoff <= 0 {
		cfg.MetadataBackoff = 100 * time.Millisecond
	}
	c := &Client{cfg: cfg, bootstrap: boot, conns: make(map[string]*connSlot)}
	c.life, c.endLife = context.WithCancel(context.Background())
	return c, nil
}

// Close closes every connection, cancels the dials in progress and returns
// once their goroutines (and each connection's reader) have ended. Calls in
// flight fail with ErrClosed; later calls fail NotSent.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	var conns []*Conn
	for _, s := range c.conns {
		if s.conn != nil {
			conns = append(conns, s.conn)
		}
	}
	c.conns = make(map[string]*connSlot)
	c.mu.Unlock()
	c.endLife()
	for _, conn := range conns {
		_ = conn.Close()
	}
	c.dials.Wait()
	return nil
}

// Cluster returns the cached cluster snapshot, fetching metadata first when
// there is none yet or it was invalidated by an error.
func (c *Client) Cluster(ctx context.Context) (Cluster, error) {
	c.mu.Lock()
	cl, stale := c.cluster, c.stale
	c.mu.Unlock()
	if cl != nil && !stale {
		return *cl, nil
	}
	return c.RefreshCluster(ctx)
}

// RefreshCluster fetches the server list with an empty GetMetadata request
// (from a tablet server, or a bootstrap server when none is known) and caches
// it.
func (c *Client) RefreshCluster(ctx context.Context) (Cluster, error) {
	asked := time.Now()
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	// Someone else refreshed while we waited for the lock: use theirs.
	c.mu.Lock()
	if cl := c.cluster; cl != nil && !c.stale && !cl.FetchedAt.Before(asked) {
		c.mu.Unlock()
		return *cl, nil
	}
	c.mu.Unlock()
	if _, err := c.Metadata(ctx, &flusspb.MetadataRequest{}); err != nil {
		return Cluster{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return *c.cluster, nil
}

// Invalidate marks the cached cluster metadata stale; the next routed call
// refreshes it.
func (c *Client) Invalidate() {
	c.mu.Lock()
	c.stale = true
	c.mu.Unlock()
}

// Metadata sends a GetMetadata request (API 1012) and returns the answer. It
// tries the known tablet servers in random order, then the bootstrap servers,
// moving on after failures that are not answers; a response without tablet
// servers is treated as stale. Up to Config.MetadataAttempts rounds are made.
// The server list of a successful answer replaces the cached Cluster. An
// answered error (for example TABLE_NOT_EXIST for a requested table) is
// returned at once.
func (c *Client) Metadata(ctx context.Context, req *flusspb.MetadataRequest) (*flusspb.MetadataResponse, error) {
	var last error
	wait := backoff.Policy{Initial: c.cfg.MetadataBackoff}.Start()
	for attempt := 0; attempt < c.cfg.MetadataAttempts; attempt++ {
		if attempt > 0 && !wait.Wait(ctx) {
			return nil, contextError(NotSent, wire.KeyGetMetadata, "", ctx.Err())
		}
		for _, target := range c.metadataTargets() {
			resp := &flusspb.MetadataResponse{}
			err := c.callAddr(ctx, target.addr, target.typ, wire.KeyGetMetadata, req, resp)
			if err != nil {
				last = err
				if e := AsError(err); e == nil || e.Outcome == Answered || !e.Retriable() {
					// An answer (e.g. TABLE_NOT_EXIST) or a permanent failure
					// (authentication) would be the same elsewhere.
					return nil, err
				}
				if ctx.Err() != nil {
					return nil, err
				}
				continue
			}
			if len(resp.GetTabletServers()) == 0 {
				last = &Error{Outcome: NotSent, Code: wire.CodeLeaderNotAvailableException, API: wire.KeyGetMetadata,
					Addr: target.addr, Message: "metadata lists no tablet server yet", Err: ErrNoNode, retriable: true}
				continue
			}
			c.storeCluster(resp)
			return resp, nil
		}
	}
	if last == nil {
		last = &Error{Outcome: NotSent, API: wire.KeyGetMetadata, Message: "no server to ask", Err: ErrNoNode, retriable: true}
	}
	return nil, last
}

type target struct {
	addr string
	typ  ServerType
}

// metadataTargets lists where to send GetMetadata: known tablet servers in
// random order, then the bootstrap addresses in random order.
func (c *Client) metadataTargets() []target {
	c.mu.Lock()
	var out []target
	if c.cluster != nil {
		for _, i := range rand.Perm(len(c.cluster.TabletServers)) {
			n := c.cluster.TabletServers[i]
			out = append(out, target{n.Addr(), ServerTablet})
		}
	}
	c.mu.Unlock()
	for _, i := range rand.Perm(len(c.bootstrap)) {
		out = append(out, target{c.bootstrap[i], ServerUnknown})
	}
	return out
}

func (c *Client) storeCluster(resp *flusspb.MetadataResponse) {
	cl := &Cluster{FetchedAt: time.Now()}
	if cs := resp.GetCoordinatorServer(); cs != nil {
		n := nodeOf(cs, ServerCoordinator)
		cl.Coordinator = &n
	}
	for _, ts := range resp.GetTabletServers() {
		cl.TabletServers = append(cl.TabletServers, nodeOf(ts, ServerTablet))
	}
	slices.SortFunc(cl.TabletServers, func(a, b Node) int { return int(a.ID) - int(b.ID) })
	c.mu.Lock()
	c.cluster = cl
	c.stale = false
	c.mu.Unlock()
}

func nodeOf(n *flusspb.PbServerNode, t ServerType) Node {
	return Node{ID: n.GetNodeId(), Host: n.GetHost(), Port: int(n.GetPort()), Type: t, Rack: n.GetRack()}
}

// CallCoordinator sends a request to the coordinator server (all DDL goes
// there). When the coordinator cannot be reached (NotSent), the metadata is
// refreshed once and the call retried if the coordinator moved.
func (c *Client) CallCoordinator(ctx context.Context, key wire.APIKey, req, resp proto.Message) error {
	cl, err := c.Cluster(ctx)
	if err != nil {
		return err
	}
	if cl.Coordinator == nil {
		if cl, err = c.RefreshCluster(ctx); err != nil {
			return err
		}
		if cl.Coordinator == nil {
			return &Error{Outcome: NotSent, API: key, Message: "metadata names no coordinator server",
				Err: ErrNoNode, retriable: true}
		}
	}
	first := *cl.Coordinator
	err = c.callNode(ctx, first, key, req, resp)
	if err == nil || !IsNotSent(err) || ctx.Err() != nil {
		return err
	}
	cl, rerr := c.RefreshCluster(ctx)
	if rerr != nil || cl.Coordinator == nil || cl.Coordinator.Addr() == first.Addr() {
		return err
	}
	return c.callNode(ctx, *cl.Coordinator, key, req, resp)
}

// CallTabletServer sends a request to the tablet server with the given id,
// refreshing metadata once when the id is unknown.
func (c *Client) CallTabletServer(ctx context.Context, id int32, key wire.APIKey, req, resp proto.Message) error {
	n, err := c.TabletServer(ctx, id)
	if err != nil {
		return err
	}
	return c.callNode(ctx, n, key, req, resp)
}

// CallTabletServerLane is CallTabletServer over the lane-th connection to
// the server: lane 0 is the connection every other call shares, each lane
// above it a connection of its own, dialed on first use. A Fluss server
// handles the requests of one connection in order on one worker thread
// (fluss-rpc ServerChannelInitializer: a channel is bound to one
// RequestChannel; 0.9.1), so writes spread over lanes are handled in
// parallel while those of one lane keep their order.
//
// A WithWritten function in ctx runs once, when this request's own frame was
// written (or will not be): the metadata refresh or the dial it may need
// first does not count.
func (c *Client) CallTabletServerLane(ctx context.Context, id int32, lane int, key wire.APIKey, req, resp proto.Message) error {
	written, _ := ctx.Value(writtenKey{}).(func())
	if written != nil {
		written = sync.OnceFunc(written)
		defer written()
		ctx = context.WithValue(ctx, writtenKey{}, nil)
	}
	n, err := c.TabletServer(ctx, id)
	if err != nil {
		return err
	}
	err = c.callAddrLane(ctx, n.Addr(), lane, n.Type, key, req, resp, written)
	if err != nil && shouldInvalidate(err) {
		c.Invalidate()
	}
	return err
}

// TabletServer returns the tablet server node with the given id, refreshing
// metadata once when the id is unknown.
func (c *Client) TabletServer(ctx context.Context, id int32) (Node, error) {
	cl, err := c.Cluster(ctx)
	if err != nil {
		return Node{}, err
	}
	if n, ok := cl.TabletServer(id); ok {
		return n, nil
	}
	if cl, err = c.RefreshCluster(ctx); err != nil {
		return Node{}, err
	}
	if n, ok := cl.TabletServer(id); ok {
		return n, nil
	}
	return Node{}, &Error{Outcome: NotSent, Code: wire.CodeLeaderNotAvailableException,
		Message: fmt.Sprintf("tablet server %d is not in the cluster metadata", id), Err: ErrNoNode, retriable: true}
}

// CallAnyTabletServer sends a request to a random tablet server, moving on to
// the next one while the failure is NotSent (the server is unreachable).
func (c *Client) CallAnyTabletServer(ctx context.Context, key wire.APIKey, req, resp proto.Message) error {
	cl, err := c.Cluster(ctx)
	if err != nil {
		return err
	}
	if len(cl.TabletServers) == 0 {
		return &Error{Outcome: NotSent, API: key, Message: "no tablet server in the cluster metadata",
			Err: ErrNoNode, retriable: true}
	}
	for _, i := range rand.Perm(len(cl.TabletServers)) {
		err = c.callNode(ctx, cl.TabletServers[i], key, req, resp)
		if err == nil || !IsNotSent(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// NodeConn returns the (possibly new) connection to a node, for callers that
// need the negotiated version (Conn.Version) before building a request.
func (c *Client) NodeConn(ctx context.Context, n Node) (*Conn, error) {
	conn, err := c.conn(ctx, n.Addr(), n.Type)
	if err != nil && shouldInvalidate(err) {
		c.Invalidate()
	}
	return conn, err
}

// CallNode sends a request to the given node.
func (c *Client) CallNode(ctx context.Context, n Node, key wire.APIKey, req, resp proto.Message) error {
	return c.callNode(ctx, n, key, req, resp)
}

func (c *Client) callNode(ctx context.Context, n Node, key wire.APIKey, req, resp proto.Message) error {
	err := c.callAddr(ctx, n.Addr(), n.Type, key, req, resp)
	if err != nil && shouldInvalidate(err) {
		c.Invalidate()
	}
	return err
}

// shouldInvalidate: the node list may be outdated after an unreachable
// server, a server-type mismatch, a metadata error code or a standby
// coordinator (Fluss 1.0 code 65).
func shouldInvalidate(err error) bool {
	e := AsError(err)
	if e == nil {
		return false
	}
	if e.Code == wire.CodeNotCoordinatorLeaderException {
		return true
	}
	return e.InvalidatesMetadata() && !errors.Is(e.Err, ErrClosed)
}

func (c *Client) callAddr(ctx context.Context, addr string, typ ServerType, key wire.APIKey, req, resp proto.Message) error {
	return c.callAddrLane(ctx, addr, 0, typ, key, req, resp, nil)
}

// callAddrLane calls over the lane-th connection to addr; written, if not
// nil, goes with the request itself (WithWritten), not with the dial.
func (c *Client) callAddrLane(ctx context.Context, addr string, lane int, typ ServerType, key wire.APIKey, req, resp proto.Message,
	written func()) error {
	conn, err := c.connLane(ctx, addr, lane, typ)
	if err != nil {
		if e := AsError(err); e != nil && e.API != key {
			// Report the dial failure under the API the caller asked for.
			cp := *e
			if cp.API != 0 {
				cp.Message = cp.API.String() + ": " + cp.Message
			}
			cp.API = key
			return &cp
		}
		return err
	}
	if written != nil {
		ctx = context.WithValue(ctx, writtenKey{}, written)
	}
	return conn.Call(ctx, key, req, resp)
}

// conn returns a live connection to addr, dialing one if needed. Concurrent
// callers share one dial. The dial runs detached from the caller's
// cancellation (bounded by DialTimeout) so that one impatient caller does not
// spoil the connection for the others.
func (c *Client) conn(ctx context.Context, addr string, typ ServerType) (*Conn, error) {
	return c.connLane(ctx, addr, 0, typ)
}

// connLane is conn for the lane-th connection to addr (see
// CallTabletServerLane).
func (c *Client) connLane(ctx context.Context, addr string, lane int, typ ServerType) (*Conn, error) {
	slot := addr
	if lane > 0 {
		slot = addr + "#" + strconv.Itoa(lane)
	}
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, &Error{Outcome: NotSent, Code: wire.CodeNetworkException, Addr: addr,
				Message: "client closed", Err: ErrClosed}
		}
		s := c.conns[slot]
		if s == nil {
			s = &connSlot{}
			c.conns[slot] = s
		}
		if s.conn != nil && s.conn.Err() == nil {
			conn := s.conn
			c.mu.Unlock()
			if typ != ServerUnknown && conn.ServerType() != ServerUnknown && conn.ServerType() != typ {
				return nil, &Error{Outcome: NotSent, Code: wire.CodeNetworkException, Addr: addr,
					Message: fmt.Sprintf("expected a %s, the server is a %s", typ, conn.ServerType()),
					Err:     ErrServerType, retriable: true}
			}
			return conn, nil
		}
		if s.dialing == nil {
			s.dialing = make(chan struct{})
			c.dials.Add(1) // under c.mu with closed false: before Close waits
			go c.dial(ctx, addr, typ, s)
		}
		wait := s.dialing
		c.mu.Unlock()

		select {
		case <-ctx.Done():
			return nil, contextError(NotSent, 0, addr, ctx.Err())
		case <-wait:
		}
		c.mu.Lock()
		conn, err := s.conn, s.err
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if conn != nil && conn.Err() == nil {
			continue // re-check the type under the common path
		}
		// The new connection died already; dial again.
	}
}

// dial connects to addr for the callers waiting on s. It keeps ctx's values
// (trace context) but not its cancellation: Close ends it, DialTimeout bounds it.
func (c *Client) dial(ctx context.Context, addr string, typ ServerType, s *connSlot) {
	defer c.dials.Done()
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer context.AfterFunc(c.life, cancel)()
	defer cancel()
	conn, err := Dial(ctx, addr, c.cfg.connConfig(typ))
	c.mu.Lock()
	closed := c.closed
	if s.conn != nil && s.conn != conn {
		_ = s.conn.Close()
	}
	s.conn, s.err = conn, err
	close(s.dialing)
	s.dialing = nil
	c.mu.Unlock()
	if closed && conn != nil {
		_ = conn.Close()
	}
}
