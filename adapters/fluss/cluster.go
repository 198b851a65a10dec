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
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/lookup"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
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
	// Writer configures the write accumulator and sender (zero values take
	// the writer package's defaults).
	Writer writer.Options
	// Lookup configures the lookup client.
	Lookup lookup.Options
	// Meta configures the table metadata cache.
	Meta meta.Options
}

// Cluster is an opened Fluss cluster backend. It performs no I/O when opened:
// the first request connects, so an unreachable cluster or a wrong password
// surfaces as KindUnavailable on requests, never as a failed start.
type Cluster struct {
	cfg     Config
	log     *slog.Logger
	client  *rpc.Client
	cache   *meta.Cache
	writer  *writer.Writer
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
	caller := meta.RPCCaller{Client: client}
	cache := meta.New(caller, cfg.Meta)
	w := writer.New(caller, cache, cfg.Writer)
	c := &Cluster{cfg: cfg, log: log, client: client, cache: cache, writer: w}
	c.session = &session{
		catalog: &invalidatingCatalog{Catalog: admin.New(client), cache: cache},
		writer:  w,
		lookup:  lookup.New(caller, cache, cfg.Lookup),
	}
	return c, nil
}

// Client exposes the underlying rpc client (for tests and diagnostics).
func (c *Cluster) Client() *rpc.Client { return c.client }

// Session returns the session for p. In service identity mode every
// principal shares the cluster's connections.
func (c *Cluster) Session(_ context.Context, _ domain.Principal) (domain.Session, error) {
	return c.session, nil
}

// Close drains the writer (rows still queued when ctx ends fail with
// `unavailable`, applied "no") and releases every connection. It is idempotent.
func (c *Cluster) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		werr := c.writer.Close(ctx)
		c.closeErr = errors.Join(werr, c.client.Close())
	})
	return c.closeErr
}

// invalidatingCatalog forwards to the admin Catalog and drops the metadata
// cache's entry of a table after DDL that changes it, so that writes and
// lookups through this gateway see the new table id, schema or partitions.
type invalidatingCatalog struct {
	domain.Catalog
	cache *meta.Cache
}

func (c *invalidatingCatalog) CreateTable(ctx context.Context, path domain.TablePath, desc domain.TableDescriptor, ignoreIfExists bool) error {
	defer c.cache.Invalidate(path)
	return c.Catalog.CreateTable(ctx, path, desc, ignoreIfExists)
}

func (c *invalidatingCatalog) AlterTable(ctx context.Context, path domain.TablePath, changes []domain.TableChange, ignoreIfNotExists bool) error {
	defer c.cache.Invalidate(path)
	return c.Catalog.AlterTable(ctx, path, changes, ignoreIfNotExists)
}

func (c *invalidatingCatalog) DropTable(ctx context.Context, path domain.TablePath, ignoreIfNotExists bool) error {
	defer c.cache.Invalidate(path)
	return c.Catalog.DropTable(ctx, path, ignoreIfNotExists)
}

func (c *invalidatingCatalog) CreatePartition(ctx context.Context, path domain.TablePath, spec domain.PartitionSpec, ignoreIfExists bool) error {
	defer c.cache.Invalidate(path)
	return c.Catalog.CreatePartition(ctx, path, spec, ignoreIfExists)
}

func (c *invalidatingCatalog) DropPartition(ctx context.Context, path domain.TablePath, spec domain.PartitionSpec, ignoreIfNotExists bool) error {
	defer c.cache.Invalidate(path)
	return c.Catalog.DropPartition(ctx, path, spec, ignoreIfNotExists)
}

func (c *invalidatingCatalog) DropDatabase(ctx context.Context, name string, ignoreIfNotExists, cascade bool) error {
	err := c.Catalog.DropDatabase(ctx, name, ignoreIfNotExists, cascade)
	c.cache.InvalidateDatabase(name)
	return err
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
