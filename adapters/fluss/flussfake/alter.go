package flussfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"google.golang.org/protobuf/proto"
)

// alterTable answers AlterTable as the 0.9.1 coordinator does for the
// changes the gateway sends (apache/fluss CoordinatorService#alterTable,
// SchemaUpdate, TableDescriptor property changes): added columns go last,
// nullable, with the next field id and a new schema id; a column name that
// exists is INVALID_ALTER_TABLE_EXCEPTION and nothing changes; config SET
// and DELETE edit `properties`. Other change kinds are refused.
func (c *Catalog) alterTable(_ context.Context, _ *Request, req *flusspb.AlterTableRequest) (proto.Message, error) {
	tp := req.GetTablePath()
	if len(req.GetDropColumns())+len(req.GetRenameColumns())+len(req.GetModifyColumns()) > 0 {
		return nil, wire.NewServerError(wire.CodeInvalidAlterTableException, "the fake supports only add column and config changes")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.tableLocked(tp.GetDatabaseName(), tp.GetTableName())
	if err != nil {
		if req.GetIgnoreIfNotExists() {
			return &flusspb.AlterTableResponse{}, nil
		}
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(t.json))
	dec.UseNumber()
	var desc map[string]any
	if err := dec.Decode(&desc); err != nil {
		return nil, fmt.Errorf("fake: stored table JSON: %w", err)
	}
	schema, _ := desc["schema"].(map[string]any)
	cols, _ := schema["columns"].([]any)
	highest, _ := schema["highest_field_id"].(json.Number).Int64()
	for _, add := range req.GetAddColumns() {
		name := add.GetColumnName()
		for _, col := range cols {
			if m, _ := col.(map[string]any); m["name"] == name {
				return nil, wire.NewServerError(wire.CodeInvalidAlterTableException,
					fmt.Sprintf("Column %s already exists in table %s.%s.", name, tp.GetDatabaseName(), tp.GetTableName()))
			}
		}
		if add.GetColumnPositionType() != 0 {
			return nil, wire.NewServerError(wire.CodeInvalidAlterTableException, "only columns added LAST are supported")
		}
		var typ map[string]any
		if err := json.Unmarshal(add.GetDataTypeJson(), &typ); err != nil {
			return nil, wire.NewServerError(wire.CodeInvalidAlterTableException, "invalid data type JSON")
		}
		if nullable, ok := typ["nullable"].(bool); ok && !nullable {
			return nil, wire.NewServerError(wire.CodeInvalidAlterTableException,
				fmt.Sprintf("Column %s must be nullable.", name))
		}
		highest++
		col := map[string]any{"name": name, "data_type": json.RawMessage(add.GetDataTypeJson()), "id": highest}
		if add.Comment != nil && add.GetComment() != "" {
			col["comment"] = add.GetComment()
		}
		cols = append(cols, col)
	}
	props, _ := desc["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	for _, ch := range req.GetConfigChanges() {
		switch ch.GetOpType() {
		case 0: // SET
			props[ch.GetConfigKey()] = ch.GetConfigValue()
		case 1: // DELETE
			delete(props, ch.GetConfigKey())
		default:
			return nil, wire.NewServerError(wire.CodeInvalidAlterTableException, fmt.Sprintf("unsupported config op %d", ch.GetOpType()))
		}
	}
	desc["properties"] = props
	if len(req.GetAddColumns()) > 0 {
		schema["columns"] = cols
		schema["highest_field_id"] = highest
		sb, err := json.Marshal(schema)
		if err != nil {
			return nil, fmt.Errorf("fake: schema JSON: %w", err)
		}
		t.schemaID++
		t.schemas[t.schemaID] = sb
	}
	b, err := json.Marshal(desc)
	if err != nil {
		return nil, fmt.Errorf("fake: table JSON: %w", err)
	}
	t.json = b
	t.modified = c.now().UnixMilli()
	return &flusspb.AlterTableResponse{}, nil
}

// getTableSchema answers GetTableSchema: the schema of the requested id, or
// the current one when the id is absent; an unknown id is SCHEMA_NOT_EXIST.
func (c *Catalog) getTableSchema(_ context.Context, _ *Request, req *flusspb.GetTableSchemaRequest) (proto.Message, error) {
	tp := req.GetTablePath()
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.tableLocked(tp.GetDatabaseName(), tp.GetTableName())
	if err != nil {
		return nil, err
	}
	id := t.schemaID
	if req.SchemaId != nil {
		id = req.GetSchemaId()
	}
	b, ok := t.schemas[id]
	if !ok {
		return nil, wire.NewServerError(wire.CodeSchemaNotExist,
			fmt.Sprintf("Schema for table %s.%s with schema id %d does not exist.", tp.GetDatabaseName(), tp.GetTableName(), id))
	}
	return &flusspb.GetTableSchemaResponse{SchemaId: proto.Int32(id), SchemaJson: b}, nil
}
