// Test harness for package arrowlog: runs the real Fluss 0.9.1 Java writer
// and reader (fluss-common 0.9.1-incubating with its shaded Arrow 15) so that
// the Go builder and reader can be checked against them. Not part of the
// gateway build; see run.sh.
//
//   java ArrowGold write <dir>               for each data set, writes
//                                            java_<set>_<codec>.bin (one ARROW
//                                            log batch per codec) and
//                                            java_<set>_rows.txt (the rows read
//                                            back by Java, in canonical text)
//   java ArrowGold read <set> <file>...      prints the rows of each batch file
//
// Data sets (mirrored in java_test.go): "all" is allTypes/allTypesRows of
// helpers_test.go; "small" is (INT, STRING) with three rows; "empty" has
// nested values whose child vectors hold no value at all.

import org.apache.fluss.compression.ArrowCompressionInfo;
import org.apache.fluss.compression.ArrowCompressionType;
import org.apache.fluss.memory.UnmanagedPagedOutputView;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.record.ChangeType;
import org.apache.fluss.record.LogRecord;
import org.apache.fluss.record.LogRecordBatch;
import org.apache.fluss.record.LogRecordReadContext;
import org.apache.fluss.record.MemoryLogRecords;
import org.apache.fluss.record.MemoryLogRecordsArrowBuilder;
import org.apache.fluss.record.TestingSchemaGetter;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.Decimal;
import org.apache.fluss.row.GenericArray;
import org.apache.fluss.row.GenericMap;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalArray;
import org.apache.fluss.row.InternalMap;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.row.TimestampLtz;
import org.apache.fluss.row.TimestampNtz;
import org.apache.fluss.row.arrow.ArrowWriter;
import org.apache.fluss.row.arrow.ArrowWriterPool;
import org.apache.fluss.shaded.arrow.org.apache.arrow.memory.RootAllocator;
import org.apache.fluss.types.ArrayType;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.DataTypes;
import org.apache.fluss.types.DecimalType;
import org.apache.fluss.types.LocalZonedTimestampType;
import org.apache.fluss.types.MapType;
import org.apache.fluss.types.RowType;
import org.apache.fluss.types.TimestampType;
import org.apache.fluss.utils.CloseableIterator;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class ArrowGold {
    static final int SCHEMA_ID = 1;
    static final long WRITER_ID = 42;
    static final int BATCH_SEQUENCE = 7;

    static RowType named(DataType... types) {
        List<org.apache.fluss.types.DataField> fields = new ArrayList<>();
        for (int i = 0; i < types.length; i++) fields.add(DataTypes.FIELD("c" + i, types[i]));
        return DataTypes.ROW(fields.toArray(new org.apache.fluss.types.DataField[0]));
    }

    static RowType rowType(String set) {
        switch (set) {
            case "all": return allRowType();
            case "small": return named(DataTypes.INT(), DataTypes.STRING());
            case "empty": return named(
                    DataTypes.ARRAY(DataTypes.STRING()),
                    DataTypes.MAP(DataTypes.STRING(), DataTypes.ARRAY(DataTypes.INT())),
                    DataTypes.ARRAY(DataTypes.ARRAY(DataTypes.BOOLEAN())),
                    DataTypes.STRING().copy(false),
                    DataTypes.INT().copy(false));
            default: throw new IllegalArgumentException(set);
        }
    }

    static List<InternalRow> rows(String set) {
        switch (set) {
            case "all": return allRows();
            case "small": return Arrays.asList(
                    GenericRow.of(1, s("a")), GenericRow.of(null, s("bc")), GenericRow.of(3, null));
            case "empty": return Arrays.asList(
                    GenericRow.of(GenericArray.of(), map(), GenericArray.of(GenericArray.of()), s(""), 1),
                    GenericRow.of(null, null, null, s("x"), 2),
                    GenericRow.of(GenericArray.of(), map(s("k"), GenericArray.of()),
                            GenericArray.of(GenericArray.of(), null), s(""), 3));
            default: throw new IllegalArgumentException(set);
        }
    }

    static RowType allRowType() {
        List<DataType> t = new ArrayList<>();
        t.add(DataTypes.BOOLEAN());
        t.add(DataTypes.TINYINT());
        t.add(DataTypes.SMALLINT());
        t.add(DataTypes.INT());
        t.add(DataTypes.BIGINT());
        t.add(DataTypes.FLOAT());
        t.add(DataTypes.DOUBLE());
        t.add(DataTypes.DECIMAL(10, 2));
        t.add(DataTypes.DECIMAL(38, 10));
        t.add(DataTypes.CHAR(3));
        t.add(DataTypes.STRING());
        t.add(DataTypes.BINARY(4));
        t.add(DataTypes.BYTES());
        t.add(DataTypes.DATE());
        t.add(DataTypes.TIME(0));
        t.add(DataTypes.TIME(3));
        t.add(DataTypes.TIME(6));
        t.add(DataTypes.TIME(9));
        for (int p : new int[] {0, 3, 6, 9}) t.add(DataTypes.TIMESTAMP(p));
        for (int p : new int[] {0, 3, 6, 9}) t.add(DataTypes.TIMESTAMP_LTZ(p));
        t.add(DataTypes.ARRAY(DataTypes.INT()));
        t.add(DataTypes.ARRAY(DataTypes.ARRAY(DataTypes.STRING())));
        t.add(DataTypes.MAP(DataTypes.STRING(), DataTypes.BIGINT()));
        t.add(DataTypes.ROW(
                DataTypes.FIELD("f0", DataTypes.INT()),
                DataTypes.FIELD("f1", DataTypes.STRING().copy(false)),
                DataTypes.FIELD("f2", DataTypes.ARRAY(DataTypes.DOUBLE()))));
        t.add(DataTypes.INT().copy(false));
        t.add(DataTypes.MAP(DataTypes.INT(), DataTypes.ROW(
                DataTypes.FIELD("f0", DataTypes.BOOLEAN()),
                DataTypes.FIELD("f1", DataTypes.MAP(DataTypes.STRING(), DataTypes.BYTES())))));
        List<org.apache.fluss.types.DataField> fields = new ArrayList<>();
        for (int i = 0; i < t.size(); i++) fields.add(DataTypes.FIELD("c" + i, t.get(i)));
        return DataTypes.ROW(fields.toArray(new org.apache.fluss.types.DataField[0]));
    }

    static BinaryString s(String v) { return BinaryString.fromString(v); }
    static TimestampNtz ntz(long ms, int ns) { return TimestampNtz.fromMillis(ms, ns); }
    static TimestampLtz ltz(long ms, int ns) { return TimestampLtz.fromEpochMillis(ms, ns); }
    static Decimal dec38(BigInteger unscaled) { return Decimal.fromBigDecimal(new BigDecimal(unscaled, 10), 38, 10); }
    static GenericMap map(Object... kv) {
        Map<Object, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
        return new GenericMap(m);
    }

    static List<InternalRow> allRows() {
        BigInteger max38 = BigInteger.TEN.pow(38).subtract(BigInteger.ONE);
        GenericRow r1 = GenericRow.of(
                true, (byte) -128, (short) 32767, Integer.MIN_VALUE, Long.MAX_VALUE,
                1.5f, -2.25d,
                Decimal.fromUnscaledLong(12345, 10, 2), dec38(BigInteger.valueOf(-98765432109876L)),
                s("ab"), s("héllo, wörld"), new byte[] {1, 2, 3, 4}, new byte[] {(byte) 0xFF, 0},
                19655,
                34_200_000, 34_200_123, 86_399_999, 1,
                ntz(1698235273000L, 0), ntz(1698235273182L, 0), ntz(1698235273182L, 123000), ntz(1698235273182L, 123456),
                ltz(-1000, 0), ltz(-1, 0), ltz(1, 999000), ltz(-1, 0),
                GenericArray.of(1, null, -3),
                GenericArray.of(GenericArray.of(s("a"), null, s("c")), null, GenericArray.of()),
                map(s("k1"), 1L, s("k2"), null),
                GenericRow.of(7, s("x"), GenericArray.of(0.5d, null)),
                42,
                map(1, GenericRow.of(true, map(s("a"), new byte[] {9})), 2, null));
        Object[] nulls = new Object[32];
        nulls[30] = -1;
        GenericRow r2 = GenericRow.of(nulls);
        GenericRow r3 = GenericRow.of(
                false, (byte) 127, (short) -32768, Integer.MAX_VALUE, Long.MIN_VALUE,
                Float.NEGATIVE_INFINITY, Double.MAX_VALUE,
                Decimal.fromUnscaledLong(-9999999999L, 10, 2), dec38(max38),
                s(""), s(""), new byte[] {0, 0, 0, 0}, new byte[0],
                -719162,
                0, 0, 0, 0,
                ntz(0, 0), ntz(0, 0), ntz(0, 0), ntz(0, 0),
                ltz(253402300799000L, 0), ltz(-62135596800000L, 0), ltz(-62135596800000L, 0), ltz(9_000_000_000_000L, 999_999),
                GenericArray.of(), GenericArray.of(), map(),
                GenericRow.of(null, s(""), GenericArray.of()),
                0,
                map());
        GenericRow r4 = GenericRow.of(
                true, (byte) 5, (short) 5, 5, 5L, 0f, Double.MIN_VALUE,
                Decimal.fromUnscaledLong(0, 10, 2), dec38(max38.negate()),
                s("xyz"), s("long string ".repeat(20)), new byte[] {9, 9, 9, 9}, new byte[300],
                1, 1000, 1, 1, 1,
                ntz(1, 0), ntz(1, 0), ntz(1, 1000), ntz(1, 1),
                ltz(1, 0), ltz(1, 0), ltz(1, 1000), ltz(1, 1),
                GenericArray.of((Object) null), GenericArray.of(null, GenericArray.of((Object) null)), map(s(""), 0L),
                null,
                Integer.MIN_VALUE,
                map(0, null, -1, GenericRow.of(null, null)));
        return Arrays.asList(r1, r2, r3, r4);
    }

    static byte[] write(ArrowWriterPool pool, String set, ArrowCompressionInfo codec) throws Exception {
        RowType rowType = rowType(set);
        ArrowWriter writer = pool.getOrCreateWriter(set.hashCode(), SCHEMA_ID, 1 << 20, rowType, codec);
        MemoryLogRecordsArrowBuilder builder = MemoryLogRecordsArrowBuilder.builder(
                SCHEMA_ID, writer, new UnmanagedPagedOutputView(1 << 16), true);
        for (InternalRow r : rows(set)) builder.append(ChangeType.APPEND_ONLY, r);
        builder.setWriterState(WRITER_ID, BATCH_SEQUENCE);
        builder.close();
        var buf = builder.build().getByteBuf();
        byte[] out = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), out);
        return out;
    }

    static String read(RowType rowType, byte[] batch) throws Exception {
        TestingSchemaGetter getter = new TestingSchemaGetter(SCHEMA_ID, Schema.newBuilder().fromRowType(rowType).build());
        StringBuilder sb = new StringBuilder();
        MemoryLogRecords records = MemoryLogRecords.pointToBytes(batch);
        for (LogRecordBatch b : records.batches()) {
            b.ensureValid();
            try (LogRecordReadContext ctx = LogRecordReadContext.createArrowReadContext(rowType, SCHEMA_ID, getter);
                    CloseableIterator<LogRecord> it = b.records(ctx)) {
                while (it.hasNext()) {
                    LogRecord rec = it.next();
                    InternalRow row = rec.getRow();
                    for (int i = 0; i < rowType.getFieldCount(); i++) {
                        if (i > 0) sb.append(" | ");
                        sb.append(fmt(rowType.getTypeAt(i), row, i));
                    }
                    sb.append('\n');
                }
            }
        }
        return sb.toString();
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder("x:");
        for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    // Canonical text of one value; must match canonicalText in java_test.go.
    static String fmt(DataType t, Object getters, int i) {
        org.apache.fluss.row.DataGetters g = (org.apache.fluss.row.DataGetters) getters;
        if (g.isNullAt(i)) return "null";
        switch (t.getTypeRoot()) {
            case BOOLEAN: return g.getBoolean(i) ? "1" : "0";
            case TINYINT: return Byte.toString(g.getByte(i));
            case SMALLINT: return Short.toString(g.getShort(i));
            case INTEGER: case DATE: case TIME_WITHOUT_TIME_ZONE: return Integer.toString(g.getInt(i));
            case BIGINT: return Long.toString(g.getLong(i));
            case FLOAT: return "f:" + Integer.toHexString(Float.floatToRawIntBits(g.getFloat(i)));
            case DOUBLE: return "d:" + Long.toHexString(Double.doubleToRawLongBits(g.getDouble(i)));
            case DECIMAL: {
                DecimalType d = (DecimalType) t;
                return g.getDecimal(i, d.getPrecision(), d.getScale()).toBigDecimal().unscaledValue().toString();
            }
            case CHAR: case STRING: return hex(g.getString(i).toBytes());
            case BINARY: case BYTES: return hex(g.getBytes(i));
            case TIMESTAMP_WITHOUT_TIME_ZONE: {
                TimestampNtz v = g.getTimestampNtz(i, ((TimestampType) t).getPrecision());
                return v.getMillisecond() + "." + v.getNanoOfMillisecond();
            }
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE: {
                TimestampLtz v = g.getTimestampLtz(i, ((LocalZonedTimestampType) t).getPrecision());
                return v.getEpochMillisecond() + "." + v.getNanoOfMillisecond();
            }
            case ARRAY: {
                InternalArray a = g.getArray(i);
                StringBuilder sb = new StringBuilder("[");
                for (int k = 0; k < a.size(); k++) {
                    if (k > 0) sb.append(',');
                    sb.append(fmt(((ArrayType) t).getElementType(), a, k));
                }
                return sb.append(']').toString();
            }
            case MAP: {
                InternalMap m = g.getMap(i);
                MapType mt = (MapType) t;
                StringBuilder sb = new StringBuilder("{");
                for (int k = 0; k < m.size(); k++) {
                    if (k > 0) sb.append(',');
                    sb.append(fmt(mt.getKeyType(), m.keyArray(), k)).append('=')
                            .append(fmt(mt.getValueType(), m.valueArray(), k));
                }
                return sb.append('}').toString();
            }
            case ROW: {
                RowType rt = (RowType) t;
                InternalRow r = g.getRow(i, rt.getFieldCount());
                StringBuilder sb = new StringBuilder("(");
                for (int k = 0; k < rt.getFieldCount(); k++) {
                    if (k > 0) sb.append(',');
                    sb.append(fmt(rt.getTypeAt(k), r, k));
                }
                return sb.append(')').toString();
            }
            default: throw new IllegalArgumentException("type " + t);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("write")) {
            Path dir = Paths.get(args[1]);
            try (RootAllocator alloc = new RootAllocator(Long.MAX_VALUE);
                    ArrowWriterPool pool = new ArrowWriterPool(alloc)) {
                for (String set : new String[] {"all", "small", "empty"}) {
                    byte[] none = null;
                    for (ArrowCompressionInfo c : new ArrowCompressionInfo[] {
                            ArrowCompressionInfo.NO_COMPRESSION,
                            new ArrowCompressionInfo(ArrowCompressionType.LZ4_FRAME, -1),
                            new ArrowCompressionInfo(ArrowCompressionType.ZSTD, 3)}) {
                        byte[] b = write(pool, set, c);
                        String codec = c.getCompressionType().name().toLowerCase();
                        Files.write(dir.resolve("java_" + set + "_" + codec + ".bin"), b);
                        if (none == null) none = b;
                    }
                    Files.write(dir.resolve("java_" + set + "_rows.txt"),
                            read(rowType(set), none).getBytes(StandardCharsets.UTF_8));
                }
            }
        } else {
            RowType rowType = rowType(args[1]);
            for (int i = 2; i < args.length; i++) {
                System.out.print(read(rowType, Files.readAllBytes(Paths.get(args[i]))));
            }
        }
    }
}
