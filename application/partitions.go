package application

import (
	"fmt"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// partitionColumns returns, for a partitioned table, the positions (in the
// table's columns) of its STRING and CHAR partition columns: the only ones
// whose partition-name form is the user's text verbatim and so may break
// Fluss's partition-name rules (apache/fluss: PartitionUtils: ASCII letters,
// digits, '_' and '-'; not empty, "." or ".."). Other types render to names
// that always satisfy them.
func partitionColumns(info domain.TableInfo) (pos []int, names []string) {
	cols := info.Descriptor.Schema.Columns
	for _, k := range info.Descriptor.PartitionKeys {
		for i, c := range cols {
			if c.Name == k && (c.Type.Root == domain.TypeString || c.Type.Root == domain.TypeChar) {
				pos = append(pos, i)
				names = append(names, k)
			}
		}
	}
	return pos, names
}

// checkWritePartitions refuses, before anything is written, a write whose
// entries carry a partition value Fluss cannot name a partition after: a
// 400 naming the entry and the column, instead of a per-entry backend error
// after a metadata round trip. A null partition value is refused the same
// way whatever the column's type and nullability: Fluss names a partition
// after every partition column's value and has no name for null
// (apache/fluss PartitionUtils / ResolvedPartitionSpec), so the official
// gateway's one-invalid-entry-writes-nothing rule applies.
func checkWritePartitions(info domain.TableInfo, batch *domain.WriteBatch, ids []string) error {
	if len(info.Descriptor.PartitionKeys) == 0 {
		return nil
	}
	pos, names := partitionColumns(info)
	all, allNames := allPartitionColumns(info)
	for e := range batch.Entries {
		row := batch.Entries[e].Row
		for j, p := range all {
			if p < len(row) && row[p].Null {
				return domain.InvalidArgument("entry `%s`: column `%s`: a partition column's value must not be null", ids[e], allNames[j])
			}
		}
		for j, p := range pos {
			if p >= len(row) || row[p].Null {
				continue
			}
			if err := domain.ValidateName("partition value", string(row[p].Bytes)); err != nil {
				return domain.InvalidArgument("entry `%s`: column `%s`: %s", ids[e], names[j], err.Message)
			}
		}
	}
	return nil
}

// allPartitionColumns returns the positions and names of every partition
// column, in partition-key order.
func allPartitionColumns(info domain.TableInfo) (pos []int, names []string) {
	cols := info.Descriptor.Schema.Columns
	for _, k := range info.Descriptor.PartitionKeys {
		for i, c := range cols {
			if c.Name == k {
				pos = append(pos, i)
				names = append(names, k)
			}
		}
	}
	return pos, names
}

// checkKeyPartitions does the same for lookup keys, given the column names of
// each key position (primary-key columns, or the prefix columns); what names
// the key in messages is the prefix, e.g. "keys" or "prefixes".
func checkKeyPartitions(info domain.TableInfo, keyColumns []string, keys [][]domain.Datum, what string) error {
	_, names := partitionColumns(info)
	if len(names) == 0 {
		return nil
	}
	for k, key := range keys {
		for i, col := range keyColumns {
			if i >= len(key) || key[i].Null {
				continue
			}
			for _, n := range names {
				if n != col {
					continue
				}
				if err := domain.ValidateName("partition value", string(key[i].Bytes)); err != nil {
					return domain.InvalidArgument("%s: column `%s`: %s", fmt.Sprintf("%s[%d]", what, k), col, err.Message)
				}
			}
		}
	}
	return nil
}
