package serde

// This file holds the TableDescriptor document (`table_json`; apache/fluss:
// utils/json/TableDescriptorJsonSerde.java).

import (
	"strconv"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// MarshalTableDescriptorJSON writes d in Fluss's TableDescriptor JSON form,
// the `table_json` of CreateTable (apache/fluss:
// utils/json/TableDescriptorJsonSerde.java): `version` 1, `schema` (see
// MarshalSchemaJSON), `comment` when not empty, `partition_key` (always),
// `bucket_key` and `bucket_count` when the table has a distribution, then
// `properties` and `custom_properties` (always, possibly `{}`).
//
// It applies what the Java TableDescriptor applies before serialising: a
// primary-key table always has a distribution, and empty bucket keys become
// the primary key minus the partition keys; a log table has a distribution
// when BucketCount or BucketKeys is set. `bucket_count` is written when
// BucketCount is not 0. Property keys follow java.util.HashMap iteration
// order (see javaHashMapOrder) so that the bytes equal the Java client's.
//
// It fails with a KindInvalidArgument *Error when the schema cannot be
// written or when the primary key has no column besides the partition keys
// (no default bucket key exists). It does not validate; call
// ValidateTableDescriptor first.
func MarshalTableDescriptorJSON(d domain.TableDescriptor) ([]byte, error) {
	schema, err := appendSchema(nil, d.Schema, keySchema)
	if err != nil {
		return nil, err
	}
	bucketKeys, err := effectiveBucketKeys(d)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(schema)+256)
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, flussJSONVersion, 10)
	b = append(b, `,"schema":`...)
	b = append(b, schema...)
	if d.Comment != "" {
		b = append(b, `,"comment":`...)
		b = appendJSONString(b, d.Comment)
	}
	b = append(b, `,"partition_key":`...)
	b = appendStringArray(b, d.PartitionKeys)
	if len(d.Schema.PrimaryKey) > 0 || d.BucketCount != 0 || len(bucketKeys) > 0 {
		b = append(b, `,"bucket_key":`...)
		b = appendStringArray(b, bucketKeys)
		if d.BucketCount != 0 {
			b = appendIntField(b, keyBucketCount, int64(d.BucketCount))
		}
	}
	b = append(b, `,"properties":`...)
	b = appendStringMap(b, d.Properties)
	b = append(b, `,"custom_properties":`...)
	b = appendStringMap(b, d.CustomProperties)
	return append(b, '}'), nil
}

// effectiveBucketKeys returns the bucket keys Fluss uses for d: the given ones,
// or for a primary-key table without any, the primary key minus the partition
// keys (apache/fluss: TableDescriptor#normalizeDistribution).
func effectiveBucketKeys(d domain.TableDescriptor) ([]string, error) {
	if len(d.BucketKeys) > 0 || len(d.Schema.PrimaryKey) == 0 {
		return d.BucketKeys, nil
	}
	keys := domain.DefaultBucketKeys(d.Schema.PrimaryKey, d.PartitionKeys)
	if len(keys) == 0 {
		return nil, jsonErrorf(joinPath(keySchema, keyPrimaryKey),
			"the primary key %v has no column besides the partition keys %v", d.Schema.PrimaryKey, d.PartitionKeys)
	}
	return keys, nil
}

// UnmarshalTableDescriptorJSON reads Fluss's TableDescriptor JSON form, as
// carried by GetTableInfo and CreateTable (apache/fluss:
// utils/json/TableDescriptorJsonSerde.java). `schema`, `partition_key`,
// `properties` and `custom_properties` are required; `bucket_key` is required
// when `bucket_count` is present; `version` and unknown keys are ignored.
// Schema rules are those of UnmarshalSchemaJSON. As in Java, a primary-key
// table without bucket keys gets the default ones (see DefaultBucketKeys).
// A `bucket_count` of 0 cannot be told apart from an absent one. The result
// is not validated (see ValidateTableDescriptor). Errors are KindInvalidArgument
// *Error values naming the JSON path; callers decoding a server response
// should report them as backend errors.
func UnmarshalTableDescriptorJSON(data []byte) (domain.TableDescriptor, error) {
	v, err := parseJSONTree(data)
	if err != nil {
		return domain.TableDescriptor{}, err
	}
	obj, err := asObject(v, "")
	if err != nil {
		return domain.TableDescriptor{}, err
	}
	var d domain.TableDescriptor
	sv, ok := obj[keySchema]
	if !ok {
		return domain.TableDescriptor{}, jsonErrorf(keySchema, "missing")
	}
	if d.Schema, err = decodeSchema(sv, keySchema); err != nil {
		return domain.TableDescriptor{}, err
	}
	if d.Comment, _, err = optString(obj, keyComment, ""); err != nil {
		return domain.TableDescriptor{}, err
	}
	pk, present, err := optStringList(obj, keyPartitionKey, "")
	if err != nil {
		return domain.TableDescriptor{}, err
	}
	if !present {
		return domain.TableDescriptor{}, jsonErrorf(keyPartitionKey, "missing")
	}
	d.PartitionKeys = pk
	_, hasKeys := obj[keyBucketKey]
	_, hasCount := obj[keyBucketCount]
	if hasKeys || hasCount {
		if !hasKeys {
			return domain.TableDescriptor{}, jsonErrorf(keyBucketKey, "missing (required with %s)", keyBucketCount)
		}
		if d.BucketKeys, _, err = optStringList(obj, keyBucketKey, ""); err != nil {
			return domain.TableDescriptor{}, err
		}
		if hasCount {
			n, err := asInt32(obj[keyBucketCount], keyBucketCount)
			if err != nil {
				return domain.TableDescriptor{}, err
			}
			d.BucketCount = int(n)
		}
	}
	if len(d.BucketKeys) == 0 && len(d.Schema.PrimaryKey) > 0 {
		if keys := domain.DefaultBucketKeys(d.Schema.PrimaryKey, d.PartitionKeys); len(keys) > 0 {
			d.BucketKeys = keys
		}
	}
	if d.Properties, err = requiredStringMap(obj, keyProperties); err != nil {
		return domain.TableDescriptor{}, err
	}
	if d.CustomProperties, err = requiredStringMap(obj, keyCustomProperties); err != nil {
		return domain.TableDescriptor{}, err
	}
	return d, nil
}
