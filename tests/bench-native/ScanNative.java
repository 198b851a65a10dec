// ScanNative: the Java side of the scan benchmark (tests/bench-native/scan.sh).
// It reads a whole log table with the official Java client's LogScanner
// (fluss-client, default options: every bucket subscribed from the beginning,
// poll until each bucket reached the end offset it had at start) and prints
// one line of JSON: rows, seconds, this JVM's CPU (utime+stime of
// /proc/self/stat, clock ticks) over the scan and its peak RSS (VmHWM, KiB).
// Every row exactly once: it fails unless each bucket's offsets run 0, 1, 2,
// ... without a gap or a repeat (the gateway side checks the same).
//
//   java -cp <fluss-client.jar>:<classes> ScanNative <bootstrap> <db> <table>
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.OffsetSpec;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.scanner.log.ScanRecords;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TablePath;

public class ScanNative {
    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        TablePath path = TablePath.of(args[1], args[2]);
        try (Connection c = ConnectionFactory.createConnection(conf);
             Admin admin = c.getAdmin();
             Table t = c.getTable(path)) {
            int n = t.getTableInfo().getNumBuckets();
            List<Integer> buckets = new ArrayList<>();
            for (int b = 0; b < n; b++) buckets.add(b);
            Map<Integer, Long> ends = admin.listOffsets(path, buckets, new OffsetSpec.LatestSpec()).all().get();
            long cpu0 = cpu();
            long t0 = System.nanoTime();
            long rows = 0, sum = 0;
            Map<Integer, Long> left = new HashMap<>();
            Map<Integer, Long> next = new HashMap<>();
            try (LogScanner s = t.newScan().createLogScanner()) {
                for (int b = 0; b < n; b++) {
                    if (ends.get(b) > 0) {
                        s.subscribeFromBeginning(b);
                        left.put(b, ends.get(b));
                    }
                }
                while (!left.isEmpty()) {
                    ScanRecords recs = s.poll(Duration.ofMillis(500));
                    for (TableBucket tb : recs.buckets()) {
                        for (ScanRecord r : recs.records(tb)) {
                            long due = next.getOrDefault(tb.getBucket(), 0L);
                            if (r.logOffset() != due) {
                                throw new IllegalStateException("bucket " + tb.getBucket() + ": offset "
                                        + r.logOffset() + " where " + due + " was due");
                            }
                            next.put(tb.getBucket(), due + 1);
                            rows++;
                            sum += r.getRow().getFieldCount(); // touch every row
                            if (r.logOffset() + 1 >= ends.get(tb.getBucket())) left.remove(tb.getBucket());
                        }
                    }
                }
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            System.out.printf("{\"rows\": %d, \"seconds\": %.3f, \"cpu_ticks\": %d, \"fields\": %d, \"vmhwm_kib\": %d}%n",
                    rows, secs, cpu() - cpu0, sum, vmhwm());
        }
    }

    static long vmhwm() throws Exception {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("VmHWM:")) return Long.parseLong(l.replaceAll("[^0-9]", ""));
        }
        return -1;
    }

    static long cpu() throws Exception {
        String[] f = Files.readString(Path.of("/proc/self/stat")).split("\\) ")[1].split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
}
