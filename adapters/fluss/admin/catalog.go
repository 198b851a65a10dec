// Package admin implements domain.Catalog against a Fluss cluster: database,
// table and partition DDL and metadata through the coordinator, with Fluss
// error codes translated into domain errors.
//
// JSON payloads (database_json, table_json, data_type_json) are written and
// read with the Fluss JSON serde (adapters/fluss/serde). The catalog
// does not validate its input beyond what is needed to build a request; the
// application validates, and the server's own rejections come back as
// KindInvalidArgument.
package admin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/serde"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"google.golang.org/protobuf/proto"
)

// Coordinator is what the catalog needs from the RPC layer: a call routed to
// the cluster's coordinator server. *rpc.Client implements it.
type Coordinator interface {
	CallCoordinator(ctx context.Context, key wire.APIKey, req, resp proto.Message) error
}

// Catalog implements domain.Catalog for one cluster and one principal (the
// identity of the underlying connection). All calls, reads included, go to
// the coordinator: it serves every catalog API, and reading from the node
// that applied the DDL gives read-your-writes without waiting for tablet
// servers to catch up.
type Catalog struct {
	rpc Coordinator
}

var _ domain.Catalog = (*Catalog)(nil)

// New returns a Catalog that sends its requests through c.
func New(c Coordinator) *Catalog { return &Catalog{rpc: c} }

// Fluss PbAlterConfig.op_type values (FlussApi.proto: SET=0, DELETE=1).
const (
	alterOpSet    = 0
	alterOpDelete = 1
)

// PbAddColumn.column_position_type LAST, the only position Fluss 0.9.1
// implements.
const columnPositionLast = 0

func dbWhat(name string) string { return "database " + strconv.Quote(name) }

func tableWhat(p domain.TablePath) string { return "table " + strconv.Quote(p.String()) }

func pbPath(p domain.TablePath) *flusspb.PbTablePath {
	return &flusspb.PbTablePath{DatabaseName: proto.String(p.Database), TableName: proto.String(p.Table)}
}

func pbSpec(spec domain.PartitionSpec) *flusspb.PbPartitionSpec {
	out := &flusspb.PbPartitionSpec{PartitionKeyValues: make([]*flusspb.PbKeyValue, len(spec))}
	for i, pv := range spec {
		out.PartitionKeyValues[i] = &flusspb.PbKeyValue{Key: proto.String(pv.Key), Value: proto.String(pv.Value)}
	}
	return out
}

func millis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// backendDecode reports a server payload the gateway could not read.
func backendDecode(api wire.APIKey, what string, err error) error {
	return &domain.Error{Kind: domain.KindBackend, Cause: err,
		Message: fmt.Sprintf("%s on %s: cannot read the JSON returned by Fluss: %v", api, what, err)}
}

// ListDatabases returns the database names, sorted (LIST_DATABASES, 1003).
func (c *Catalog) ListDatabases(ctx context.Context) ([]string, error) {
	var resp flusspb.ListDatabasesResponse
	if err := c.rpc.CallCoordinator(ctx, wire.KeyListDatabases, &flusspb.ListDatabasesRequest{}, &resp); err != nil {
		return nil, toDomain(err, op{api: wire.KeyListDatabases, what: "the cluster", idempotent: true})
	}
	names := slices.Clone(resp.GetDatabaseName())
	slices.Sort(names)
	return names, nil
}

// DatabaseExists reports whether the database exists (DATABASE_EXISTS, 1004).
func (c *Catalog) DatabaseExists(ctx context.Context, name string) (bool, error) {
	var resp flusspb.DatabaseExistsResponse
	err := c.rpc.CallCoordinator(ctx, wire.KeyDatabaseExists,
		&flusspb.DatabaseExistsRequest{DatabaseName: proto.String(name)}, &resp)
	if err != nil {
		return false, toDomain(err, op{api: wire.KeyDatabaseExists, what: dbWhat(name), idempotent: true})
	}
	return resp.GetExists(), nil
}

// GetDatabase returns the database's descriptor and times
// (GET_DATABASE_INFO, 1035). A missing database is KindNotFound/database.
func (c *Catalog) GetDatabase(ctx context.Context, name string) (domain.DatabaseInfo, error) {
	o := op{api: wire.KeyGetDatabaseInfo, what: dbWhat(name), idempotent: true}
	var resp flusspb.GetDatabaseInfoResponse
	err := c.rpc.CallCoordinator(ctx, wire.KeyGetDatabaseInfo,
		&flusspb.GetDatabaseInfoRequest{DatabaseName: proto.String(name)}, &resp)
	if err != nil {
		return domain.DatabaseInfo{}, toDomain(err, o)
	}
	desc, err := serde.UnmarshalDatabaseDescriptorJSON(resp.GetDatabaseJson())
	if err != nil {
		return domain.DatabaseInfo{}, backendDecode(o.api, o.what, err)
	}
	return domain.DatabaseInfo{
		Name:         name,
		Descriptor:   desc,
		CreatedTime:  millis(resp.GetCreatedTime()),
		ModifiedTime: millis(resp.GetModifiedTime()),
	}, nil
}

// CreateDatabase creates a database (CREATE_DATABASE, 1001). An existing
// database is KindAlreadyExists/database unless ignoreIfExists; an invalid
// name is KindInvalidArgument.
func (c *Catalog) CreateDatabase(ctx context.Context, name string, desc domain.DatabaseDescriptor, ignoreIfExists bool) error {
	js, err := serde.MarshalDatabaseDescriptorJSON(desc)
	if err != nil {
		return err
	}
	err = c.rpc.CallCoordinator(ctx, wire.KeyCreateDatabase, &flusspb.CreateDatabaseRequest{
		DatabaseName:   proto.String(name),
		IgnoreIfExists: proto.Bool(ignoreIfExists),
		DatabaseJson:   js,
	}, &flusspb.CreateDatabaseResponse{})
	return toDomain(err, op{api: wire.KeyCreateDatabase, what: dbWhat(name), idempotent: ignoreIfExists})
}

// DropDatabase drops a database (DROP_DATABASE, 1002). Without cascade a
// database that still holds tables fails with KindNotEmpty; a missing one is
// KindNotFound/database unless ignoreIfNotExists.
func (c *Catalog) DropDatabase(ctx context.Context, name string, ignoreIfNotExists, cascade bool) error {
	err := c.rpc.CallCoordinator(ctx, wire.KeyDropDatabase, &flusspb.DropDatabaseRequest{
		DatabaseName:      proto.String(name),
		IgnoreIfNotExists: proto.Bool(ignoreIfNotExists),
		Cascade:           proto.Bool(cascade),
	}, &flusspb.DropDatabaseResponse{})
	return toDomain(err, op{api: wire.KeyDropDatabase, what: dbWhat(name), idempotent: ignoreIfNotExists})
}

// ListTables returns the table names of a database, sorted (LIST_TABLES,
// 1008). A missing database is KindNotFound/database.
func (c *Catalog) ListTables(ctx context.Context, database string) ([]string, error) {
	var resp flusspb.ListTablesResponse
	err := c.rpc.CallCoordinator(ctx, wire.KeyListTables,
		&flusspb.ListTablesRequest{DatabaseName: proto.String(database)}, &resp)
	if err != nil {
		return nil, toDomain(err, op{api: wire.KeyListTables, what: dbWhat(database), idempotent: true})
	}
	names := slices.Clone(resp.GetTableName())
	slices.Sort(names)
	return names, nil
}

// TableExists reports whether the table exists (TABLE_EXISTS, 1010).
func (c *Catalog) TableExists(ctx context.Context, path domain.TablePath) (bool, error) {
	var resp flusspb.TableExistsResponse
	err := c.rpc.CallCoordinator(ctx, wire.KeyTableExists, &flusspb.TableExistsRequest{TablePath: pbPath(path)}, &resp)
	if err != nil {
		return false, toDomain(err, op{api: wire.KeyTableExists, what: tableWhat(path), idempotent: true})
	}
	return resp.GetExists(), nil
}

// GetTable returns the table's id, current schema id, descriptor (as stored
// by the server, defaults applied) and times (GET_TABLE_INFO, 1007).
func (c *Catalog) GetTable(ctx context.Context, path domain.TablePath) (domain.TableInfo, error) {
	o := op{api: wire.KeyGetTableInfo, what: tableWhat(path), idempotent: true}
	var resp flusspb.GetTableInfoResponse
	if err := c.rpc.CallCoordinator(ctx, wire.KeyGetTableInfo, &flusspb.GetTableInfoRequest{TablePath: pbPath(path)}, &resp); err != nil {
		return domain.TableInfo{}, toDomain(err, o)
	}
	desc, err := serde.UnmarshalTableDescriptorJSON(resp.GetTableJson())
	if err != nil {
		return domain.TableInfo{}, backendDecode(o.api, o.what, err)
	}
	return domain.TableInfo{
		Path:         path,
		TableID:      resp.GetTableId(),
		SchemaID:     resp.GetSchemaId(),
		Descriptor:   desc,
		CreatedTime:  millis(resp.GetCreatedTime()),
		ModifiedTime: millis(resp.GetModifiedTime()),
	}, nil
}

// CreateTable creates a table (CREATE_TABLE, 1005) from desc written as
// Fluss TableDescriptor JSON. A descriptor the JSON writer rejects is returned
// as is (KindInvalidArgument); the server's rejections (INVALID_TABLE,
// INVALID_CONFIG, INVALID_REPLICATION_FACTOR) are KindInvalidArgument too.
func (c *Catalog) CreateTable(ctx context.Context, path domain.TablePath, desc domain.TableDescriptor, ignoreIfExists bool) error {
	js, err := serde.MarshalTableDescriptorJSON(desc)
	if err != nil {
		return err
	}
	err = c.rpc.CallCoordinator(ctx, wire.KeyCreateTable, &flusspb.CreateTableRequest{
		TablePath:      pbPath(path),
		TableJson:      js,
		IgnoreIfExists: proto.Bool(ignoreIfExists),
	}, &flusspb.CreateTableResponse{})
	return toDomain(err, op{api: wire.KeyCreateTable, what: tableWhat(path), idempotent: ignoreIfExists})
}

// AlterTable applies changes in one ALTER_TABLE request (1044): add_column
// becomes a PbAddColumn at position LAST, set_config a SET and reset_config a
// DELETE PbAlterConfig. An unknown change kind is KindInvalidArgument.
func (c *Catalog) AlterTable(ctx context.Context, path domain.TablePath, changes []domain.TableChange, ignoreIfNotExists bool) error {
	req := &flusspb.AlterTableRequest{TablePath: pbPath(path), IgnoreIfNotExists: proto.Bool(ignoreIfNotExists)}
	for i, ch := range changes {
		switch ch.Kind {
		case domain.ChangeAddColumn:
			dt, err := serde.MarshalDataTypeJSON(ch.Column.Type)
			if err != nil {
				if de := domain.AsError(err); de != nil {
					return domain.InvalidArgument("changes[%d].column.data_type: %s", i, de.Message)
				}
				return domain.InvalidArgument("changes[%d].column.data_type: %v", i, err)
			}
			add := &flusspb.PbAddColumn{
				ColumnName:         proto.String(ch.Column.Name),
				DataTypeJson:       dt,
				ColumnPositionType: proto.Int32(columnPositionLast),
			}
			if ch.Column.Comment != "" {
				add.Comment = proto.String(ch.Column.Comment)
			}
			req.AddColumns = append(req.AddColumns, add)
		case domain.ChangeSetConfig:
			req.ConfigChanges = append(req.ConfigChanges, &flusspb.PbAlterConfig{
				ConfigKey: proto.String(ch.Key), ConfigValue: proto.String(ch.Value), OpType: proto.Int32(alterOpSet),
			})
		case domain.ChangeResetConfig:
			req.ConfigChanges = append(req.ConfigChanges, &flusspb.PbAlterConfig{
				ConfigKey: proto.String(ch.Key), OpType: proto.Int32(alterOpDelete),
			})
		default:
			return domain.InvalidArgument("changes[%d].kind: unsupported table change %q", i, ch.Kind)
		}
	}
	err := c.rpc.CallCoordinator(ctx, wire.KeyAlterTable, req, &flusspb.AlterTableResponse{})
	// Config changes are idempotent; adding a column twice is not.
	idempotent := len(req.AddColumns) == 0
	return toDomain(err, op{api: wire.KeyAlterTable, what: tableWhat(path), idempotent: idempotent})
}

// DropTable drops a table (DROP_TABLE, 1006). A missing table is
// KindNotFound/table unless ignoreIfNotExists.
func (c *Catalog) DropTable(ctx context.Context, path domain.TablePath, ignoreIfNotExists bool) error {
	err := c.rpc.CallCoordinator(ctx, wire.KeyDropTable, &flusspb.DropTableRequest{
		TablePath: pbPath(path), IgnoreIfNotExists: proto.Bool(ignoreIfNotExists),
	}, &flusspb.DropTableResponse{})
	return toDomain(err, op{api: wire.KeyDropTable, what: tableWhat(path), idempotent: ignoreIfNotExists})
}

// ListPartitions returns the partitions of a partitioned table, sorted by
// name (LIST_PARTITION_INFOS, 1009). Name is the values joined with "$" in
// partition-key order. A table that is not partitioned is
// KindInvalidArgument.
func (c *Catalog) ListPartitions(ctx context.Context, path domain.TablePath) ([]domain.PartitionInfo, error) {
	var resp flusspb.ListPartitionInfosResponse
	err := c.rpc.CallCoordinator(ctx, wire.KeyListPartitionInfos,
		&flusspb.ListPartitionInfosRequest{TablePath: pbPath(path)}, &resp)
	if err != nil {
		return nil, toDomain(err, op{api: wire.KeyListPartitionInfos, what: tableWhat(path), idempotent: true})
	}
	out := make([]domain.PartitionInfo, 0, len(resp.GetPartitionsInfo()))
	for _, p := range resp.GetPartitionsInfo() {
		kvs := p.GetPartitionSpec().GetPartitionKeyValues()
		spec := make(domain.PartitionSpec, len(kvs))
		for i, kv := range kvs {
			spec[i] = domain.PartitionValue{Key: kv.GetKey(), Value: kv.GetValue()}
		}
		out = append(out, domain.PartitionInfo{ID: p.GetPartitionId(), Name: domain.PartitionName(spec), Spec: spec})
	}
	slices.SortFunc(out, func(a, b domain.PartitionInfo) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out, nil
}

// CreatePartition creates one partition (CREATE_PARTITION, 1036); spec must
// name every partition key. An existing partition is
// KindAlreadyExists/partition unless ignoreIfExists. (The request's field 3
// is called ignore_if_not_exists by Fluss but means "ignore if it exists".)
func (c *Catalog) CreatePartition(ctx context.Context, path domain.TablePath, spec domain.PartitionSpec, ignoreIfExists bool) error {
	err := c.rpc.CallCoordinator(ctx, wire.KeyCreatePartition, &flusspb.CreatePartitionRequest{
		TablePath: pbPath(path), PartitionSpec: pbSpec(spec), IgnoreIfNotExists: proto.Bool(ignoreIfExists),
	}, &flusspb.CreatePartitionResponse{})
	return toDomain(err, op{api: wire.KeyCreatePartition,
		what: fmt.Sprintf("partition %q of %s", domain.PartitionName(spec), tableWhat(path)), idempotent: ignoreIfExists})
}

// DropPartition drops one partition (DROP_PARTITION, 1037). A missing
// partition is KindNotFound/partition unless ignoreIfNotExists.
func (c *Catalog) DropPartition(ctx context.Context, path domain.TablePath, spec domain.PartitionSpec, ignoreIfNotExists bool) error {
	err := c.rpc.CallCoordinator(ctx, wire.KeyDropPartition, &flusspb.DropPartitionRequest{
		TablePath: pbPath(path), PartitionSpec: pbSpec(spec), IgnoreIfNotExists: proto.Bool(ignoreIfNotExists),
	}, &flusspb.DropPartitionResponse{})
	return toDomain(err, op{api: wire.KeyDropPartition,
		what: fmt.Sprintf("partition %q of %s", domain.PartitionName(spec), tableWhat(path)), idempotent: ignoreIfNotExists})
}
