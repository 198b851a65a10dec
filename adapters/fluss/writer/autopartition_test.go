package writer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestAutoPartitionTimeFormatWrites: a table's
// table.auto-partition.time-format (Fluss 1.0) decides which partition
// values writes accept, with auto-partitioning on (format and retention)
// and off (the format alone: Fluss checks it when a partition is created by
// name); a refused entry creates no partition.
func TestAutoPartitionTimeFormatWrites(t *testing.T) {
	t.Parallel()
	table := func(id int64, name string, props map[string]string) *metatest.Table {
		return &metatest.Table{ID: id, Path: domain.TablePath{Database: "db", Table: name}, Desc: domain.TableDescriptor{
			Schema: domain.Schema{Columns: []domain.Column{
				col("id", domain.TypeBigInt, false, 0), col("dt", domain.TypeString, false, 1), col("v", domain.TypeString, true, 2),
			}, PrimaryKey: []string{"id", "dt"}, HighestFieldID: 2},
			PartitionKeys: []string{"dt"}, BucketCount: 1, CustomProperties: map[string]string{}, Properties: props,
		}}
	}
	on := table(41, "iso", map[string]string{"table.auto-partition.enabled": "true", "table.auto-partition.time-unit": "DAY",
		"table.auto-partition.time-format": "yyyy-MM-dd", "table.auto-partition.num-retention": "30"})
	off := table(42, "manual", map[string]string{"table.auto-partition.time-unit": "MONTH",
		"table.auto-partition.time-format": "yyyy_MM"})
	row := func(op domain.WriteOp, id int64, dt string) domain.WriteEntry {
		return domain.WriteEntry{Op: op, Row: []domain.Datum{{I64: id}, {Bytes: []byte(dt)}, {Bytes: []byte("v")}}}
	}
	now := time.Now().UTC()
	e := newEnv(t, Options{Linger: time.Millisecond}, on, off)

	res := e.write(t, ctxTimeout(t, 5*time.Second), on.Path,
		row(domain.OpUpsert, 1, now.Format("2006-01-02")),                    // the table's format: written
		row(domain.OpUpsert, 2, now.Format("20060102")),                      // the unit's default form: refused
		row(domain.OpUpsert, 3, now.AddDate(0, 0, -31).Format("2006-01-02")), // older than the retention
	)
	assert.True(t, res[0].OK(), "%+v", res[0])
	assert.Equal(t, CodeInvalidArgument, res[1].Code)
	assert.Equal(t, domain.AppliedNo, res[1].Applied)
	assert.Contains(t, res[1].Message, "format yyyy-MM-dd (table.auto-partition.time-format")
	assert.Equal(t, CodeInvalidArgument, res[2].Code)
	assert.Contains(t, res[2].Message, "num-retention 30")
	assert.Equal(t, 1, e.fake.Calls(wire.KeyCreatePartition), "only today's partition is created")

	res = e.write(t, ctxTimeout(t, 5*time.Second), off.Path,
		row(domain.OpUpsert, 1, "2020_01"), // in the format, however old: written
		row(domain.OpUpsert, 2, "202001"),  // another form: refused
	)
	assert.True(t, res[0].OK(), "%+v", res[0])
	assert.Equal(t, CodeInvalidArgument, res[1].Code)
	assert.Contains(t, res[1].Message, "auto-partitioning off")
	assert.Equal(t, 2, e.fake.Calls(wire.KeyCreatePartition), "2020_01 is created, 202001 is not")
}
