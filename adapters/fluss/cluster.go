// Package fluss is the outbound adapter towards one Apache Fluss cluster. It
// composes the protocol packages (rpc, admin, meta, writer, lookup) into a
// Cluster that hands out domain.Session values: the ports the application
// layer uses for catalog DDL, row writes and lookups.
package fluss

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/admin"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// IdentityMode selects how the gateway authenticates towards Fluss.
type IdentityMode string

// Identity modes (`gateway.cluster.<id>.connection.identity-mode`).
const (
	// IdentityService shares one connection set per cluster, authenticated as
	// the service account.
	IdentityService IdentityMode = "service"
	// IdentityUser opens connections per end user: SASL/PLAIN as the service
	// account with the end user as the authorization id.
	IdentityUser IdentityMode = "user"
)

// Config configures one cluster backend.
type Config struct {
	// ID is the cluster id (the `{cluster}` path segment), used in messages.
	ID string
	// BootstrapServers are host:port seeds, usually the coordinator's client listener.
	BootstrapServers []string
	// ConnectTimeout bounds dialing plus the connection handshake (ApiVersions,
	// Authenticate). Zero means the rpc default.
	ConnectTimeout time.Duration
	// RequestTimeout bounds each RPC whose context has no earlier deadline.
	RequestTimeout time.Duration
	// Username and Password, when Username is set, authenticate every
	// connection with SASL/PLAIN.
	Username string
	Password string
	// IdentityMode is service (default) or user.
	IdentityMode IdentityMode
	// ClientVersion is reported to the servers in ApiVersions.
	ClientVersion string
	// Hooks are passed to the rpc layer (telemetry).
	Hooks []any
}

// Cluster is an opened Fluss cluster backend. It performs no I/O when opened:
// the first request connects, so an unreachable cluster or a wrong password
// surfaces as KindUnavailable on requests, never as a failed start.
type Cluster struct {
	cfg     Config
	log     *slog.Logger
	client  *rpc.Client
	session *session

	closeOnce sync.Once
	closeErr  error
}

// Open builds the backend for one cluster. It fails only on an invalid
// configuration (no bootstrap servers, user identity mode, which needs a
// Fluss server that accepts a SASL authorization id).
func Open(_ context.Context, cfg Config, log *slog.Logger) (*Cluster, error) {
	if log == nil {
		log = slog.Default()
	}
	if len(cfg.BootstrapServers) == 0 {
		return nil, errors.New("no bootstrap servers configured")
	}
	if cfg.IdentityMode == IdentityUser {
		return nil, errors.New("identity mode `user` is not available yet: it needs SASL authorization ids (act-as), " +
			"which Fluss 0.9.1 rejects (apache/fluss PR #3857); use identity mode `service`")
	}
	rc := rpc.Config{
		BootstrapServers: cfg.BootstrapServers,
		DialTimeout:      cfg.ConnectTimeout,
		RequestTimeout:   cfg.RequestTimeout,
		ClientName:       "fluss-gateway-go",
		ClientVersion:    cfg.ClientVersion,
		Hooks:            cfg.Hooks,
	}
	if cfg.Username != "" {
		rc.SASL = &rpc.SASLConfig{Mechanism: "PLAIN", Username: cfg.Username, Password: cfg.Password}
	}
	client, err := rpc.NewClient(rc)
	if err != nil {
		return nil, fmt.Errorf("fluss client: %w", err)
	}
	c := &Cluster{cfg: cfg, log: log, client: client}
	c.session = &session{catalog: admin.New(client)}
	return c, nil
}

// Client exposes the underlying rpc client (for tests and diagnostics).
func (c *Cluster) Client() *rpc.Client { return c.client }

// Session returns the session for p. In service identity mode every
// principal shares the cluster's connections.
func (c *Cluster) Session(_ context.Context, _ domain.Principal) (domain.Session, error) {
	return c.session, nil
}

// Close releases every connection. It is idempotent.
func (c *Cluster) Close(_ context.Context) error {
	c.closeOnce.Do(func() { c.closeErr = c.client.Close() })
	return c.closeErr
}

// session binds the ports of one cluster for one principal.
type session struct {
	catalog domain.Catalog
	writer  domain.RowWriter
	lookup  domain.Lookup
}

func (s *session) Catalog() domain.Catalog  { return s.catalog }
func (s *session) Writer() domain.RowWriter { return s.writer }
func (s *session) Lookup() domain.Lookup    { return s.lookup }
