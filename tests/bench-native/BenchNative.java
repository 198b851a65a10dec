// BenchNative: the Java side of `make bench-native` (tests/bench-native/run.sh).
// It writes the benchmark rows with the official Fluss Java client
// (fluss-client 0.9.1-incubating, default client options), creates the fresh
// tables of a run and checks that every row landed.
//
//   java -cp <fluss-client.jar>:<classes> BenchNative create <bootstrap> <db> <pk|log> <table>...
//   java ... BenchNative write  <bootstrap> <db> <table> <pk|log> <warmup rows> <rows> [fluss pid,...]
//   java ... BenchNative verify <bootstrap> <db> <pk|log> <table>=<total rows>:<timed rows>...
//   java ... BenchNative lookup <bootstrap> <db> <table> <key|prefix> <table rows> <keys> <window> <warm-up keys> [fluss pid,...]
//
// Rows: id i gives the row tools/load's -schema bench10 sends as JSON (the
// generators must agree; verify looks a sample of ids up and compares every
// column): k BIGINT = i, name STRING = "user-<i>", amount DECIMAL(18,2) with
// unscaled value (i*37) mod 10^9, qty INT = i mod 100000, price DOUBLE =
// i*0.25, flag BOOLEAN = i even, day DATE = 19000 + i mod 1000,
// ts TIMESTAMP_LTZ(3) = 1700000000000 + i ms, note STRING =
// "payload-<i>-0123456789abcdef0123456789abcdef", raw BYTES = i big-endian
// twice (16 bytes). 4 buckets; pk: primary key k; log: ARROW, ZSTD.
//
// write prints one line of JSON: rows, seconds, this JVM's CPU (utime+stime
// of /proc/self/stat) and the Fluss processes' CPU, both in clock ticks, over
// the timed part only (the warm-up rows, ids -warmup..-1, are written and
// flushed before it), and this JVM's peak RSS (VmHWM).
//
// A pfx table (create ... pfx) has the same columns with primary key (k, name)
// and bucket key k, for prefix lookups by k; write ... pfx upserts its rows.
//
// lookup looks keys up with the Java client's Lookuper (key: by primary key;
// prefix: lookupBy("k") on a pfx table), at most <window> lookups
// outstanding (the client batches them itself), and checks every answer: key
// j is id (j * 7919) mod <table rows> (present, compared column by column
// with the generator) except every fourth, a missing id (no row). It prints
// keys, seconds, CPU ticks, VmHWM and the p50/p99 of one lookup's latency.
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.OffsetSpec;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.LogFormat;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.Decimal;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.row.TimestampLtz;
import org.apache.fluss.types.DataTypes;

public class BenchNative {
    static final int BUCKETS = 4;

    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[1]);
        try (Connection c = ConnectionFactory.createConnection(conf)) {
            switch (args[0]) {
                case "create": create(c, args); break;
                case "write": write(c, args); break;
                case "verify": verify(c, args); break;
                case "lookup": lookup(c, args); break;
                default: throw new IllegalArgumentException("mode " + args[0]);
            }
        }
    }

    static void create(Connection c, String[] a) throws Exception {
        String db = a[2];
        boolean pk = !a[3].equals("log");
        try (Admin admin = c.getAdmin()) {
            admin.createDatabase(db, DatabaseDescriptor.EMPTY, true).get();
            Schema.Builder s = Schema.newBuilder()
                .column("k", DataTypes.BIGINT().copy(false))
                .column("name", DataTypes.STRING())
                .column("amount", DataTypes.DECIMAL(18, 2))
                .column("qty", DataTypes.INT())
                .column("price", DataTypes.DOUBLE())
                .column("flag", DataTypes.BOOLEAN())
                .column("day", DataTypes.DATE())
                .column("ts", DataTypes.TIMESTAMP_LTZ(3))
                .column("note", DataTypes.STRING())
                .column("raw", DataTypes.BYTES());
            boolean pfx = a[3].equals("pfx");
            if (pfx) s.primaryKey("k", "name");
            else if (pk) s.primaryKey("k");
            TableDescriptor.Builder d = pfx
                ? TableDescriptor.builder().schema(s.build()).distributedBy(BUCKETS, "k")
                : TableDescriptor.builder().schema(s.build()).distributedBy(BUCKETS);
            if (!pk) {
                d.logFormat(LogFormat.ARROW).property("table.log.arrow.compression.type", "ZSTD");
            }
            TableDescriptor desc = d.build();
            for (int i = 4; i < a.length; i++) {
                admin.createTable(TablePath.of(db, a[i]), desc, false).get();
            }
        }
    }

    static GenericRow row(long i) {
        byte[] raw = new byte[16];
        for (int b = 0; b < 8; b++) {
            raw[b] = (byte) (i >>> (56 - 8 * b));
            raw[8 + b] = raw[b];
        }
        return GenericRow.of(
            i,
            BinaryString.fromString("user-" + i),
            Decimal.fromUnscaledLong(Math.floorMod(i * 37, 1_000_000_000L), 18, 2),
            (int) Math.floorMod(i, 100_000L),
            i * 0.25,
            i % 2 == 0,
            (int) (19000 + Math.floorMod(i, 1000L)),
            TimestampLtz.fromEpochMillis(1_700_000_000_000L + i),
            BinaryString.fromString("payload-" + i + "-0123456789abcdef0123456789abcdef"),
            raw);
    }

    static long selfTicks() throws Exception { return ticks("self"); }

    // utime + stime (fields 14 and 15 of /proc/<pid>/stat), clock ticks.
    static long ticks(String pid) throws Exception {
        String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    // VmHWM of this JVM in KiB (-1 when unreadable).
    static long hwmKB() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith("VmHWM:")) return Long.parseLong(l.substring(6).trim().split("\\s+")[0]);
            }
        } catch (Exception e) {
            // fall through
        }
        return -1;
    }

    // lookupID is the id key j looks up (see the header): a row of the
    // table, or for every fourth key an id no row has.
    static long lookupID(long j, long tableRows) {
        if (j % 4 == 3) return 2_000_000_000L + j;
        return Math.floorMod(j * 7919, tableRows);
    }

    static void lookup(Connection c, String[] a) throws Exception {
        String db = a[2], table = a[3];
        boolean prefix = a[4].equals("prefix");
        long tableRows = Long.parseLong(a[5]), keys = Long.parseLong(a[6]);
        int window = Integer.parseInt(a[7]);
        long warm = Long.parseLong(a[8]);
        String[] pids = a.length > 9 ? a[9].split(",") : new String[0];
        try (Table t = c.getTable(TablePath.of(db, table))) {
            Lookuper l = prefix ? t.newLookup().lookupBy("k").createLookuper() : t.newLookup().createLookuper();
            runLookups(l, prefix, tableRows, warm, 1_000_000_000L, window, null);
            long cpu0 = selfTicks(), fl0 = flussTicks(pids), t0 = System.nanoTime();
            long[] lat = new long[(int) keys];
            long bad = runLookups(l, prefix, tableRows, keys, 0, window, lat);
            long t1 = System.nanoTime(), cpu1 = selfTicks(), fl1 = flussTicks(pids);
            java.util.Arrays.sort(lat);
            System.out.printf("{\"keys\":%d,\"seconds\":%.6f,\"client_ticks\":%d,\"fluss_ticks\":%d,\"client_hwm_kb\":%d,"
                    + "\"bad\":%d,\"p50_ms\":%.3f,\"p99_ms\":%.3f}%n",
                keys, (t1 - t0) / 1e9, cpu1 - cpu0, fl1 - fl0, hwmKB(), bad,
                lat[(int) (keys / 2)] / 1e6, lat[(int) Math.min(keys - 1, keys * 99 / 100)] / 1e6);
            if (bad > 0) System.exit(1);
        }
    }

    // runLookups looks up keys j = first..first+n-1 with at most window
    // outstanding and returns how many answers were wrong; lat (if not null)
    // gets each lookup's latency in ns.
    static long runLookups(Lookuper l, boolean prefix, long tableRows, long n, long first, int window, long[] lat)
            throws Exception {
        java.util.concurrent.Semaphore sem = new java.util.concurrent.Semaphore(window);
        java.util.concurrent.atomic.AtomicLong bad = new java.util.concurrent.atomic.AtomicLong();
        for (long j = 0; j < n; j++) {
            sem.acquire();
            long id = lookupID(first + j, tableRows), start = System.nanoTime();
            int slot = (int) j;
            l.lookup(GenericRow.of(id)).whenComplete((r, err) -> {
                if (lat != null) lat[slot] = System.nanoTime() - start;
                boolean ok;
                if (err != null) {
                    ok = false;
                } else if (prefix) {
                    List<InternalRow> rows = r.getRowList();
                    ok = id >= tableRows ? rows.isEmpty() : rows.size() == 1 && same(rows.get(0), row(id));
                } else {
                    InternalRow got = r.getSingletonRow();
                    ok = id >= tableRows ? got == null : got != null && same(got, row(id));
                }
                if (!ok && bad.incrementAndGet() <= 3) {
                    System.err.println("lookup of id " + id + " answered wrongly: " + (err != null ? err : r));
                }
                sem.release();
            });
        }
        sem.acquire(window);
        return bad.get();
    }

    static long flussTicks(String[] pids) throws Exception {
        long t = 0;
        for (String p : pids) if (!p.isEmpty()) t += ticks(p);
        return t;
    }

    static void write(Connection c, String[] a) throws Exception {
        String db = a[2], table = a[3];
        boolean pk = !a[4].equals("log");
        long warm = Long.parseLong(a[5]), rows = Long.parseLong(a[6]);
        String[] pids = a.length > 7 ? a[7].split(",") : new String[0];
        try (Table t = c.getTable(TablePath.of(db, table))) {
            UpsertWriter up = pk ? t.newUpsert().createWriter() : null;
            AppendWriter ap = pk ? null : t.newAppend().createWriter();
            for (long i = -warm; i < 0; i++) {
                if (pk) up.upsert(row(i)); else ap.append(row(i));
            }
            if (pk) up.flush(); else ap.flush();
            long cpu0 = selfTicks(), fl0 = flussTicks(pids), t0 = System.nanoTime();
            for (long i = 0; i < rows; i++) {
                if (pk) up.upsert(row(i)); else ap.append(row(i));
            }
            if (pk) up.flush(); else ap.flush();
            long t1 = System.nanoTime(), cpu1 = selfTicks(), fl1 = flussTicks(pids);
            System.out.printf("{\"rows\":%d,\"seconds\":%.6f,\"client_ticks\":%d,\"fluss_ticks\":%d,\"client_hwm_kb\":%d}%n",
                rows, (t1 - t0) / 1e9, cpu1 - cpu0, fl1 - fl0, hwmKB());
        }
    }

    // verify: for every table=total:timed, the end offsets of its buckets (log: the
    // log; pk: the changelog, one +I per new key, all keys being distinct)
    // must add up to total; a pk table's sampled keys must read back equal to
    // the generated rows.
    static void verify(Connection c, String[] a) throws Exception {
        String db = a[2];
        boolean pk = a[3].equals("pk");
        List<Integer> buckets = new ArrayList<>();
        for (int b = 0; b < BUCKETS; b++) buckets.add(b);
        boolean ok = true;
        try (Admin admin = c.getAdmin()) {
            for (int i = 4; i < a.length; i++) {
                String[] kv = a[i].split("=");
                TablePath path = TablePath.of(db, kv[0]);
                String[] counts = kv[1].split(":");
                long want = Long.parseLong(counts[0]), timed = Long.parseLong(counts[1]);
                Map<Integer, Long> ends = admin.listOffsets(path, buckets, new OffsetSpec.LatestSpec()).all().get();
                long got = 0;
                for (long v : ends.values()) got += v;
                String sample = "";
                if (pk) sample = " lookups " + lookupSample(c, path, timed);
                boolean good = got == want && !sample.contains("MISMATCH");
                ok &= good;
                System.out.printf("verify %s: end offsets %s sum %d, want %d%s: %s%n", kv[0], ends, got, want, sample,
                    good ? "ok" : "FAILED");
            }
        }
        if (!ok) System.exit(1);
    }

    // lookupSample looks up about 200 ids spread over the timed ids
    // 0..rows-1 and compares every column with the generator.
    static String lookupSample(Connection c, TablePath path, long rows) throws Exception {
        try (Table t = c.getTable(path)) {
            Lookuper l = t.newLookup().createLookuper();
            List<Long> ids = new ArrayList<>();
            List<java.util.concurrent.CompletableFuture<org.apache.fluss.client.lookup.LookupResult>> fs = new ArrayList<>();
            long step = Math.max(1, rows / 200);
            for (long i = 0; i < rows; i += step) {
                ids.add(i);
                fs.add(l.lookup(GenericRow.of(i)));
            }
            int n = 0, bad = 0;
            for (int k = 0; k < ids.size(); k++) {
                InternalRow got = fs.get(k).get().getSingletonRow();
                n++;
                if (got == null || !same(got, row(ids.get(k)))) bad++;
            }
            return n + " sampled, " + (bad == 0 ? "all equal" : bad + " MISMATCH");
        }
    }

    static boolean same(InternalRow g, GenericRow w) {
        return g.getLong(0) == w.getLong(0)
            && g.getString(1).equals(w.getString(1))
            && g.getDecimal(2, 18, 2).equals(w.getDecimal(2, 18, 2))
            && g.getInt(3) == w.getInt(3)
            && g.getDouble(4) == w.getDouble(4)
            && g.getBoolean(5) == w.getBoolean(5)
            && g.getInt(6) == w.getInt(6)
            && g.getTimestampLtz(7, 3).equals(w.getTimestampLtz(7, 3))
            && g.getString(8).equals(w.getString(8))
            && java.util.Arrays.equals(g.getBytes(9), w.getBytes(9));
    }
}
