package http

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The REST JSON of Fluss data types, as the official gateway's OpenAPI
// document defines it (apache/fluss: fluss-gateway/openapi.yaml, schemas
// ColumnDataType, WireDataType and WireRowField). It uses Fluss's own type
// vocabulary (INTEGER, STRING, TIMESTAMP_WITH_LOCAL_TIME_ZONE, ...), but it is
// the HTTP API's format, kept apart from the Fluss wire JSON the admin client
// sends to the coordinator (adapters/fluss/serde), so that either can change
// without the other:
//
//   - A column's `data_type` (ColumnDataType) never carries `nullable`: the
//     nullability of a column is its sibling `nullable` member.
//   - Nested types (`element_type`, `key_type`, `value_type`, `field_type`)
//     may carry `nullable` (default true); responses write it only as false.
//   - Every parameter is required: `length` for CHAR and BINARY, `precision`
//     and `scale` for DECIMAL, `precision` for TIME_WITHOUT_TIME_ZONE and both
//     timestamps. No defaults are filled in.
//   - ROW fields are {name, field_type, description?}; field ids are the
//     server's and are neither accepted nor written.
//   - Every type object has exactly the members of its type; any other member
//     is a 400 naming it.

// rawDataType holds a data type document verbatim until the handler decodes
// it with decodeDataType, which needs the field path for its messages. A
// member given as null holds "null"; an absent one is nil.
type rawDataType = jsontext.Value

// typeParams lists the parameter members of each type root.
var typeParams = map[domain.TypeRoot][]string{
	domain.TypeChar:         {"length"},
	domain.TypeBinary:       {"length"},
	domain.TypeDecimal:      {"precision", "scale"},
	domain.TypeTime:         {"precision"},
	domain.TypeTimestampNTZ: {"precision"},
	domain.TypeTimestampLTZ: {"precision"},
	domain.TypeArray:        {"element_type"},
	domain.TypeMap:          {"key_type", "value_type"},
	domain.TypeRow:          {"fields"},
}

// typeRoots lists the type names of the REST vocabulary, for messages.
var typeRoots = []domain.TypeRoot{
	domain.TypeBoolean, domain.TypeTinyInt, domain.TypeSmallInt, domain.TypeInteger, domain.TypeBigInt,
	domain.TypeFloat, domain.TypeDouble, domain.TypeChar, domain.TypeString, domain.TypeDecimal,
	domain.TypeDate, domain.TypeTime, domain.TypeTimestampNTZ, domain.TypeTimestampLTZ,
	domain.TypeBytes, domain.TypeBinary, domain.TypeArray, domain.TypeMap, domain.TypeRow,
}

// decodeDataType decodes a column's `data_type` document. The result is
// nullable; the column's `nullable` member decides the top level.
func decodeDataType(raw []byte, path string) (domain.DataType, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return domain.DataType{}, domain.InvalidArgument("%s: required", path)
	}
	n, err := parseJSON(trimmed)
	if err != nil {
		return domain.DataType{}, err
	}
	return typeFromNode(n, path, 0)
}

// typeFromNode builds a domain type from its REST document.
func typeFromNode(n *node, path string, depth int) (domain.DataType, error) {
	if depth > domain.MaxTypeNesting {
		return domain.DataType{}, domain.InvalidArgument("%s: data types nest deeper than %d levels", path, domain.MaxTypeNesting)
	}
	if n.kind != '{' {
		return domain.DataType{}, mismatch(path, "a data type object such as {\"type\":\"INTEGER\"}", n)
	}
	members := make(map[string]*node, len(n.keys))
	for i, k := range n.keys {
		members[k] = n.items[i]
	}
	tn, ok := members["type"]
	if !ok {
		return domain.DataType{}, domain.InvalidArgument("%s.type: required", path)
	}
	if tn.kind != 's' {
		return domain.DataType{}, mismatch(path+".type", "a string", tn)
	}
	root := domain.TypeRoot(tn.text)
	if !contains(rootNames(), tn.text) {
		return domain.DataType{}, domain.InvalidArgument("%s.type: unknown data type %q; the Fluss types are %s", path, tn.text, strings.Join(rootNames(), ", "))
	}
	params := typeParams[root]
	for _, k := range n.keys {
		switch {
		case k == "type" || contains(params, k):
		case k == "nullable" && depth > 0:
		case k == "nullable":
			return domain.DataType{}, domain.InvalidArgument("%s.nullable: a column's nullability is the column's own `nullable` member, not part of data_type", path)
		default:
			return domain.DataType{}, domain.InvalidArgument("%s.%s: unknown field of a %s data type", path, k, root)
		}
	}
	for _, k := range params {
		if _, ok := members[k]; !ok {
			return domain.DataType{}, domain.InvalidArgument("%s.%s: required for %s", path, k, root)
		}
	}
	t := domain.DataType{Root: root, Nullable: true}
	if nn, ok := members["nullable"]; ok {
		if nn.kind != 'b' {
			return domain.DataType{}, mismatch(path+".nullable", "a boolean", nn)
		}
		t.Nullable = nn.text == "true"
	}
	var err error
	intParam := func(key string) int {
		if err != nil {
			return 0
		}
		var v int
		v, err = int32Member(members[key], path+"."+key)
		return v
	}
	child := func(key string) *domain.DataType {
		if err != nil {
			return nil
		}
		var c domain.DataType
		c, err = typeFromNode(members[key], path+"."+key, depth+1)
		return &c
	}
	switch root {
	case domain.TypeChar, domain.TypeBinary:
		t.Length = intParam("length")
	case domain.TypeDecimal:
		t.Precision = intParam("precision")
		t.Scale = intParam("scale")
	case domain.TypeTime, domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		t.Precision = intParam("precision")
	case domain.TypeArray:
		t.Element = child("element_type")
	case domain.TypeMap:
		t.Key = child("key_type")
		t.Value = child("value_type")
	case domain.TypeRow:
		t.Fields, err = fieldsFromNode(members["fields"], path+".fields", depth)
	}
	if err != nil {
		return domain.DataType{}, err
	}
	return t, nil
}

func fieldsFromNode(n *node, path string, depth int) ([]domain.DataField, error) {
	if n.kind != '[' {
		return nil, mismatch(path, "an array of fields", n)
	}
	out := make([]domain.DataField, len(n.items))
	for i, f := range n.items {
		fpath := fmt.Sprintf("%s[%d]", path, i)
		if f.kind != '{' {
			return nil, mismatch(fpath, "an object", f)
		}
		field := domain.DataField{FieldID: domain.UnassignedFieldID}
		var typed bool
		for k, key := range f.keys {
			v := f.items[k]
			kpath := joinField(fpath, key)
			switch key {
			case "name", "description":
				if v.kind != 's' {
					return nil, mismatch(kpath, "a string", v)
				}
				if key == "name" {
					field.Name = v.text
				} else {
					field.Description = v.text
				}
			case "field_type":
				t, err := typeFromNode(v, kpath, depth+1)
				if err != nil {
					return nil, err
				}
				field.Type, typed = t, true
			default:
				return nil, domain.InvalidArgument("%s: unknown field of a ROW field (ROW fields are name, field_type and description)", kpath)
			}
		}
		if !contains(f.keys, "name") {
			return nil, domain.InvalidArgument("%s.name: required", fpath)
		}
		if !typed {
			return nil, domain.InvalidArgument("%s.field_type: required", fpath)
		}
		out[i] = field
	}
	return out, nil
}

func int32Member(n *node, path string) (int, error) {
	if n.kind != 'n' {
		return 0, mismatch(path, "an integer", n)
	}
	v, err := strconv.ParseInt(n.text, 10, 32)
	if err != nil {
		return 0, domain.InvalidArgument("%s: expected a 32-bit integer, got %s", path, n.text)
	}
	return int(v), nil
}

func rootNames() []string {
	out := make([]string, len(typeRoots))
	for i, r := range typeRoots {
		out[i] = string(r)
	}
	return out
}

// restDataType renders a domain type as REST JSON. top is true for a
// column's `data_type`, which never carries `nullable`.
type restDataType struct {
	t   domain.DataType
	top bool
}

// MarshalJSON writes the type's REST form, `type` first.
func (r restDataType) MarshalJSON() ([]byte, error) {
	return appendRESTType(nil, &r.t, r.top, 0)
}

func appendRESTType(b []byte, t *domain.DataType, top bool, depth int) ([]byte, error) {
	if depth > domain.MaxTypeNesting {
		return nil, fmt.Errorf("http: data type nests deeper than %d levels", domain.MaxTypeNesting)
	}
	b = append(b, `{"type":`...)
	b = strconv.AppendQuote(b, string(t.Root))
	intMember := func(key string, v int) {
		b = append(b, ',', '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, int64(v), 10)
	}
	var err error
	childMember := func(key string, c *domain.DataType) {
		if err != nil {
			return
		}
		if c == nil {
			err = fmt.Errorf("http: %s type without %s", t.Root, key)
			return
		}
		b = append(b, ',', '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		b, err = appendRESTType(b, c, false, depth+1)
	}
	switch t.Root {
	case domain.TypeChar, domain.TypeBinary:
		intMember("length", t.Length)
	case domain.TypeDecimal:
		intMember("precision", t.Precision)
		intMember("scale", t.Scale)
	case domain.TypeTime, domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		intMember("precision", t.Precision)
	case domain.TypeArray:
		childMember("element_type", t.Element)
	case domain.TypeMap:
		childMember("key_type", t.Key)
		childMember("value_type", t.Value)
	case domain.TypeRow:
		b = append(b, `,"fields":[`...)
		for i := range t.Fields {
			f := &t.Fields[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendJSONString(b, f.Name)
			b = append(b, `,"field_type":`...)
			if b, err = appendRESTType(b, &f.Type, false, depth+1); err != nil {
				return nil, err
			}
			if f.Description != "" {
				b = append(b, `,"description":`...)
				b = appendJSONString(b, f.Description)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if err != nil {
		return nil, err
	}
	if !top && !t.Nullable {
		b = append(b, `,"nullable":false`...)
	}
	return append(b, '}'), nil
}
