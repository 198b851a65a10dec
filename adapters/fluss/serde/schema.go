package serde

// This file holds the Schema document (`schema_json`; apache/fluss:
// utils/json/SchemaJsonSerde.java, ColumnJsonSerde.java).

import (
	"strconv"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// MarshalSchemaJSON writes s in Fluss's Schema JSON form (apache/fluss:
// utils/json/SchemaJsonSerde.java, ColumnJsonSerde.java): `version` 1,
// `columns` (each `name`, `data_type`, optional `comment`, `id`),
// `primary_key` and `auto_increment_column` only when not empty, then
// `highest_field_id`.
//
// Before writing it applies what the Java Schema.Builder applies: field ids
// as AssignFieldIDs assigns them, and NOT NULL on primary-key columns. It fails
// with a KindInvalidArgument *Error when AssignFieldIDs does or a type cannot
// be written (see MarshalDataTypeJSON).
func MarshalSchemaJSON(s domain.Schema) ([]byte, error) {
	return appendSchema(nil, s, "")
}

func appendSchema(b []byte, s domain.Schema, path string) ([]byte, error) {
	ns, err := domain.NormalizeSchema(s)
	if err != nil {
		return nil, prefixError(path, err)
	}
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, flussJSONVersion, 10)
	b = append(b, `,"columns":[`...)
	for i := range ns.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendColumn(b, &ns.Columns[i], joinPath(path, indexPath(keyColumns, i))); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if len(ns.PrimaryKey) > 0 {
		b = append(b, `,"primary_key":`...)
		b = appendStringArray(b, ns.PrimaryKey)
	}
	if len(ns.AutoIncrementColumn) > 0 {
		b = append(b, `,"auto_increment_column":`...)
		b = appendStringArray(b, ns.AutoIncrementColumn)
	}
	b = appendIntField(b, keyHighestFieldID, int64(ns.HighestFieldID))
	return append(b, '}'), nil
}

// appendColumn writes one column as ColumnJsonSerde does: `name`,
// `data_type`, `comment` when not empty, `id`.
func appendColumn(b []byte, c *domain.Column, path string) ([]byte, error) {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, c.Name)
	b = append(b, `,"data_type":`...)
	b, err := appendDataType(b, &c.Type, joinPath(path, keyDataType), 0)
	if err != nil {
		return nil, err
	}
	if c.Comment != "" {
		b = append(b, `,"comment":`...)
		b = appendJSONString(b, c.Comment)
	}
	b = appendIntField(b, keyID, int64(c.ID))
	return append(b, '}'), nil
}

// UnmarshalSchemaJSON reads Fluss's Schema JSON form, as returned by
// GetTableSchema (apache/fluss: utils/json/SchemaJsonSerde.java). It follows
// the Java reader: `columns` is required; `id`s are all present or all absent
// (absent: columns get 0..n-1 and nested field ids stay as written);
// `highest_field_id` defaults to the largest id and must not be smaller than
// any id; ids must be distinct; a present `primary_key` must not be empty;
// primary-key columns and MAP keys become NOT NULL. Column `agg_function`s are
// not represented in Schema and are dropped. Errors are KindInvalidArgument
// *Error values naming the JSON path.
func UnmarshalSchemaJSON(data []byte) (domain.Schema, error) {
	v, err := parseJSONTree(data)
	if err != nil {
		return domain.Schema{}, err
	}
	return decodeSchema(v, "")
}

func decodeSchema(v any, path string) (domain.Schema, error) {
	obj, err := asObject(v, path)
	if err != nil {
		return domain.Schema{}, err
	}
	cpath := joinPath(path, keyColumns)
	raw, ok := obj[keyColumns]
	if !ok {
		return domain.Schema{}, jsonErrorf(cpath, "missing")
	}
	items, isArray := raw.([]any)
	if !isArray {
		return domain.Schema{}, jsonErrorf(cpath, "must be an array")
	}
	var s domain.Schema
	s.Columns = make([]domain.Column, 0, len(items))
	withID := 0
	for i, item := range items {
		col, err := decodeColumn(item, indexPath(cpath, i))
		if err != nil {
			return domain.Schema{}, err
		}
		if col.ID != domain.UnassignedFieldID {
			withID++
		}
		s.Columns = append(s.Columns, col)
	}
	switch {
	case withID == len(s.Columns):
		// Every column has an id (or there are none): keep them all.
	case withID == 0:
		// Schemas written before column ids existed: ids follow positions and
		// nested field ids stay as they are (Schema.Builder#fromColumns).
		for i := range s.Columns {
			s.Columns[i].ID = int32(i)
		}
	default:
		return domain.Schema{}, domain.MixedFieldIDsError(s.Columns, cpath)
	}
	largest, err := domain.CheckFieldIDs(s.Columns)
	if err != nil {
		return domain.Schema{}, prefixError(path, err)
	}
	hpath := joinPath(path, keyHighestFieldID)
	if hv, present := obj[keyHighestFieldID]; present {
		if s.HighestFieldID, err = asInt32(hv, hpath); err != nil {
			return domain.Schema{}, err
		}
		if len(s.Columns) > 0 && s.HighestFieldID < largest {
			return domain.Schema{}, jsonErrorf(hpath, "%d is smaller than the largest field id %d", s.HighestFieldID, largest)
		}
	} else {
		// Java counts only the column ids it hands out in the id-less case.
		s.HighestFieldID = largest
		if withID == 0 && len(s.Columns) > 0 {
			s.HighestFieldID = int32(len(s.Columns) - 1)
			if largest > s.HighestFieldID {
				return domain.Schema{}, jsonErrorf(hpath, "missing, and nested field id %d is larger than the last column id %d",
					largest, s.HighestFieldID)
			}
		}
	}
	pk, present, err := optStringList(obj, keyPrimaryKey, path)
	if err != nil {
		return domain.Schema{}, err
	}
	if present && len(pk) == 0 {
		return domain.Schema{}, jsonErrorf(joinPath(path, keyPrimaryKey), "must name at least one column when present")
	}
	s.PrimaryKey = pk
	if s.AutoIncrementColumn, _, err = optStringList(obj, keyAutoIncrement, path); err != nil {
		return domain.Schema{}, err
	}
	domain.ForcePrimaryKeyNotNull(&s)
	return s, nil
}

func decodeColumn(v any, path string) (domain.Column, error) {
	obj, err := asObject(v, path)
	if err != nil {
		return domain.Column{}, err
	}
	name, ok, err := optString(obj, keyName, path)
	if err != nil {
		return domain.Column{}, err
	}
	if !ok {
		return domain.Column{}, jsonErrorf(joinPath(path, keyName), "missing")
	}
	tv, ok := obj[keyDataType]
	if !ok {
		return domain.Column{}, jsonErrorf(joinPath(path, keyDataType), "missing")
	}
	typ, err := decodeDataType(tv, joinPath(path, keyDataType), 0)
	if err != nil {
		return domain.Column{}, err
	}
	comment, _, err := optString(obj, keyComment, path)
	if err != nil {
		return domain.Column{}, err
	}
	id, ok, err := optInt32(obj, keyID, path)
	if err != nil {
		return domain.Column{}, err
	}
	if !ok {
		id = domain.UnassignedFieldID
	}
	return domain.Column{Name: name, Type: typ, Comment: comment, ID: id}, nil
}
