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
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/scan"
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
	// MaxUserSessions caps the connection sets of user mode, one per
	// distinct end user (`connection.max`; 0 means DefaultMaxUserSessions).
	MaxUserSessions int
	// UserIdleTimeout closes a user's connection set after it served no
	// request for that long (`connection.idle-timeout`; 0 means
	// DefaultUserIdleTimeout).
	UserIdleTimeout time.Duration
	// ProbePrincipal is the authorization id of the user-mode start probe;
	// it must differ from Username ("" means DefaultProbePrincipal).
	ProbePrincipal string
	// Now is the clock of the user pool (tests); nil is time.Now.
	Now func() time.Time
	// ClientVersion is reported to the servers in ApiVersions.
	ClientVersion string
	// Hooks are passed to the rpc layer (telemetry).
	Hooks []any
	// Writer configures the write accumulator and sender (zero values take
	// the writer package's defaults).
	Writer writer.Options
	// Lookup configures the lookup client.
	Lookup lookup.Options
	// Scan configures the log scanner.
	Scan scan.Options
	// Meta configures the table metadata cache.
	Meta meta.Options
}

// Cluster is an opened Fluss cluster backend.
//
// In service identity mode it performs no I/O when opened: the first
// request connects, so an unreachable cluster or a wrong password surfaces
// as KindUnavailable on requests, never as a failed start. Every principal
// shares one connection set (rpc client, metadata cache, writer, lookup)
// authenticated as the service account.
//
// In user identity mode (see userPool in users.go) each end user gets a
// connection set of its own, authenticated as the service account with the
// user as the SASL authorization id; Open first probes that the cluster
// accepts authorization ids.
type Cluster struct {
	cfg     Config
	log     *slog.Logger
	service *backend  // service mode
	users   *userPool // user mode

	closeOnce sync.Once
	closeErr  error
}

// backend is one connection set: an rpc client and everything built on it.
// Metadata is cached per backend, never shared between users: what the
// cluster lets one principal see (tables it may DESCRIBE, their ids and
// schemas) must not answer another principal's request.
type backend struct {
	client  *rpc.Client
	cache   *meta.Cache
	writer  *writer.Writer
	session *session
}

// newBackend builds a connection set; authzid is the SASL authorization id
// ("" in service mode). peers, when not nil, calls its argument with the
// metadata cache of every other open connection set of the cluster (user
// mode), so that DDL through one user's set is seen by the others too. It
// does no I/O.
func newBackend(cfg Config, authzid string, peers func(func(*meta.Cache)), log *slog.Logger) (*backend, error) {
	rc := rpc.Config{
		BootstrapServers: cfg.BootstrapServers,
		DialTimeout:      cfg.ConnectTimeout,
		RequestTimeout:   cfg.RequestTimeout,
		ClientName:       "fluss-gateway-go",
		ClientVersion:    cfg.ClientVersion,
		Hooks:            cfg.Hooks,
	}
	if cfg.Username != "" {
		rc.SASL = &rpc.SASLConfig{Mechanism: "PLAIN", Username: cfg.Username, Password: cfg.Password, AuthorizationID: authzid}
	}
	client, err := rpc.NewClient(rc)
	if err != nil {
		return nil, fmt.Errorf("fluss client: %w", err)
	}
	caller := meta.RPCCaller{Client: client}
	cache := meta.New(caller, cfg.Meta)
	w := writer.New(caller, cache, cfg.Writer)
	adm := admin.New(client)
	return &backend{
		client: client,
		cache:  cache,
		writer: w,
		session: &session{
			catalog: &invalidatingCatalog{Catalog: adm, cache: cache, peers: peers, log: log},
			writer:  w,
			lookup:  lookup.New(caller, cache, cfg.Lookup),
			scanner: scan.New(caller, cache, cfg.Scan),
			tables:  cacheDefinitions{cache: cache, catalog: adm},
		},
	}, nil
}

// close drains the writer (rows still queued when ctx ends fail with
// `unavailable`, applied "no") and releases every connection.
func (b *backend) close(ctx context.Context) error {
	werr := b.writer.Close(ctx)
	return errors.Join(werr, b.client.Close())
}

// Open builds the backend for one cluster. In service mode it fails only on
// an invalid configuration. In user mode it also probes, within ctx and the
// connect timeout, that the cluster accepts a SASL authorization id, and
// fails when the cluster rejects it (Fluss 0.9.1) or rejects the service
// account; an unreachable cluster is logged and probed again on first use.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (*Cluster, error) {
	if log == nil {
		log = slog.Default()
	}
	if len(cfg.BootstrapServers) == 0 {
		return nil, errors.New("no bootstrap servers configured")
	}
	c := &Cluster{cfg: cfg, log: log}
	if cfg.IdentityMode == IdentityUser {
		if cfg.Username == "" || cfg.Password == "" {
			return nil, errors.New("identity mode `user` needs SASL service credentials (connection.service.account and connection.service.secret)")
		}
		if _, err := rpc.NewClient(rpc.Config{BootstrapServers: cfg.BootstrapServers}); err != nil {
			return nil, fmt.Errorf("fluss client: %w", err)
		}
		u, err := newUserPool(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		c.users = u
		return c, nil
	}
	b, err := newBackend(cfg, "", nil, log)
	if err != nil {
		return nil, err
	}
	c.service = b
	return c, nil
}

// Client exposes the service-mode rpc client (for tests and diagnostics);
// nil in user mode, where every user has its own.
func (c *Cluster) Client() *rpc.Client {
	if c.service == nil {
		return nil
	}
	return c.service.client
}

// Session returns the session for p. In service identity mode every
// principal shares the cluster's connections; in user identity mode p's
// Fluss principal (ActAs when set, else Name) gets its own, created on
// demand (see userPool.session for the errors).
func (c *Cluster) Session(ctx context.Context, p domain.Principal) (domain.Session, error) {
	if c.users != nil {
		return c.users.session(ctx, p)
	}
	return c.service.session, nil
}

// Close drains the writers (rows still queued when ctx ends fail with
// `unavailable`, applied "no") and releases every connection. It is
// idempotent.
func (c *Cluster) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		if c.users != nil {
			c.closeErr = c.users.close(ctx)
			return
		}
		c.closeErr = c.service.close(ctx)
	})
	return c.closeErr
}

// invalidatingCatalog forwards to the admin Catalog and drops the metadata
// cache's entry of a table after DDL that changes it, so that writes and
// lookups through this gateway see the new table id, schema or partitions.
type invalidatingCatalog struct {
	domain.Catalog
	cache *meta.Cache
	peers func(func(*meta.Cache)) // nil in service mode
	log   *slog.Logger            // nil: slog.Default()
}

// invalidate drops path from this set's cache and every peer's.
func (c *invalidatingCatalog) invalidate(path domain.TablePath) {
	c.cache.Invalidate(path)
	if c.peers != nil {
		c.peers(func(m *meta.Cache) { m.Invalidate(path) })
	}
}

// announce tells this set's cache and every peer's the definition the
// coordinator has for path right after a create or alter through this
// catalog (meta.Cache.Expect), so that no cache takes an older definition
// from a server whose metadata has not caught up yet, and returns that
// definition. When the coordinator cannot be asked, path is only
// invalidated and ok is false.
func (c *invalidatingCatalog) announce(ctx context.Context, path domain.TablePath) (info domain.TableInfo, ok bool) {
	info, err := c.Catalog.GetTable(ctx, path)
	if err != nil {
		c.invalidate(path)
		return domain.TableInfo{}, false
	}
	c.cache.Expect(path, info.TableID, info.SchemaID)
	if c.peers != nil {
		c.peers(func(m *meta.Cache) { m.Expect(path, info.TableID, info.SchemaID) })
	}
	return info, true
}

// CreateTable creates the table and then waits, within ctx (less a margin
// to answer in), until every bucket has a leader (meta.Cache.AwaitLeaders),
// so that the table is writable when the creation is answered.
//
// The coordinator of Fluss 0.9.1 can lose the creation event of a table:
// TableChangeWatcher (a CuratorCache on /metadata/databases) only treats a
// NODE_CHANGED of the table znode as a creation, but MetadataManager
// creates that znode empty and fills it with setData right after, so when
// the cache's asynchronous getData runs after the setData the cache reports
// NODE_CREATED with the full registration and no NODE_CHANGED follows; the
// CreateTableEvent is never queued and the buckets never get leaders
// (fixed upstream after 0.9 by apache/fluss ab618ea6d, PR #2710). The window
// is a few ZooKeeper round trips, so it opens under load, typically while
// the coordinator is busy deleting another table.
//
// So when this call created the table (it did not exist before), the table
// is not partitioned, and after lostCreationWait (at most half the time
// left, and at least minLostCreationWait) none of its buckets has a leader while the path still holds the
// table id just created, the table is dropped and created again, once. That
// is safe: a bucket without a leader has no replica on any tablet server
// (the coordinator sends NotifyLeaderAndIsr only when it processes the
// creation event), so nothing can have been written to it, and its creation
// has not been answered yet. When the leaders still do not come in time the
// table exists but the answer is a KindUnavailable error naming it.
func (c *invalidatingCatalog) CreateTable(ctx context.Context, path domain.TablePath, desc domain.TableDescriptor, ignoreIfExists bool) error {
	start := time.Now()
	until := leaderDeadline(ctx, start)
	existed := false
	if ignoreIfExists {
		ok, err := c.Catalog.TableExists(ctx, path)
		existed = ok || err != nil // unknown: never repair
	}
	if err := c.Catalog.CreateTable(ctx, path, desc, ignoreIfExists); err != nil {
		c.invalidate(path)
		return err
	}
	info, known := c.announce(ctx, path)
	firstWait := min(lostCreationWait, until.Sub(start)/2)
	repairAt := start.Add(firstWait)
	if existed || !known || len(desc.PartitionKeys) > 0 || firstWait < minLostCreationWait {
		return c.cache.AwaitLeaders(ctx, path, until)
	}
	err := c.cache.AwaitLeaders(ctx, path, repairAt)
	if err == nil || domain.KindOf(err) != domain.KindUnavailable || ctx.Err() != nil {
		return err
	}
	id, missing, total, lerr := c.cache.BucketsWithoutLeader(ctx, path)
	if lerr != nil || id != info.TableID || total == 0 || missing != total {
		// Not (or no longer) the table we created, or some leaders came:
		// only wait.
		return c.cache.AwaitLeaders(ctx, path, until)
	}
	waited := time.Since(start).Round(time.Millisecond)
	c.logger().Warn("fluss: new table got no bucket leaders; dropping and creating it again once (Fluss 0.9.1 lost its creation event)",
		"table", path.String(), "table_id", info.TableID, "buckets", total, "waited", waited)
	if err := c.Catalog.DropTable(ctx, path, true); err != nil {
		c.invalidate(path)
		return &domain.Error{Kind: domain.KindUnavailable, Resource: domain.ResourceTable, Retryable: true, Cause: err,
			Message: fmt.Sprintf("table `%s` was created, but after %s none of its %d buckets had a leader, and dropping it to create it again failed: %v", path, waited, total, err)}
	}
	c.invalidate(path)
	if err := c.Catalog.CreateTable(ctx, path, desc, false); err != nil {
		c.invalidate(path)
		if domain.KindOf(err) != domain.KindAlreadyExists {
			return &domain.Error{Kind: domain.KindUnavailable, Resource: domain.ResourceTable, Retryable: true, Cause: err,
				Message: fmt.Sprintf("table `%s` was created, but after %s none of its %d buckets had a leader; it was dropped, and creating it again failed: %v", path, waited, total, err)}
		}
		// Someone else created it in between: wait for theirs.
	}
	c.announce(ctx, path)
	if err := c.cache.AwaitLeaders(ctx, path, until); err != nil {
		var de *domain.Error
		if errors.As(err, &de) && de.Kind == domain.KindUnavailable {
			out := *de
			out.Message += fmt.Sprintf(" (it was created again once, after its first creation got no leader in %s)", waited)
			return &out
		}
		return err
	}
	return nil
}

// lostCreationWait is how long a new table may go without any bucket leader
// before CreateTable takes its creation event for lost (at most half the
// time left to the leader deadline). A healthy coordinator elects them in
// well under a second.
const lostCreationWait = 5 * time.Second

// minLostCreationWait is the least wait after which a table without leaders
// is taken for lost: a request with less time than twice that only waits.
const minLostCreationWait = time.Second

func (c *invalidatingCatalog) logger() *slog.Logger {
	if c.log != nil {
		return c.log
	}
	return slog.Default()
}

// DefaultLeaderWait bounds the wait for the leaders of a new table when the
// request has no deadline.
const DefaultLeaderWait = 30 * time.Second

// leaderDeadline is when a create stops waiting for leaders: the request's
// deadline less a quarter of the time left (at most 500 ms) to answer in, or
// DefaultLeaderWait from now without a deadline.
func leaderDeadline(ctx context.Context, now time.Time) time.Time {
	dl, ok := ctx.Deadline()
	if !ok {
		return now.Add(DefaultLeaderWait)
	}
	return dl.Add(-max(0, min(500*time.Millisecond, dl.Sub(now)/4)))
}

func (c *invalidatingCatalog) AlterTable(ctx context.Context, path domain.TablePath, changes []domain.TableChange, ignoreIfNotExists bool) error {
	if err := c.Catalog.AlterTable(ctx, path, changes, ignoreIfNotExists); err != nil {
		c.invalidate(path)
		return err
	}
	c.announce(ctx, path)
	return nil
}

func (c *invalidatingCatalog) DropTable(ctx context.Context, path domain.TablePath, ignoreIfNotExists bool) error {
	defer c.invalidate(path)
	return c.Catalog.DropTable(ctx, path, ignoreIfNotExists)
}

func (c *invalidatingCatalog) CreatePartition(ctx context.Context, path domain.TablePath, spec domain.PartitionSpec, ignoreIfExists bool) error {
	defer c.invalidate(path)
	return c.Catalog.CreatePartition(ctx, path, spec, ignoreIfExists)
}

func (c *invalidatingCatalog) DropPartition(ctx context.Context, path domain.TablePath, spec domain.PartitionSpec, ignoreIfNotExists bool) error {
	defer c.invalidate(path)
	return c.Catalog.DropPartition(ctx, path, spec, ignoreIfNotExists)
}

func (c *invalidatingCatalog) DropDatabase(ctx context.Context, name string, ignoreIfNotExists, cascade bool) error {
	err := c.Catalog.DropDatabase(ctx, name, ignoreIfNotExists, cascade)
	c.cache.InvalidateDatabase(name)
	if c.peers != nil {
		c.peers(func(m *meta.Cache) { m.InvalidateDatabase(name) })
	}
	return err
}

// session binds the ports of one cluster for one principal.
type session struct {
	catalog domain.Catalog
	writer  domain.RowWriter
	lookup  domain.Lookup
	scanner domain.LogScanner
	tables  domain.TableDefinitions
}

// LogScanner implements domain.ScanSession: log and changelog reads.
func (s *session) LogScanner() domain.LogScanner { return s.scanner }

// Tables implements domain.TableSource: the application resolves the
// definitions it decodes requests against through the same metadata cache
// the writer and the lookup client encode with, and the catalog's DDL
// invalidates.
func (s *session) Tables() domain.TableDefinitions { return s.tables }

// cacheDefinitions serves domain.TableDefinitions from a metadata cache.
// GetMetadata leaves out the tables the principal may not DESCRIBE (Fluss's
// authorizer filters them), so a table the cache cannot find is asked of
// the catalog (GetTableInfo), whose answer tells a missing table (404) from
// one the principal may not see (403 `unauthorized` naming DESCRIBE).
type cacheDefinitions struct {
	cache   *meta.Cache
	catalog domain.Catalog
}

func (d cacheDefinitions) Table(ctx context.Context, path domain.TablePath) (domain.TableInfo, error) {
	t, err := d.cache.Table(ctx, path)
	if err != nil {
		return domain.TableInfo{}, d.why(ctx, path, err)
	}
	return t.Info, nil
}

// Refresh asks the coordinator for the table's current definition
// (GetTableInfo, read from ZooKeeper, so it already shows DDL made through
// another gateway or client) and, when that is newer than the cached one
// (another table id, a higher schema id), announces it to the cache
// (meta.Cache.Expect) so that the reload waits for the metadata of the
// answering server to catch up instead of caching an older schema (tablet
// servers learn of DDL asynchronously). When the coordinator shows the
// cached version, that is the answer. Without an answer from the
// coordinator it reloads as before.
func (d cacheDefinitions) Refresh(ctx context.Context, path domain.TablePath) (domain.TableInfo, error) {
	if d.catalog != nil {
		info, err := d.catalog.GetTable(ctx, path)
		if de := domain.AsError(err); de != nil && (de.Kind == domain.KindNotFound || de.Kind == domain.KindUnauthorized) {
			d.cache.Invalidate(path)
			return domain.TableInfo{}, err
		}
		if err == nil {
			if t, cerr := d.cache.Table(ctx, path); cerr == nil && t.ID() == info.TableID && t.Info.SchemaID >= info.SchemaID {
				return t.Info, nil
			}
			d.cache.Expect(path, info.TableID, info.SchemaID)
		}
	}
	t, err := d.cache.Reload(ctx, path)
	if err != nil {
		return domain.TableInfo{}, d.why(ctx, path, err)
	}
	return t.Info, nil
}

// why returns the catalog's error for a table the metadata did not show
// (authorization, or not found), else err.
func (d cacheDefinitions) why(ctx context.Context, path domain.TablePath, err error) error {
	if de := domain.AsError(err); d.catalog == nil || de == nil || de.Kind != domain.KindNotFound {
		return err
	}
	if _, cerr := d.catalog.GetTable(ctx, path); cerr != nil {
		return cerr
	}
	return err
}

func (s *session) Catalog() domain.Catalog  { return s.catalog }
func (s *session) Writer() domain.RowWriter { return s.writer }
func (s *session) Lookup() domain.Lookup    { return s.lookup }
