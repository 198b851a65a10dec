package http

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The request and response bodies of the catalog API: the official Fluss
// gateway's shapes (apache/fluss: fluss-gateway/openapi.yaml, FIP-49) plus our
// additive extensions, each marked so below and in openapi.yaml
// (`x-fluss-gateway-extension`). Data types use datatype.go's REST form.

type clusterListResponse struct {
	Clusters []string `json:"clusters"`
}

// createDatabaseRequest: `database` is the official field; `comment`,
// `custom_properties` and `ignore_if_exists` are extensions.
type createDatabaseRequest struct {
	Database         string            `json:"database"`
	Comment          string            `json:"comment"`
	CustomProperties map[string]string `json:"custom_properties"`
	IgnoreIfExists   bool              `json:"ignore_if_exists"`
}

type databaseListResponse struct {
	Databases     []string `json:"databases"`
	NextPageToken string   `json:"next_page_token,omitempty"`
}

// databaseCreatedResponse is the official DatabaseResponse.
type databaseCreatedResponse struct {
	Database string `json:"database"`
}

// databaseResponse answers the describe-database extension: the official
// DatabaseResponse member plus the database's descriptor and times.
type databaseResponse struct {
	Database         string            `json:"database"`
	Comment          string            `json:"comment,omitempty"`
	CustomProperties map[string]string `json:"custom_properties"`
	CreatedTime      string            `json:"created_time,omitempty"`
	ModifiedTime     string            `json:"modified_time,omitempty"`
}

// columnRequest is a column of a create-table request (official ColumnBody).
// Nullable, when omitted or null, is false for primary-key columns and true
// for the others; a primary-key column cannot be nullable.
type columnRequest struct {
	Name     string      `json:"name"`
	DataType rawDataType `json:"data_type"`
	Nullable *bool       `json:"nullable"`
	Comment  *string     `json:"comment"`
}

// distributionRequest is the official DistributionBody. Both members are
// required there; we also accept either alone (an extension): a missing
// bucket_count takes the cluster default, missing bucket_keys the table's
// default bucket keys.
type distributionRequest struct {
	BucketCount *int     `json:"bucket_count"`
	BucketKeys  []string `json:"bucket_keys"`
}

// createTableRequest is the official CreateTableBody plus the
// `ignore_if_exists` extension.
type createTableRequest struct {
	TableName        string               `json:"table_name"`
	Columns          []columnRequest      `json:"columns"`
	PrimaryKey       []string             `json:"primary_key"`
	PartitionedBy    []string             `json:"partitioned_by"`
	Distribution     *distributionRequest `json:"distribution"`
	Configs          map[string]string    `json:"configs"`
	CustomProperties map[string]string    `json:"custom_properties"`
	Comment          *string              `json:"comment"`
	ValidateOnly     bool                 `json:"validate_only"`
	IgnoreIfExists   bool                 `json:"ignore_if_exists"`
}

// validateOnlyResponse is the official ValidateOnlyResponse.
type validateOnlyResponse struct {
	ValidateOnly bool     `json:"validate_only"`
	Database     string   `json:"database"`
	Table        string   `json:"table"`
	ColumnCount  int      `json:"column_count"`
	PrimaryKey   []string `json:"primary_key"`
}

type tableListResponse struct {
	Tables        []string `json:"tables"`
	NextPageToken string   `json:"next_page_token,omitempty"`
}

// columnResponse is the official ColumnResponse.
type columnResponse struct {
	Name     string       `json:"name"`
	DataType restDataType `json:"data_type"`
	Nullable bool         `json:"nullable"`
	Comment  string       `json:"comment,omitempty"`
}

type distributionResponse struct {
	BucketCount int      `json:"bucket_count"`
	BucketKeys  []string `json:"bucket_keys"`
}

// tableResponse is the official TableResponse (optional members left out
// when empty) plus the extensions table_id, schema_id, created_time and
// modified_time.
type tableResponse struct {
	Database         string               `json:"database"`
	Table            string               `json:"table"`
	Columns          []columnResponse     `json:"columns"`
	PrimaryKey       []string             `json:"primary_key,omitempty"`
	PartitionedBy    []string             `json:"partitioned_by,omitempty"`
	Distribution     distributionResponse `json:"distribution"`
	Configs          map[string]string    `json:"configs,omitempty"`
	CustomProperties map[string]string    `json:"custom_properties,omitempty"`
	Comment          string               `json:"comment,omitempty"`
	TableID          *int64               `json:"table_id,omitempty"`
	SchemaID         *int32               `json:"schema_id,omitempty"`
	CreatedTime      string               `json:"created_time,omitempty"`
	ModifiedTime     string               `json:"modified_time,omitempty"`
}

// alterTableRequest is the official AlterTableBody plus the
// `ignore_if_not_exists` extension. The changes are applied in one request.
type alterTableRequest struct {
	Changes           []tableChangeRequest `json:"changes"`
	IgnoreIfNotExists bool                 `json:"ignore_if_not_exists"`
}

// tableChangeRequest is one official TableChangeBody, tagged by `kind`:
// add_column {name, data_type, comment}, set_config {key, value},
// reset_config {key}. Members of another kind are refused.
type tableChangeRequest struct {
	Kind     string      `json:"kind"`
	Name     *string     `json:"name"`
	DataType rawDataType `json:"data_type"`
	Comment  *string     `json:"comment"`
	Key      *string     `json:"key"`
	Value    *string     `json:"value"`
}

// createPartitionRequest is the official CreatePartitionBody plus the
// `ignore_if_exists` extension.
type createPartitionRequest struct {
	Partition      map[string]string `json:"partition"`
	IgnoreIfExists bool              `json:"ignore_if_exists"`
}

type partitionListResponse struct {
	Partitions    []partitionEntry `json:"partitions"`
	NextPageToken string           `json:"next_page_token,omitempty"`
}

// partitionEntry is the official PartitionEntry plus the `partition_id`
// extension.
type partitionEntry struct {
	Name        string      `json:"name"`
	Partition   orderedSpec `json:"partition"`
	PartitionID *int64      `json:"partition_id,omitempty"`
}

// partitionResponse is the official PartitionResponse plus the `name` and
// `partition_id` extensions.
type partitionResponse struct {
	Database    string      `json:"database"`
	Table       string      `json:"table"`
	Partition   orderedSpec `json:"partition"`
	Name        string      `json:"name"`
	PartitionID *int64      `json:"partition_id,omitempty"`
}

// orderedSpec renders a partition spec as a JSON object whose members follow
// the table's partition-key order.
type orderedSpec domain.PartitionSpec

// MarshalJSON writes the members in spec order.
func (s orderedSpec) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, v.Key)
		b = append(b, ':')
		b = appendJSONString(b, v.Value)
	}
	return append(b, '}'), nil
}

// timestamp renders a time as RFC 3339 in UTC with milliseconds; the zero
// time (unknown) renders as "" and is omitted.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func emptyAsNil[M ~map[string]string](m M) M {
	if len(m) == 0 {
		return nil
	}
	return m
}

func newDatabaseResponse(info domain.DatabaseInfo) databaseResponse {
	return databaseResponse{
		Database:         info.Name,
		Comment:          info.Descriptor.Comment,
		CustomProperties: nonNilMap(info.Descriptor.CustomProperties),
		CreatedTime:      timestamp(info.CreatedTime),
		ModifiedTime:     timestamp(info.ModifiedTime),
	}
}

// newTableResponse describes an existing table.
func newTableResponse(info domain.TableInfo) tableResponse {
	d := info.Descriptor
	cols := make([]columnResponse, len(d.Schema.Columns))
	for i, c := range d.Schema.Columns {
		cols[i] = columnResponse{Name: c.Name, DataType: restDataType{t: c.Type, top: true}, Nullable: c.Type.Nullable, Comment: c.Comment}
	}
	bucketKeys := d.BucketKeys
	if len(bucketKeys) == 0 && len(d.Schema.PrimaryKey) > 0 {
		bucketKeys = domain.DefaultBucketKeys(d.Schema.PrimaryKey, d.PartitionKeys)
	}
	r := tableResponse{
		Database:         info.Path.Database,
		Table:            info.Path.Table,
		Columns:          cols,
		PrimaryKey:       d.Schema.PrimaryKey,
		PartitionedBy:    d.PartitionKeys,
		Configs:          emptyAsNil(d.Properties),
		CustomProperties: emptyAsNil(d.CustomProperties),
		Comment:          d.Comment,
		CreatedTime:      timestamp(info.CreatedTime),
		ModifiedTime:     timestamp(info.ModifiedTime),
		TableID:          &info.TableID,
		SchemaID:         &info.SchemaID,
	}
	r.Distribution = distributionResponse{BucketCount: d.BucketCount, BucketKeys: nonNilSlice(bucketKeys)}
	return r
}

func newValidateOnlyResponse(path domain.TablePath, d domain.TableDescriptor) validateOnlyResponse {
	return validateOnlyResponse{
		ValidateOnly: true,
		Database:     path.Database,
		Table:        path.Table,
		ColumnCount:  len(d.Schema.Columns),
		PrimaryKey:   nonNilSlice(d.Schema.PrimaryKey),
	}
}

func newPartitionEntry(p domain.PartitionInfo) partitionEntry {
	r := partitionEntry{Name: p.Name, Partition: orderedSpec(p.Spec)}
	if p.ID >= 0 {
		id := p.ID
		r.PartitionID = &id
	}
	return r
}

func newPartitionResponse(path domain.TablePath, p domain.PartitionInfo) partitionResponse {
	e := newPartitionEntry(p)
	return partitionResponse{Database: path.Database, Table: path.Table, Partition: e.Partition, Name: e.Name, PartitionID: e.PartitionID}
}

// toColumn turns a column request into a domain column. pk is whether the
// column is part of the primary key: its nullability defaults to NOT NULL,
// and it cannot be nullable.
func (r columnRequest) toColumn(path string, pk bool) (domain.Column, error) {
	t, err := decodeDataType(r.DataType, path+".data_type")
	if err != nil {
		return domain.Column{}, err
	}
	switch {
	case r.Nullable == nil:
		t.Nullable = !pk
	case pk && *r.Nullable:
		return domain.Column{}, domain.InvalidArgument("%s.nullable: primary-key column `%s` cannot be nullable", path, r.Name)
	default:
		t.Nullable = *r.Nullable
	}
	return domain.Column{Name: r.Name, Type: t, Comment: deref(r.Comment), ID: domain.UnassignedFieldID}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// toCommand builds the create-table command.
func (r createTableRequest) toCommand(database string) (application.CreateTable, error) {
	if r.Columns == nil {
		return application.CreateTable{}, domain.InvalidArgument("columns: required")
	}
	cols := make([]domain.Column, len(r.Columns))
	for i, cr := range r.Columns {
		col, err := cr.toColumn(fmt.Sprintf("columns[%d]", i), slices.Contains(r.PrimaryKey, cr.Name))
		if err != nil {
			return application.CreateTable{}, err
		}
		cols[i] = col
	}
	desc := domain.TableDescriptor{
		Schema:           domain.Schema{Columns: cols, PrimaryKey: r.PrimaryKey, HighestFieldID: domain.UnassignedFieldID},
		Comment:          deref(r.Comment),
		PartitionKeys:    r.PartitionedBy,
		Properties:       r.Configs,
		CustomProperties: r.CustomProperties,
	}
	if r.Distribution != nil {
		desc.BucketKeys = r.Distribution.BucketKeys
		if r.Distribution.BucketCount != nil {
			if *r.Distribution.BucketCount < 1 {
				return application.CreateTable{}, domain.InvalidArgument("distribution.bucket_count: must be at least 1")
			}
			desc.BucketCount = *r.Distribution.BucketCount
		}
	}
	return application.CreateTable{
		Path:           domain.TablePath{Database: database, Table: r.TableName},
		Descriptor:     desc,
		IgnoreIfExists: r.IgnoreIfExists,
		ValidateOnly:   r.ValidateOnly,
	}, nil
}

// changeMembers lists the members each change kind carries besides `kind`.
var changeMembers = map[string][]string{
	string(domain.ChangeAddColumn):   {"name", "data_type", "comment"},
	string(domain.ChangeSetConfig):   {"key", "value"},
	string(domain.ChangeResetConfig): {"key"},
}

// toChanges builds the domain changes from the kind-tagged change objects.
func (r alterTableRequest) toChanges() ([]domain.TableChange, error) {
	if r.Changes == nil {
		return nil, domain.InvalidArgument("changes: required")
	}
	out := make([]domain.TableChange, len(r.Changes))
	for i, ch := range r.Changes {
		path := fmt.Sprintf("changes[%d]", i)
		allowed, ok := changeMembers[ch.Kind]
		if !ok {
			return nil, domain.InvalidArgument("%s.kind: expected add_column, set_config or reset_config, got %q", path, ch.Kind)
		}
		present := map[string]bool{"name": ch.Name != nil, "data_type": ch.DataType != nil, "comment": ch.Comment != nil,
			"key": ch.Key != nil, "value": ch.Value != nil}
		for _, m := range []string{"name", "data_type", "comment", "key", "value"} {
			if present[m] && !slices.Contains(allowed, m) {
				return nil, domain.InvalidArgument("%s.%s: not a member of a %s change", path, m, ch.Kind)
			}
		}
		for _, m := range allowed {
			if !present[m] && m != "comment" {
				return nil, domain.InvalidArgument("%s.%s: required for a %s change", path, m, ch.Kind)
			}
		}
		switch domain.TableChangeKind(ch.Kind) {
		case domain.ChangeAddColumn:
			t, err := decodeDataType(ch.DataType, path+".data_type")
			if err != nil {
				return nil, err
			}
			out[i] = domain.TableChange{Kind: domain.ChangeAddColumn,
				Column: domain.Column{Name: *ch.Name, Type: t, Comment: deref(ch.Comment), ID: domain.UnassignedFieldID}}
		case domain.ChangeSetConfig:
			out[i] = domain.TableChange{Kind: domain.ChangeSetConfig, Key: *ch.Key, Value: *ch.Value}
		default:
			out[i] = domain.TableChange{Kind: domain.ChangeResetConfig, Key: *ch.Key}
		}
	}
	return out, nil
}

// specOf turns the request's partition values into a spec in key order; the
// use case reorders it by the table's partition keys.
func specOf(values map[string]string) (domain.PartitionSpec, error) {
	if values == nil {
		return nil, domain.InvalidArgument("partition: required")
	}
	keys := slices.Sorted(maps.Keys(values))
	spec := make(domain.PartitionSpec, len(keys))
	for i, k := range keys {
		spec[i] = domain.PartitionValue{Key: k, Value: values[k]}
	}
	return spec, nil
}
