// Readiness probe for the local Fluss cluster (run with Java's single-file launcher).
//
//   java -cp "<fluss-client jar>:<log4j jars>" FlussReady.java \
//        --tablet-servers N --timeout-s 120 [--pids 1,2,3] \
//        --check 127.0.0.1:19123 [--check 127.0.0.1:19124,admin,admin-secret]
//
// For every --check (bootstrap[,user,password]) it opens a client connection and asks the
// cluster for its server nodes (a real metadata request) until at least N tablet servers
// are listed. Exit codes: 0 ready, 1 timeout, 2 bad usage, 3 a watched process died.
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.cluster.ServerNode;
import org.apache.fluss.cluster.ServerType;
import org.apache.fluss.config.Configuration;

public class FlussReady {

    public static void main(String[] args) throws Exception {
        int expected = 1;
        long timeoutS = 120;
        List<String> checks = new ArrayList<>();
        List<Long> pids = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            if (v == null) {
                usage("missing value for " + a);
            }
            switch (a) {
                case "--tablet-servers": expected = Integer.parseInt(v); break;
                case "--timeout-s": timeoutS = Long.parseLong(v); break;
                case "--check": checks.add(v); break;
                case "--pids":
                    for (String p : v.split(",")) {
                        if (!p.isBlank()) {
                            pids.add(Long.parseLong(p.trim()));
                        }
                    }
                    break;
                default: usage("unknown argument " + a);
            }
            i++;
        }
        if (checks.isEmpty()) {
            usage("at least one --check is required");
        }

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
        String lastError = "";
        for (String check : checks) {
            while (true) {
                for (long pid : pids) {
                    if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) == false) {
                        System.err.println("process " + pid + " is not running any more");
                        System.exit(3);
                    }
                }
                try {
                    int found = countTabletServers(check);
                    if (found >= expected) {
                        System.out.println("ready: " + redact(check) + " lists " + found + " tablet server(s)");
                        break;
                    }
                    lastError = found + " of " + expected + " tablet server(s) registered";
                } catch (Exception e) {
                    Throwable root = e;
                    while (root.getCause() != null) {
                        root = root.getCause();
                    }
                    lastError = root.getClass().getSimpleName() + ": " + root.getMessage();
                }
                if (System.nanoTime() > deadline) {
                    System.err.println("timeout after " + timeoutS + "s on " + redact(check) + ": " + lastError);
                    System.exit(1);
                }
                Thread.sleep(500);
            }
        }
        System.exit(0);
    }

    private static int countTabletServers(String check) throws Exception {
        String[] parts = check.split(",", 3);
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", parts[0]);
        conf.setString("client.request-timeout", "5s");
        if (parts.length == 3) {
            conf.setString("client.security.protocol", "SASL");
            conf.setString("client.security.sasl.mechanism", "PLAIN");
            conf.setString("client.security.sasl.username", parts[1]);
            conf.setString("client.security.sasl.password", parts[2]);
        }
        try (Connection conn = ConnectionFactory.createConnection(conf)) {
            List<ServerNode> nodes =
                    conn.getAdmin().getServerNodes().get(Duration.ofSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
            int n = 0;
            for (ServerNode node : nodes) {
                if (node.serverType() == ServerType.TABLET_SERVER) {
                    n++;
                }
            }
            return n;
        }
    }

    private static String redact(String check) {
        String[] parts = check.split(",", 3);
        return parts.length == 3 ? parts[0] + " (SASL user " + parts[1] + ")" : parts[0];
    }

    private static void usage(String msg) {
        System.err.println("FlussReady: " + msg);
        System.err.println("usage: FlussReady --check host:port[,user,password] [--check ...]"
                + " [--tablet-servers N] [--timeout-s S] [--pids p1,p2]");
        System.exit(2);
    }
}
