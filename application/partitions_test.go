package application

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func pvInfo() domain.TableInfo {
	return domain.TableInfo{Descriptor: domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt}},
			{Name: "region", Type: domain.DataType{Root: domain.TypeString}},
			{Name: "day", Type: domain.DataType{Root: domain.TypeDate}},
		}, PrimaryKey: []string{"id", "region", "day"}},
		PartitionKeys: []string{"region", "day"},
	}}
}

func TestCheckWritePartitions(t *testing.T) {
	t.Parallel()
	row := func(region string) []domain.Datum {
		return []domain.Datum{{I64: 1}, {Bytes: []byte(region)}, {I64: 20000}}
	}
	cases := []struct {
		region string
		ok     bool
	}{
		{"eu", true}, {"eu-west_1", true}, {"", false}, {"..", false}, {".", false}, {"a/b", false}, {"a$b", false}, {"é", false},
	}
	for _, tc := range cases {
		batch := &domain.WriteBatch{Entries: []domain.WriteEntry{{Op: domain.OpUpsert, Row: row("eu")}, {Op: domain.OpUpsert, Row: row(tc.region)}}}
		err := checkWritePartitions(pvInfo(), batch, []string{"a", "b"})
		if tc.ok {
			assert.NoError(t, err, tc.region)
			continue
		}
		de := domain.AsError(err)
		require.NotNil(t, de, tc.region)
		assert.Equal(t, domain.KindInvalidArgument, de.Kind)
		assert.Contains(t, de.Message, "entry `b`: column `region`")
	}
	// A null partition value (any type) is refused naming the entry and column.
	for i, name := range []string{"region", "day"} {
		row := []domain.Datum{{I64: 1}, {Bytes: []byte("eu")}, {I64: 1}}
		row[i+1] = domain.Datum{Null: true}
		batch := &domain.WriteBatch{Entries: []domain.WriteEntry{{Op: domain.OpAppend, Row: row}}}
		de := domain.AsError(checkWritePartitions(pvInfo(), batch, []string{"a"}))
		require.NotNil(t, de, name)
		assert.Equal(t, domain.KindInvalidArgument, de.Kind)
		assert.Contains(t, de.Message, "entry `a`: column `"+name+"`")
		assert.Contains(t, de.Message, "must not be null")
	}
}

func TestCheckKeyPartitions(t *testing.T) {
	t.Parallel()
	keys := [][]domain.Datum{{{I64: 1}, {Bytes: []byte("eu")}, {I64: 1}}, {{I64: 2}, {Bytes: []byte("")}, {I64: 1}}}
	err := checkKeyPartitions(pvInfo(), []string{"id", "region", "day"}, keys, "keys")
	de := domain.AsError(err)
	require.NotNil(t, de)
	assert.Contains(t, de.Message, "keys[1]: column `region`")
	assert.NoError(t, checkKeyPartitions(pvInfo(), []string{"id", "region", "day"}, keys[:1], "keys"))
}
