package http

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The request and response bodies of the catalog API. The OpenAPI document
// (openapi.yaml) describes the same shapes; field names are snake_case and
// table definitions reuse Fluss's vocabulary (`primary_key`, `properties`,
// `custom_properties`, DataType JSON verbatim).

type clusterListResponse struct {
	Clusters []clusterSummary `json:"clusters"`
}

type clusterSummary struct {
	ClusterID string `json:"cluster_id"`
}

type createDatabaseRequest struct {
	DatabaseName     string            `json:"database_name"`
	Comment          string            `json:"comment"`
	CustomProperties map[string]string `json:"custom_properties"`
	IgnoreIfExists   bool              `json:"ignore_if_exists"`
}

type databaseListResponse struct {
	Databases     []databaseSummary `json:"databases"`
	NextPageToken string            `json:"next_page_token,omitempty"`
}

type databaseSummary struct {
	DatabaseName string `json:"database_name"`
}

type databaseResponse struct {
	DatabaseName     string            `json:"database_name"`
	Comment          string            `json:"comment,omitempty"`
	CustomProperties map[string]string `json:"custom_properties"`
	CreatedTime      string            `json:"created_time,omitempty"`
	ModifiedTime     string            `json:"modified_time,omitempty"`
}

// columnRequest is a column of a create-table or add-column request.
// Nullable, when given, sets the nullability of DataType; when omitted a
// primary-key column is NOT NULL and any other column takes the nullability
// of data_type (nullable unless data_type says "nullable": false).
type columnRequest struct {
	Name     string      `json:"name"`
	DataType rawDataType `json:"data_type"`
	Nullable *bool       `json:"nullable"`
	Comment  string      `json:"comment"`
}

type distributionRequest struct {
	BucketCount *int     `json:"bucket_count"`
	BucketKeys  []string `json:"bucket_keys"`
}

type createTableRequest struct {
	TableName        string               `json:"table_name"`
	Columns          []columnRequest      `json:"columns"`
	PrimaryKey       []string             `json:"primary_key"`
	PartitionedBy    []string             `json:"partitioned_by"`
	Distribution     *distributionRequest `json:"distribution"`
	Properties       map[string]string    `json:"properties"`
	CustomProperties map[string]string    `json:"custom_properties"`
	Comment          string               `json:"comment"`
	IgnoreIfExists   bool                 `json:"ignore_if_exists"`
	ValidateOnly     bool                 `json:"validate_only"`
}

type tableListResponse struct {
	Tables        []tableSummary `json:"tables"`
	NextPageToken string         `json:"next_page_token,omitempty"`
}

type tableSummary struct {
	TableName string `json:"table_name"`
}

type columnResponse struct {
	Name     string          `json:"name"`
	DataType domain.DataType `json:"data_type"`
	Nullable bool            `json:"nullable"`
	Comment  string          `json:"comment,omitempty"`
}

type distributionResponse struct {
	BucketCount int      `json:"bucket_count,omitempty"`
	BucketKeys  []string `json:"bucket_keys"`
}

type tableResponse struct {
	DatabaseName     string               `json:"database_name"`
	TableName        string               `json:"table_name"`
	TableID          *int64               `json:"table_id,omitempty"`
	SchemaID         *int32               `json:"schema_id,omitempty"`
	Columns          []columnResponse     `json:"columns"`
	PrimaryKey       []string             `json:"primary_key"`
	PartitionedBy    []string             `json:"partitioned_by"`
	Distribution     distributionResponse `json:"distribution"`
	Properties       map[string]string    `json:"properties"`
	CustomProperties map[string]string    `json:"custom_properties"`
	Comment          string               `json:"comment,omitempty"`
	CreatedTime      string               `json:"created_time,omitempty"`
	ModifiedTime     string               `json:"modified_time,omitempty"`
}

// alterTableRequest lists changes applied atomically in order. Each change
// object has exactly one member naming its kind.
type alterTableRequest struct {
	Changes           []tableChangeRequest `json:"changes"`
	IgnoreIfNotExists bool                 `json:"ignore_if_not_exists"`
}

type tableChangeRequest struct {
	AddColumn   *columnRequest      `json:"add_column"`
	SetConfig   *setConfigRequest   `json:"set_config"`
	ResetConfig *resetConfigRequest `json:"reset_config"`
}

type setConfigRequest struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type resetConfigRequest struct {
	Key string `json:"key"`
}

type createPartitionRequest struct {
	PartitionSpec  map[string]string `json:"partition_spec"`
	IgnoreIfExists bool              `json:"ignore_if_exists"`
}

type partitionListResponse struct {
	Partitions    []partitionResponse `json:"partitions"`
	NextPageToken string              `json:"next_page_token,omitempty"`
}

type partitionResponse struct {
	PartitionName string      `json:"partition_name"`
	PartitionID   *int64      `json:"partition_id,omitempty"`
	PartitionSpec orderedSpec `json:"partition_spec"`
}

// orderedSpec renders a partition spec as a JSON object whose members follow
// the table's partition-key order.
type orderedSpec domain.PartitionSpec

// MarshalJSON writes the members in spec order.
func (s orderedSpec) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, v := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(v.Key)
		if err != nil {
			return nil, err
		}
		val, err := json.Marshal(v.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
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

func newDatabaseResponse(info domain.DatabaseInfo) databaseResponse {
	return databaseResponse{
		DatabaseName:     info.Name,
		Comment:          info.Descriptor.Comment,
		CustomProperties: nonNilMap(info.Descriptor.CustomProperties),
		CreatedTime:      timestamp(info.CreatedTime),
		ModifiedTime:     timestamp(info.ModifiedTime),
	}
}

// newTableResponse describes a table; withIDs is false for a validate-only
// create, which has no id yet.
func newTableResponse(info domain.TableInfo, withIDs bool) tableResponse {
	d := info.Descriptor
	cols := make([]columnResponse, len(d.Schema.Columns))
	for i, c := range d.Schema.Columns {
		cols[i] = columnResponse{Name: c.Name, DataType: c.Type, Nullable: c.Type.Nullable, Comment: c.Comment}
	}
	r := tableResponse{
		DatabaseName:     info.Path.Database,
		TableName:        info.Path.Table,
		Columns:          cols,
		PrimaryKey:       nonNilSlice(d.Schema.PrimaryKey),
		PartitionedBy:    nonNilSlice(d.PartitionKeys),
		Distribution:     distributionResponse{BucketCount: d.BucketCount, BucketKeys: nonNilSlice(d.BucketKeys)},
		Properties:       nonNilMap(d.Properties),
		CustomProperties: nonNilMap(d.CustomProperties),
		Comment:          d.Comment,
		CreatedTime:      timestamp(info.CreatedTime),
		ModifiedTime:     timestamp(info.ModifiedTime),
	}
	if withIDs {
		r.TableID, r.SchemaID = &info.TableID, &info.SchemaID
	}
	return r
}

func newPartitionResponse(p domain.PartitionInfo) partitionResponse {
	r := partitionResponse{PartitionName: p.Name, PartitionSpec: orderedSpec(p.Spec)}
	if p.ID >= 0 {
		id := p.ID
		r.PartitionID = &id
	}
	return r
}

// toColumn turns a column request into a domain column. pk is whether the
// column is part of the primary key, which makes an omitted nullability NOT
// NULL as in Fluss.
func (r columnRequest) toColumn(path string, pk bool) (domain.Column, error) {
	t, explicit, err := decodeDataType(r.DataType, path+".data_type")
	if err != nil {
		return domain.Column{}, err
	}
	switch {
	case r.Nullable != nil:
		if explicit && t.Nullable != *r.Nullable {
			return domain.Column{}, domain.InvalidArgument("%s.nullable: contradicts %s.data_type.nullable", path, path)
		}
		t.Nullable = *r.Nullable
	case pk && !explicit:
		t.Nullable = false
	}
	return domain.Column{Name: r.Name, Type: t, Comment: r.Comment, ID: domain.UnassignedFieldID}, nil
}

// toCommand builds the create-table command.
func (r createTableRequest) toCommand(database string) (application.CreateTable, error) {
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
		Comment:          r.Comment,
		PartitionKeys:    r.PartitionedBy,
		Properties:       r.Properties,
		CustomProperties: r.CustomProperties,
	}
	if r.Distribution != nil {
		desc.BucketKeys = r.Distribution.BucketKeys
		if r.Distribution.BucketCount != nil {
			if *r.Distribution.BucketCount < 1 {
				return application.CreateTable{}, domain.InvalidArgument("distribution.bucket_count: must be at least 1; omit it for the cluster default")
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

// toChanges builds the domain changes, checking that each change object
// names exactly one kind.
func (r alterTableRequest) toChanges() ([]domain.TableChange, error) {
	if r.Changes == nil {
		return nil, domain.InvalidArgument("changes: required")
	}
	out := make([]domain.TableChange, len(r.Changes))
	for i, ch := range r.Changes {
		path := fmt.Sprintf("changes[%d]", i)
		set := 0
		for _, present := range []bool{ch.AddColumn != nil, ch.SetConfig != nil, ch.ResetConfig != nil} {
			if present {
				set++
			}
		}
		if set != 1 {
			return nil, domain.InvalidArgument("%s: must have exactly one of add_column, set_config, reset_config", path)
		}
		switch {
		case ch.AddColumn != nil:
			col, err := ch.AddColumn.toColumn(path+".add_column", false)
			if err != nil {
				return nil, err
			}
			out[i] = domain.TableChange{Kind: domain.ChangeAddColumn, Column: col}
		case ch.SetConfig != nil:
			out[i] = domain.TableChange{Kind: domain.ChangeSetConfig, Key: ch.SetConfig.Key, Value: ch.SetConfig.Value}
		default:
			out[i] = domain.TableChange{Kind: domain.ChangeResetConfig, Key: ch.ResetConfig.Key}
		}
	}
	return out, nil
}

// specOf turns the request's partition values into a spec in key order; the
// use case reorders it by the table's partition keys.
func specOf(values map[string]string) (domain.PartitionSpec, error) {
	if values == nil {
		return nil, domain.InvalidArgument("partition_spec: required")
	}
	keys := slices.Sorted(maps.Keys(values))
	spec := make(domain.PartitionSpec, len(keys))
	for i, k := range keys {
		spec[i] = domain.PartitionValue{Key: k, Value: values[k]}
	}
	return spec, nil
}
