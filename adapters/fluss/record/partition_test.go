package record

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

type partitionCase struct {
	name string
	typ  domain.DataType
	val  domain.Datum
	want string
}

// apache/fluss fluss-common/src/test/java/org/apache/fluss/utils/PartitionUtilsTest.java
// (v0.9.1-incubating); docs/fluss-records.md, Partition names.
func TestPartitionUtilsTest(t *testing.T) {
	t.Parallel()
	tests := []partitionCase{
		{"STRING", typ(domain.TypeString), str("Fluss"), "Fluss"},
		{"CHAR", charT(1), str("F"), "F"},
		{"BOOLEAN", typ(domain.TypeBoolean), i64(1), "true"},
		{"BYTES", typ(domain.TypeBytes), raw(0x10, 0x20, 0x30, 0x40, 0x50, 0xFF), "1020304050ff"},
		{"BINARY", binaryT(6), raw(0x10, 0x20, 0x30, 0x40, 0x50, 0xFF), "1020304050ff"},
		{"TINYINT", typ(domain.TypeTinyInt), i64(100), "100"},
		{"SMALLINT", typ(domain.TypeSmallInt), i64(-32760), "-32760"},
		{"INT", typ(domain.TypeInteger), i64(299000), "299000"},
		{"BIGINT", typ(domain.TypeBigInt), i64(1748662955428), "1748662955428"},
		{"DATE", typ(domain.TypeDate), i64(20235), "2025-05-27"},
		{"TIME", typ(domain.TypeTime), i64(5402199), "01-30-02_199"},
		{"FLOAT", typ(domain.TypeFloat), f64(float64(float32(5.73))), "5_73"},
		{"DOUBLE", typ(domain.TypeDouble), f64(5.73), "5_73"},
	}
	for _, root := range []domain.TypeRoot{domain.TypeTimestampNTZ, domain.TypeTimestampLTZ} {
		ty := domain.DataType{Root: root, Nullable: true, Precision: 9}
		tests = append(tests,
			partitionCase{string(root) + " millis+nanos", ty, ts(1748662955428, 99988), "2025-05-31-03-42-35_428099988"},
			partitionCase{string(root) + " zero nanos", ty, ts(1748662955428, 0), "2025-05-31-03-42-35_428"},
			partitionCase{string(root) + " zero millis", ty, ts(1748662955000, 99988), "2025-05-31-03-42-35_000099988"},
			partitionCase{string(root) + " zero nanos and millis", ty, ts(1748662955000, 0), "2025-05-31-03-42-35_"},
			partitionCase{string(root) + " negative millis", ty, ts(-1748662955428, 99988), "1914-08-03-20-17-24_572099988"},
		)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := AppendPartitionValue(nil, &tc.typ, &tc.val)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

// Further cases derived from PartitionNameConverters and Java's
// Float/Double.toString rules (JDK 19+ shortest digits).
func TestPartitionValueEdgeCases(t *testing.T) {
	t.Parallel()
	tests := []partitionCase{
		{"BOOLEAN false", typ(domain.TypeBoolean), i64(0), "false"},
		{"empty BYTES", typ(domain.TypeBytes), raw(), ""},
		{"DATE epoch", typ(domain.TypeDate), i64(0), "1970-01-01"},
		{"DATE before epoch", typ(domain.TypeDate), i64(-1), "1969-12-31"},
		{"DATE year 10000", typ(domain.TypeDate), i64(2932897), "10000-01-01"},
		{"TIME midnight", typ(domain.TypeTime), i64(0), "00-00-00_000"},
		{"TIME last milli", typ(domain.TypeTime), i64(86399999), "23-59-59_999"},
		{"TIME negative uses floor arithmetic", typ(domain.TypeTime), i64(-1), "-1-59-59_999"},
		{"DOUBLE integral", typ(domain.TypeDouble), f64(100), "100_0"},
		{"DOUBLE negative", typ(domain.TypeDouble), f64(-2.5), "-2_5"},
		{"DOUBLE 0.001 stays decimal", typ(domain.TypeDouble), f64(0.001), "0_001"},
		{"DOUBLE 0.0001 goes scientific", typ(domain.TypeDouble), f64(0.0001), "1_0E-4"},
		{"DOUBLE 1234567.5 stays decimal", typ(domain.TypeDouble), f64(1234567.5), "1234567_5"},
		{"DOUBLE 1e7 goes scientific", typ(domain.TypeDouble), f64(1e7), "1_0E7"},
		{"DOUBLE 1.2345e10", typ(domain.TypeDouble), f64(1.2345e10), "1_2345E10"},
		{"DOUBLE zero", typ(domain.TypeDouble), f64(0), "0_0"},
		{"DOUBLE negative zero", typ(domain.TypeDouble), f64(math.Copysign(0, -1)), "-0_0"},
		{"DOUBLE NaN", typ(domain.TypeDouble), f64(math.NaN()), "NaN"},
		{"DOUBLE +Inf", typ(domain.TypeDouble), f64(math.Inf(1)), "Inf"},
		{"DOUBLE -Inf", typ(domain.TypeDouble), f64(math.Inf(-1)), "-Inf"},
		{"DOUBLE MIN_VALUE (two-digit rule)", typ(domain.TypeDouble), f64(math.SmallestNonzeroFloat64), "4_9E-324"},
		{"DOUBLE MAX_VALUE", typ(domain.TypeDouble), f64(math.MaxFloat64), "1_7976931348623157E308"},
		{"FLOAT 0.1", typ(domain.TypeFloat), f64(float64(float32(0.1))), "0_1"},
		{"FLOAT 1e10", typ(domain.TypeFloat), f64(1e10), "1_0E10"},
		{"FLOAT MIN_VALUE (two-digit rule)", typ(domain.TypeFloat), f64(math.SmallestNonzeroFloat32), "1_4E-45"},
		{"FLOAT MAX_VALUE", typ(domain.TypeFloat), f64(math.MaxFloat32), "3_4028235E38"},
		{"FLOAT 123456.7", typ(domain.TypeFloat), f64(float64(float32(123456.7))), "123456_7"},
		{"TIMESTAMP epoch", tsT(3), ts(0, 0), "1970-01-01-00-00-00_"},
		{"TIMESTAMP one nano", tsT(9), ts(0, 1), "1970-01-01-00-00-00_000000001"},
		{"TIMESTAMP year -1 (2 BC) prints year of era 0002", tsT(3), ts(-62198755200000, 0), "0002-01-01-00-00-00_"},
		{"TIMESTAMP year 10000 gets a plus sign", tsT(3), ts(253402300800000, 0), "+10000-01-01-00-00-00_"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := AppendPartitionValue(nil, &tc.typ, &tc.val)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestPartitionName(t *testing.T) {
	// Not parallel: testing.AllocsPerRun refuses parallel tests.
	name, err := PartitionName(
		types(typ(domain.TypeString), typ(domain.TypeInteger), typ(domain.TypeDate)),
		row(str("eu"), i64(7), i64(20235)))
	require.NoError(t, err)
	assert.Equal(t, "eu$7$2025-05-27", name)

	dst := make([]byte, 0, 64)
	tys := types(typ(domain.TypeString), typ(domain.TypeBigInt))
	vals := row(str("x"), i64(-3))
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = AppendPartitionName(dst[:0], tys, vals)
	})
	assert.Zero(t, allocs)

	_, err = PartitionName(types(typ(domain.TypeString)), row(null()))
	assert.ErrorIs(t, err, ErrInvalidValue, "null partition value")
	_, err = PartitionName(types(decimalT(10, 2)), row(i64(1)))
	assert.ErrorIs(t, err, ErrUnsupported, "DECIMAL is not a partition key type")
	_, err = PartitionName(types(typ(domain.TypeTinyInt)), row(i64(300)))
	assert.ErrorIs(t, err, ErrInvalidValue)
	_, err = PartitionName(types(typ(domain.TypeString)), row())
	assert.ErrorIs(t, err, ErrInvalidValue)
}
