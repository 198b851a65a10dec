package application

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// validatePrefixColumnsReference is validatePrefixColumns as it was before
// issue 22 made its checks compare without copying the column lists.
func validatePrefixColumnsReference(info domain.TableInfo, cols []string) error {
	d := info.Descriptor
	pk := d.Schema.PrimaryKey
	physPK := slices.DeleteFunc(slices.Clone(pk), func(c string) bool { return slices.Contains(d.PartitionKeys, c) })
	bucket := d.BucketKeys
	if len(bucket) == 0 {
		bucket = domain.DefaultBucketKeys(pk, d.PartitionKeys)
	}
	if len(bucket) >= len(physPK) || !slices.Equal(bucket, physPK[:len(bucket)]) {
		return domain.InvalidArgument("table `%s` does not support prefix lookups: its bucket key %v is not a proper prefix of its primary key %v (without partition columns)",
			info.Path, bucket, physPK)
	}
	if !acrossPartitions(info, cols) {
		for _, p := range d.PartitionKeys {
			if !slices.Contains(cols, p) {
				return domain.InvalidArgument("prefix_columns: must include the partition column `%s`, or leave out every partition column to look up across all partitions", p)
			}
		}
	}
	phys := slices.DeleteFunc(slices.Clone(cols), func(c string) bool { return slices.Contains(d.PartitionKeys, c) })
	if !slices.Equal(phys, bucket) {
		if len(d.PartitionKeys) > 0 {
			return domain.InvalidArgument("prefix_columns: %v must be the bucket key %v in this order, plus the partition columns %v",
				cols, bucket, d.PartitionKeys)
		}
		return domain.InvalidArgument("prefix_columns: %v must be the bucket key %v in this order", cols, bucket)
	}
	return nil
}

func TestValidatePrefixColumnsLikeBefore(t *testing.T) {
	t.Parallel()
	table := func(pk, bucket, parts []string) domain.TableInfo {
		return domain.TableInfo{Path: domain.TablePath{Database: "d", Table: "t"}, Descriptor: domain.TableDescriptor{
			Schema: domain.Schema{PrimaryKey: pk}, BucketKeys: bucket, PartitionKeys: parts}}
	}
	cases := []struct {
		name string
		info domain.TableInfo
		cols []string
		ok   bool
	}{
		{"bucket key", table([]string{"k", "name"}, []string{"k"}, nil), []string{"k"}, true},
		{"two-column bucket key", table([]string{"a", "b", "c"}, []string{"a", "b"}, nil), []string{"a", "b"}, true},
		{"wrong order", table([]string{"a", "b", "c"}, []string{"a", "b"}, nil), []string{"b", "a"}, false},
		{"too few", table([]string{"a", "b", "c"}, []string{"a", "b"}, nil), []string{"a"}, false},
		{"too many", table([]string{"a", "b", "c"}, []string{"a", "b"}, nil), []string{"a", "b", "c"}, false},
		{"none", table([]string{"k", "name"}, []string{"k"}, nil), nil, false},
		{"bucket key equals the primary key", table([]string{"k"}, []string{"k"}, nil), []string{"k"}, false},
		{"default bucket key", table([]string{"k", "name"}, nil, nil), []string{"k"}, false},
		{"bucket key not a prefix", table([]string{"a", "b", "c"}, []string{"b"}, nil), []string{"b"}, false},
		{"with the partition column", table([]string{"day", "k", "name"}, []string{"k"}, []string{"day"}), []string{"k", "day"}, true},
		{"partition column first", table([]string{"day", "k", "name"}, []string{"k"}, []string{"day"}), []string{"day", "k"}, true},
		{"across partitions", table([]string{"day", "k", "name"}, []string{"k"}, []string{"day"}), []string{"k"}, true},
		{"one of two partition columns", table([]string{"y", "m", "k", "name"}, []string{"k"}, []string{"y", "m"}), []string{"k", "y"}, false},
		{"both partition columns", table([]string{"y", "m", "k", "name"}, []string{"k"}, []string{"y", "m"}), []string{"m", "k", "y"}, true},
		{"partition column in the middle of the key", table([]string{"k", "day", "name"}, []string{"k"}, []string{"day"}), []string{"k"}, true},
		{"only partition columns", table([]string{"day", "k", "name"}, []string{"k"}, []string{"day"}), []string{"day"}, false},
		{"repeated column", table([]string{"k", "name"}, []string{"k"}, nil), []string{"k", "k"}, false},
		{"primary key of partition columns only", table([]string{"day"}, []string{"day"}, []string{"day"}), []string{"day"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, want := validatePrefixColumns(tc.info, tc.cols), validatePrefixColumnsReference(tc.info, tc.cols)
			assert.Equal(t, want, got)
			if tc.ok {
				assert.NoError(t, got)
			} else {
				assert.Error(t, got)
			}
		})
	}
}
