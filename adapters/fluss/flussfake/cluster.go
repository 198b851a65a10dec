package flussfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"google.golang.org/protobuf/proto"
)

// ClusterConfig configures a Cluster.
type ClusterConfig struct {
	// TabletServers is the number of tablet servers (default 1). Tablet
	// server ids are 0..n-1; the coordinator has id 0 too (separate namespace,
	// as in Fluss).
	TabletServers int
	// SASLUsers, when not nil, makes every listener require SASL/PLAIN.
	SASLUsers map[string]string
	// Impersonation is ServerConfig.Impersonation of every server.
	Impersonation map[string][]string
	// DataPlane makes the tablet servers serve InitWriter, PutKv,
	// ProduceLog, Lookup and PrefixLookup over an in-memory store (data.go).
	// Off, they serve metadata and catalog reads only, and tests register
	// their own handlers.
	DataPlane bool
}

// Cluster is a fake Fluss cluster: one coordinator and N tablet servers, each
// a Server on its own loopback port, sharing one in-memory Catalog.
// GetMetadata is served by every server; DDL only by the coordinator; catalog
// reads by every server; with ClusterConfig.DataPlane, writes and lookups
// by the tablet servers (data.go) (the real placement, apache/fluss CoordinatorService
// and TabletService both extending RpcServiceBase).
type Cluster struct {
	Coordinator   *Server
	TabletServers []*Server
	Catalog       *Catalog

	data *dataStore // guarded by Catalog.mu (data.go)

	mu       sync.Mutex
	withheld map[string]int // "db.table" → metadata answers still without leaders (<0: all)
	lagging  map[string]*lag
	toLose   map[string]int // "db.table" → tables still to lose (LoseCreations)
	lostSeen map[int64]bool // table ids whose creation LoseCreations lost
}

// lag is a table definition a server's metadata cache still serves.
type lag struct {
	left              int
	id                int64
	schemaID          int32
	json              []byte
	created, modified int64
}

// LagMetadata makes the next n metadata answers about database.table that
// follow a change of its definition (a re-create) still describe it as it is
// now, as a server whose metadata cache the coordinator has not updated yet
// does (apache/fluss RpcServiceBase#processMetadataRequest serves its cache
// first). The table must exist.
func (c *Cluster) LagMetadata(database, table string, n int) error {
	c.Catalog.mu.Lock()
	t, err := c.Catalog.tableLocked(database, table)
	c.Catalog.mu.Unlock()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lagging == nil {
		c.lagging = make(map[string]*lag)
	}
	c.lagging[database+"."+table] = &lag{left: n, id: t.id, schemaID: t.schemaID, json: t.json, created: t.created, modified: t.modified}
	return nil
}

// lagged returns the lagging definition to serve for database.table instead
// of t, counting it down, or nil.
func (c *Cluster) lagged(database, table string, t *table) *lag {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := database + "." + table
	l, ok := c.lagging[key]
	if !ok || (l.id == t.id && l.schemaID == t.schemaID) {
		return nil
	}
	if l.left--; l.left <= 0 {
		delete(c.lagging, key)
	}
	return l
}

// WithholdLeaders makes the next n metadata answers about database.table
// (of any server) carry its buckets without a leader, as Fluss does while
// the coordinator has not elected them yet, or never when their creation
// event was lost; n < 0 withholds them until called again with 0.
func (c *Cluster) WithholdLeaders(database, table string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.withheld == nil {
		c.withheld = make(map[string]int)
	}
	if n == 0 {
		delete(c.withheld, database+"."+table)
		return
	}
	c.withheld[database+"."+table] = n
}

// leadersWithheld reports (and counts down) whether this answer about
// database.table withholds its leaders.
func (c *Cluster) leadersWithheld(database, table string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := database + "." + table
	n, ok := c.withheld[key]
	switch {
	case !ok:
		return false
	case n > 1:
		c.withheld[key] = n - 1
	case n == 1:
		delete(c.withheld, key)
	}
	return true
}

// LoseCreations makes the next n tables created at database.table never get
// bucket leaders, as when the coordinator of Fluss 0.9.1 loses a table's
// creation event (TableChangeWatcher sees NODE_CREATED with the full
// registration and ignores it; fixed upstream by apache/fluss ab618ea6d):
// the table exists, but the coordinator's metadata answers carry its
// buckets without a leader until it is dropped, while the tablet servers'
// answers carry leaders anyway, as a Fluss 0.9.1 tablet server does right
// after a table is re-created at the same path (TabletServerMetadataCache
// #getTableMetadata pairs the new TableInfo from ZooKeeper with the bucket
// leaders of the dropped table still in its cache). A table is
// counted when a metadata answer first describes it after this call (so
// call it before creating them); tables created after
// the n lost ones get leaders as usual.
func (c *Cluster) LoseCreations(database, table string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.toLose == nil {
		c.toLose, c.lostSeen = make(map[string]int), make(map[int64]bool)
	}
	c.toLose[database+"."+table] = n
}

// creationLost reports whether the table with id at database.table is one
// whose creation LoseCreations lost, deciding it on its first answer.
func (c *Cluster) creationLost(database, table string, id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if lost, ok := c.lostSeen[id]; ok {
		return lost
	}
	key := database + "." + table
	if c.toLose[key] <= 0 {
		return false
	}
	c.toLose[key]--
	c.lostSeen[id] = true
	return true
}

// NewCluster starts a cluster. Close it when done.
func NewCluster(cfg ClusterConfig) (*Cluster, error) {
	if cfg.TabletServers <= 0 {
		cfg.TabletServers = 1
	}
	c := &Cluster{Catalog: NewCatalog()}
	cs, err := NewServer(ServerConfig{Type: TypeCoordinator, NodeID: 0, SASLUsers: cfg.SASLUsers, Impersonation: cfg.Impersonation})
	if err != nil {
		return nil, err
	}
	c.Coordinator = cs
	for i := 0; i < cfg.TabletServers; i++ {
		ts, err := NewServer(ServerConfig{Type: TypeTablet, NodeID: int32(i), SASLUsers: cfg.SASLUsers, Impersonation: cfg.Impersonation})
		if err != nil {
			c.Close()
			return nil, err
		}
		c.TabletServers = append(c.TabletServers, ts)
	}
	for _, s := range c.Servers() {
		s.Handle(wire.KeyGetMetadata, Typed(c.metadata))
		c.Catalog.register(s, s == c.Coordinator)
	}
	if cfg.DataPlane {
		c.registerData()
	}
	return c, nil
}

// Servers returns the coordinator followed by the tablet servers.
func (c *Cluster) Servers() []*Server {
	return append([]*Server{c.Coordinator}, c.TabletServers...)
}

// BootstrapAddr is the coordinator's address.
func (c *Cluster) BootstrapAddr() string { return c.Coordinator.Addr() }

// Close stops every server.
func (c *Cluster) Close() {
	for _, s := range c.Servers() {
		if s != nil {
			s.Close()
		}
	}
}

func serverNode(s *Server) *flusspb.PbServerNode {
	host, port, _ := net.SplitHostPort(s.Addr())
	p, _ := strconv.Atoi(port)
	return &flusspb.PbServerNode{NodeId: proto.Int32(s.NodeID()), Host: proto.String(host), Port: proto.Int32(int32(p))}
}

// metadata answers GetMetadata: the server list, plus bucket metadata for
// requested tables and partitions (bucket b led by tablet server b mod n).
func (c *Cluster) metadata(_ context.Context, r *Request, req *flusspb.MetadataRequest) (proto.Message, error) {
	resp := &flusspb.MetadataResponse{CoordinatorServer: serverNode(c.Coordinator)}
	for _, ts := range c.TabletServers {
		resp.TabletServers = append(resp.TabletServers, serverNode(ts))
	}
	cat := c.Catalog
	cat.mu.Lock()
	defer cat.mu.Unlock()
	for _, tp := range req.GetTablePath() {
		t, err := cat.tableLocked(tp.GetDatabaseName(), tp.GetTableName())
		if err != nil {
			// Fluss 0.9.1 wraps the TableNotExistException of
			// MetadataManager#getTables in a FlussRuntimeException, so the
			// answer is UNKNOWN_SERVER_ERROR with a stack trace.
			return nil, wire.NewServerError(wire.CodeUnknownServerError, fmt.Sprintf(
				"org.apache.fluss.exception.FlussRuntimeException: Failed to get tables '[%s.%s]'.\n"+
					"\tat org.apache.fluss.server.coordinator.MetadataManager.getTables(MetadataManager.java)\n"+
					"Caused by: org.apache.fluss.exception.TableNotExistException: Table '%s.%s' does not exist.",
				tp.GetDatabaseName(), tp.GetTableName(), tp.GetDatabaseName(), tp.GetTableName()))
		}
		tm := &flusspb.PbTableMetadata{
			TablePath: tp, TableId: proto.Int64(t.id), SchemaId: proto.Int32(t.schemaID), TableJson: t.json,
			CreatedTime: proto.Int64(t.created), ModifiedTime: proto.Int64(t.modified),
		}
		if l := c.lagged(tp.GetDatabaseName(), tp.GetTableName(), t); l != nil {
			tm.TableId, tm.SchemaId, tm.TableJson = proto.Int64(l.id), proto.Int32(l.schemaID), l.json
			tm.CreatedTime, tm.ModifiedTime = proto.Int64(l.created), proto.Int64(l.modified)
		}
		if len(t.partitionKeys) == 0 {
			tm.BucketMetadata = c.buckets(t.buckets)
			lost := c.creationLost(tp.GetDatabaseName(), tp.GetTableName(), t.id) && r.Server == c.Coordinator
			if c.leadersWithheld(tp.GetDatabaseName(), tp.GetTableName()) || lost {
				for _, b := range tm.BucketMetadata {
					b.LeaderId, b.ReplicaId = nil, nil
				}
			}
		}
		resp.TableMetadata = append(resp.TableMetadata, tm)
	}
	addPartition := func(t *table, p *partition) {
		resp.PartitionMetadata = append(resp.PartitionMetadata, &flusspb.PbPartitionMetadata{
			TableId: proto.Int64(t.id), PartitionName: proto.String(p.name), PartitionId: proto.Int64(p.id),
			BucketMetadata: c.buckets(t.buckets),
		})
	}
	for _, pp := range req.GetPartitionsPath() {
		t, err := cat.tableLocked(pp.GetDatabaseName(), pp.GetTableName())
		if err != nil {
			return nil, wire.NewServerError(wire.CodePartitionNotExists,
				fmt.Sprintf("Table partition '%s.%s(p=%s)' does not exist.",
					pp.GetDatabaseName(), pp.GetTableName(), pp.GetPartitionName()))
		}
		p, ok := t.partitions[pp.GetPartitionName()]
		if !ok {
			return nil, wire.NewServerError(wire.CodePartitionNotExists,
				fmt.Sprintf("Table partition '%s.%s(p=%s)' does not exist.",
					pp.GetDatabaseName(), pp.GetTableName(), pp.GetPartitionName()))
		}
		addPartition(t, p)
	}
	for _, id := range req.GetPartitionsId() {
		t, p := cat.partitionByIDLocked(id)
		if p == nil {
			return nil, wire.NewServerError(wire.CodePartitionNotExists, fmt.Sprintf("Partition id %d does not exist.", id))
		}
		addPartition(t, p)
	}
	return resp, nil
}

func (c *Cluster) buckets(n int) []*flusspb.PbBucketMetadata {
	out := make([]*flusspb.PbBucketMetadata, n)
	for b := range n {
		leader := c.TabletServers[b%len(c.TabletServers)].NodeID()
		out[b] = &flusspb.PbBucketMetadata{
			BucketId: proto.Int32(int32(b)), LeaderId: proto.Int32(leader), ReplicaId: []int32{leader},
			LeaderEpoch: proto.Int32(0),
		}
	}
	return out
}

// Catalog is the fake's in-memory catalog of databases, tables and
// partitions. Table JSON is stored as sent; only partition_key and
// bucket_count are interpreted.
type Catalog struct {
	mu        sync.Mutex
	dbs       map[string]*database
	nextTable int64
	nextPart  int64
	now       func() time.Time
}

type database struct {
	json              []byte
	created, modified int64
	tables            map[string]*table
}

type table struct {
	id                int64
	schemaID          int32
	json              []byte
	created, modified int64
	partitionKeys     []string
	buckets           int
	partitions        map[string]*partition
	// schemas holds the schema JSON of every schema id (GetTableSchema).
	schemas map[int32][]byte
}

type partition struct {
	id   int64
	name string
	spec []*flusspb.PbKeyValue
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog {
	return &Catalog{dbs: make(map[string]*database), now: time.Now}
}

// Databases returns the database names, sorted.
func (c *Catalog) Databases() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sortedNames(c.dbs)
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (c *Catalog) register(s *Server, coordinator bool) {
	if coordinator {
		s.Handle(wire.KeyCreateDatabase, Typed(c.createDatabase))
		s.Handle(wire.KeyDropDatabase, Typed(c.dropDatabase))
		s.Handle(wire.KeyCreateTable, Typed(c.createTable))
		s.Handle(wire.KeyDropTable, Typed(c.dropTable))
		s.Handle(wire.KeyCreatePartition, Typed(c.createPartition))
		s.Handle(wire.KeyDropPartition, Typed(c.dropPartition))
		s.Handle(wire.KeyAlterTable, Typed(c.alterTable))
	}
	s.Handle(wire.KeyListDatabases, Typed(c.listDatabases))
	s.Handle(wire.KeyDatabaseExists, Typed(c.databaseExists))
	s.Handle(wire.KeyGetDatabaseInfo, Typed(c.getDatabaseInfo))
	s.Handle(wire.KeyListTables, Typed(c.listTables))
	s.Handle(wire.KeyTableExists, Typed(c.tableExists))
	s.Handle(wire.KeyGetTableInfo, Typed(c.getTableInfo))
	s.Handle(wire.KeyGetTableSchema, Typed(c.getTableSchema))
	s.Handle(wire.KeyListPartitionInfos, Typed(c.listPartitionInfos))
}

// validName mirrors apache/fluss TablePath.detectInvalidName/validatePrefix.
func validName(n string) string {
	switch {
	case n == "":
		return "the empty string is not allowed"
	case n == "." || n == "..":
		return fmt.Sprintf("'%s' is not allowed", n)
	case len(n) > 200:
		return "the name is longer than the max allowed length 200"
	case strings.HasPrefix(n, "__"):
		return "'__' is not allowed as prefix, since it is reserved for internal databases/internal tables/internal partitions in Fluss server"
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Sprintf("'%s' contains one or more characters other than ASCII alphanumerics, '_' and '-'", n)
		}
	}
	return ""
}

func dbNotExist(name string) error {
	return wire.NewServerError(wire.CodeDatabaseNotExist, fmt.Sprintf("Database %s does not exist.", name))
}

func (c *Catalog) createDatabase(_ context.Context, _ *Request, req *flusspb.CreateDatabaseRequest) (proto.Message, error) {
	name := req.GetDatabaseName()
	if msg := validName(name); msg != "" {
		return nil, wire.NewServerError(wire.CodeInvalidDatabaseException, fmt.Sprintf("Database name %s is invalid: %s", name, msg))
	}
	js := req.GetDatabaseJson()
	if js == nil {
		js = []byte(`{"version":1,"custom_properties":{}}`)
	} else if !json.Valid(js) {
		return nil, wire.NewServerError(wire.CodeUnknownServerError, "invalid database JSON")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.dbs[name]; ok {
		if req.GetIgnoreIfExists() {
			return &flusspb.CreateDatabaseResponse{}, nil
		}
		return nil, wire.NewServerError(wire.CodeDatabaseAlreadyExist, fmt.Sprintf("Database %s already exists.", name))
	}
	now := c.now().UnixMilli()
	c.dbs[name] = &database{json: js, created: now, modified: now, tables: make(map[string]*table)}
	return &flusspb.CreateDatabaseResponse{}, nil
}

func (c *Catalog) dropDatabase(_ context.Context, _ *Request, req *flusspb.DropDatabaseRequest) (proto.Message, error) {
	name := req.GetDatabaseName()
	c.mu.Lock()
	defer c.mu.Unlock()
	db, ok := c.dbs[name]
	if !ok {
		if req.GetIgnoreIfNotExists() {
			return &flusspb.DropDatabaseResponse{}, nil
		}
		return nil, dbNotExist(name)
	}
	if len(db.tables) > 0 && !req.GetCascade() {
		return nil, wire.NewServerError(wire.CodeDatabaseNotEmpty, fmt.Sprintf("Database %s is not empty.", name))
	}
	delete(c.dbs, name)
	return &flusspb.DropDatabaseResponse{}, nil
}

func (c *Catalog) listDatabases(_ context.Context, _ *Request, req *flusspb.ListDatabasesRequest) (proto.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := &flusspb.ListDatabasesResponse{}
	for _, n := range sortedNames(c.dbs) {
		if req.GetIncludeSummary() {
			db := c.dbs[n]
			resp.DatabaseSummary = append(resp.DatabaseSummary, &flusspb.PbDatabaseSummary{
				DatabaseName: proto.String(n), CreatedTime: proto.Int64(db.created), TableCount: proto.Int32(int32(len(db.tables))),
			})
		} else {
			resp.DatabaseName = append(resp.DatabaseName, n)
		}
	}
	return resp, nil
}

func (c *Catalog) databaseExists(_ context.Context, _ *Request, req *flusspb.DatabaseExistsRequest) (proto.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.dbs[req.GetDatabaseName()]
	return &flusspb.DatabaseExistsResponse{Exists: proto.Bool(ok)}, nil
}

func (c *Catalog) getDatabaseInfo(_ context.Context, _ *Request, req *flusspb.GetDatabaseInfoRequest) (proto.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	db, ok := c.dbs[req.GetDatabaseName()]
	if !ok {
		return nil, wire.NewServerError(wire.CodeDatabaseNotExist,
			fmt.Sprintf("Database '%s' does not exist.", req.GetDatabaseName()))
	}
	return &flusspb.GetDatabaseInfoResponse{
		DatabaseJson: db.json, CreatedTime: proto.Int64(db.created), ModifiedTime: proto.Int64(db.modified),
	}, nil
}

func (c *Catalog) tableLocked(dbName, tableName string) (*table, error) {
	db, ok := c.dbs[dbName]
	var t *table
	if ok {
		t = db.tables[tableName]
	}
	if t == nil {
		return nil, wire.NewServerError(wire.CodeTableNotExist,
			fmt.Sprintf("Table '%s.%s' does not exist.", dbName, tableName))
	}
	return t, nil
}

func (c *Catalog) partitionByIDLocked(id int64) (*table, *partition) {
	for _, db := range c.dbs {
		for _, t := range db.tables {
			for _, p := range t.partitions {
				if p.id == id {
					return t, p
				}
			}
		}
	}
	return nil, nil
}

func (c *Catalog) createTable(_ context.Context, _ *Request, req *flusspb.CreateTableRequest) (proto.Message, error) {
	tp := req.GetTablePath()
	if msg := validName(tp.GetTableName()); msg != "" {
		return nil, wire.NewServerError(wire.CodeInvalidTableException,
			fmt.Sprintf("Table name %s is invalid: %s", tp.GetTableName(), msg))
	}
	var desc struct {
		Schema       json.RawMessage `json:"schema"`
		PartitionKey []string        `json:"partition_key"`
		BucketCount  *int            `json:"bucket_count"`
	}
	if err := json.Unmarshal(req.GetTableJson(), &desc); err != nil || desc.Schema == nil || desc.PartitionKey == nil {
		return nil, wire.NewServerError(wire.CodeInvalidTableException, "invalid table JSON: schema and partition_key are required")
	}
	buckets := 1
	if desc.BucketCount != nil {
		buckets = *desc.BucketCount
	}
	if buckets <= 0 {
		return nil, wire.NewServerError(wire.CodeInvalidTableException, "bucket count must be positive")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	db, ok := c.dbs[tp.GetDatabaseName()]
	if !ok {
		return nil, dbNotExist(tp.GetDatabaseName())
	}
	if _, exists := db.tables[tp.GetTableName()]; exists {
		if req.GetIgnoreIfExists() {
			return &flusspb.CreateTableResponse{}, nil
		}
		return nil, wire.NewServerError(wire.CodeTableAlreadyExist,
			fmt.Sprintf("Table %s.%s already exists.", tp.GetDatabaseName(), tp.GetTableName()))
	}
	c.nextTable++
	now := c.now().UnixMilli()
	db.tables[tp.GetTableName()] = &table{
		id: c.nextTable, schemaID: 1, json: req.GetTableJson(), created: now, modified: now,
		partitionKeys: desc.PartitionKey, buckets: buckets, partitions: make(map[string]*partition),
		schemas: map[int32][]byte{1: desc.Schema},
	}
	return &flusspb.CreateTableResponse{}, nil
}

func (c *Catalog) dropTable(_ context.Context, _ *Request, req *flusspb.DropTableRequest) (proto.Message, error) {
	tp := req.GetTablePath()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.tableLocked(tp.GetDatabaseName(), tp.GetTableName()); err != nil {
		if req.GetIgnoreIfNotExists() {
			return &flusspb.DropTableResponse{}, nil
		}
		return nil, err
	}
	delete(c.dbs[tp.GetDatabaseName()].tables, tp.GetTableName())
	return &flusspb.DropTableResponse{}, nil
}

func (c *Catalog) listTables(_ context.Context, _ *Request, req *flusspb.ListTablesRequest) (proto.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	db, ok := c.dbs[req.GetDatabaseName()]
	if !ok {
		return nil, dbNotExist(req.GetDatabaseName())
	}
	return &flusspb.ListTablesResponse{TableName: sortedNames(db.tables)}, nil
}

func (c *Catalog) tableExists(_ context.Context, _ *Request, req *flusspb.TableExistsRequest) (proto.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.tableLocked(req.GetTablePath().GetDatabaseName(), req.GetTablePath().GetTableName())
	return &flusspb.TableExistsResponse{Exists: proto.Bool(err == nil)}, nil
}

func (c *Catalog) getTableInfo(_ context.Context, _ *Request, req *flusspb.GetTableInfoRequest) (proto.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.tableLocked(req.GetTablePath().GetDatabaseName(), req.GetTablePath().GetTableName())
	if err != nil {
		return nil, err
	}
	return &flusspb.GetTableInfoResponse{
		TableId: proto.Int64(t.id), SchemaId: proto.Int32(t.schemaID), TableJson: t.json,
		CreatedTime: proto.Int64(t.created), ModifiedTime: proto.Int64(t.modified),
	}, nil
}

// partitionName validates a full spec against the table's partition keys and
// returns the '$'-joined name.
func (t *table) partitionName(path string, spec *flusspb.PbPartitionSpec) (string, error) {
	if len(t.partitionKeys) == 0 {
		return "", wire.NewServerError(wire.CodeTableNotPartitionedException, fmt.Sprintf("Table %s is not partitioned.", path))
	}
	vals := make(map[string]string)
	for _, kv := range spec.GetPartitionKeyValues() {
		vals[kv.GetKey()] = kv.GetValue()
	}
	parts := make([]string, 0, len(t.partitionKeys))
	for _, k := range t.partitionKeys {
		v, ok := vals[k]
		if !ok || v == "" {
			return "", wire.NewServerError(wire.CodePartitionSpecInvalidException,
				fmt.Sprintf("partition spec misses a value for partition key %s", k))
		}
		parts = append(parts, v)
	}
	if len(vals) != len(t.partitionKeys) {
		return "", wire.NewServerError(wire.CodePartitionSpecInvalidException, "partition spec names keys that are not partition keys")
	}
	return strings.Join(parts, "$"), nil
}

func (c *Catalog) createPartition(_ context.Context, _ *Request, req *flusspb.CreatePartitionRequest) (proto.Message, error) {
	tp := req.GetTablePath()
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.tableLocked(tp.GetDatabaseName(), tp.GetTableName())
	if err != nil {
		return nil, err
	}
	name, err := t.partitionName(tp.GetDatabaseName()+"."+tp.GetTableName(), req.GetPartitionSpec())
	if err != nil {
		return nil, err
	}
	if _, ok := t.partitions[name]; ok {
		// Field 3 is misnamed ignore_if_not_exists; it means "ignore if exists".
		if req.GetIgnoreIfNotExists() {
			return &flusspb.CreatePartitionResponse{}, nil
		}
		return nil, wire.NewServerError(wire.CodePartitionAlreadyExists, fmt.Sprintf("Partition %s already exists.", name))
	}
	c.nextPart++
	t.partitions[name] = &partition{id: c.nextPart, name: name, spec: req.GetPartitionSpec().GetPartitionKeyValues()}
	return &flusspb.CreatePartitionResponse{}, nil
}

func (c *Catalog) dropPartition(_ context.Context, _ *Request, req *flusspb.DropPartitionRequest) (proto.Message, error) {
	tp := req.GetTablePath()
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.tableLocked(tp.GetDatabaseName(), tp.GetTableName())
	if err != nil {
		return nil, err
	}
	name, err := t.partitionName(tp.GetDatabaseName()+"."+tp.GetTableName(), req.GetPartitionSpec())
	if err != nil {
		return nil, err
	}
	if _, ok := t.partitions[name]; !ok {
		if req.GetIgnoreIfNotExists() {
			return &flusspb.DropPartitionResponse{}, nil
		}
		return nil, wire.NewServerError(wire.CodePartitionNotExists, fmt.Sprintf("Partition %s does not exist.", name))
	}
	delete(t.partitions, name)
	return &flusspb.DropPartitionResponse{}, nil
}

func (c *Catalog) listPartitionInfos(_ context.Context, _ *Request, req *flusspb.ListPartitionInfosRequest) (proto.Message, error) {
	tp := req.GetTablePath()
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.tableLocked(tp.GetDatabaseName(), tp.GetTableName())
	if err != nil {
		return nil, err
	}
	if len(t.partitionKeys) == 0 {
		return nil, wire.NewServerError(wire.CodeTableNotPartitionedException,
			fmt.Sprintf("Table %s.%s is not partitioned.", tp.GetDatabaseName(), tp.GetTableName()))
	}
	filter := req.GetPartialPartitionSpec().GetPartitionKeyValues()
	resp := &flusspb.ListPartitionInfosResponse{}
	for _, name := range sortedNames(t.partitions) {
		p := t.partitions[name]
		if !matches(p.spec, filter) {
			continue
		}
		resp.PartitionsInfo = append(resp.PartitionsInfo, &flusspb.PbPartitionInfo{
			PartitionId: proto.Int64(p.id), PartitionSpec: &flusspb.PbPartitionSpec{PartitionKeyValues: p.spec},
		})
	}
	return resp, nil
}

func matches(spec, filter []*flusspb.PbKeyValue) bool {
	for _, f := range filter {
		ok := false
		for _, kv := range spec {
			if kv.GetKey() == f.GetKey() && kv.GetValue() == f.GetValue() {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
