package serde

// This file holds the DatabaseDescriptor document (`database_json`;
// apache/fluss: utils/json/DatabaseDescriptorJsonSerde.java).

import (
	"strconv"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// MarshalDatabaseDescriptorJSON writes d in Fluss's DatabaseDescriptor JSON
// form, the `database_json` of CreateDatabase (apache/fluss:
// utils/json/DatabaseDescriptorJsonSerde.java): `version` 1, `comment` when
// not empty, `custom_properties` (always, possibly `{}`) in java.util.HashMap
// iteration order. It does not fail; the error is there for symmetry with
// the other writers.
func MarshalDatabaseDescriptorJSON(d domain.DatabaseDescriptor) ([]byte, error) {
	b := make([]byte, 0, 64)
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, flussJSONVersion, 10)
	if d.Comment != "" {
		b = append(b, `,"comment":`...)
		b = appendJSONString(b, d.Comment)
	}
	b = append(b, `,"custom_properties":`...)
	b = appendStringMap(b, d.CustomProperties)
	return append(b, '}'), nil
}

// UnmarshalDatabaseDescriptorJSON reads Fluss's DatabaseDescriptor JSON form,
// as returned by GetDatabaseInfo (apache/fluss:
// utils/json/DatabaseDescriptorJsonSerde.java). `custom_properties` is
// required; `comment` is optional; other keys are ignored. Errors are
// KindInvalidArgument *Error values naming the JSON path.
func UnmarshalDatabaseDescriptorJSON(data []byte) (domain.DatabaseDescriptor, error) {
	v, err := parseJSONTree(data)
	if err != nil {
		return domain.DatabaseDescriptor{}, err
	}
	obj, err := asObject(v, "")
	if err != nil {
		return domain.DatabaseDescriptor{}, err
	}
	var d domain.DatabaseDescriptor
	if d.Comment, _, err = optString(obj, keyComment, ""); err != nil {
		return domain.DatabaseDescriptor{}, err
	}
	if d.CustomProperties, err = requiredStringMap(obj, keyCustomProperties); err != nil {
		return domain.DatabaseDescriptor{}, err
	}
	return d, nil
}
