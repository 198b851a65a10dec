//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// javaLookup is a Java single-file program that looks keys up with the
// official Java client (the fluss-client jar the local cluster script
// downloads) and prints "key value" or "key null" per line.
const javaLookup = `
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;

public class JavaLookup {
    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        try (Connection c = ConnectionFactory.createConnection(conf);
             Table t = c.getTable(TablePath.of(args[1], args[2]))) {
            Lookuper l = t.newLookup().createLookuper();
            for (int i = 3; i < args.length; i++) {
                int k = Integer.parseInt(args[i]);
                InternalRow row = l.lookup(GenericRow.of(k)).get().getSingletonRow();
                System.out.println(k + " " + (row == null ? "null" : row.getString(1).toString()));
            }
        }
    }
}
`

func javaClientClasspath(t *testing.T) string {
	t.Helper()
	home := os.Getenv("FLUSS_HOME")
	if home == "" {
		_, file, _, _ := runtime.Caller(0)
		home = filepath.Join(filepath.Dir(file), "..", "..", ".cache", "fluss")
	}
	version := os.Getenv("FLUSS_VERSION")
	if version == "" {
		version = "0.9.1-incubating"
	}
	client := filepath.Join(home, version, "client", "fluss-client-"+version+".jar")
	if _, err := os.Stat(client); err != nil {
		t.Skipf("no Java client jar at %s (run deployments/local/fluss-cluster.sh fetch)", client)
	}
	jars, _ := filepath.Glob(filepath.Join(home, version, "lib", "log4j-*.jar"))
	return strings.Join(append([]string{client}, jars...), string(os.PathListSeparator))
}

// runJava runs source, a Java single-file program named file, with the
// official Java client on the class path and args, and returns its stdout.
// It skips the test when no java or no client jar is found and fails it when
// the program fails or runs past timeout.
func runJava(t *testing.T, file, source string, timeout time.Duration, args ...string) string {
	t.Helper()
	java, err := exec.LookPath(os.Getenv("FLUSS_JAVA"))
	if err != nil {
		if java, err = exec.LookPath("java"); err != nil {
			t.Skip("java not found")
		}
	}
	cp := javaClientClasspath(t)
	src := filepath.Join(t.TempDir(), file)
	require.NoError(t, os.WriteFile(src, []byte(source), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, append([]string{"--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", cp, src}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "java %s %v: %s", file, args, stderr.String())
	return string(out)
}

// TestWriteBucketingMatchesJavaClient writes keys whose compacted bytes end
// in bytes >= 0x80 (where the Rust peer's hash differs from Java's) into a
// 16-bucket table and looks every one up with the official Java client: a
// key the writer put into another bucket than Java computes would not be
// found.
func TestWriteBucketingMatchesJavaClient(t *testing.T) {
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "javabuckets", [][2]string{{"id", "int NOT NULL"}, {"name", "string"}},
		"--primary-key", "id", "--buckets", "16")
	e := wrNewWriter(t, writer.Options{})
	keys := []int64{0, 1, 127, 128, 200, 255, 1000, 4321, 16383, 16384, 65535, 99999, 1 << 20, -1, -200,
		math.MaxInt32, math.MinInt32}
	for k := int64(300); k < 300+40*997; k += 997 {
		keys = append(keys, k)
	}
	var entries []domain.WriteEntry
	for _, k := range keys {
		entries = append(entries, domain.WriteEntry{Op: domain.OpUpsert, Row: []domain.Datum{{I64: k}, {Bytes: []byte("v" + strconv.FormatInt(k, 10))}}})
	}
	wrRequireOK(t, e.write(t, wrCtx(t, time.Minute), &domain.WriteBatch{Table: path, Entries: entries}))

	args := []string{wrBootstrap(t), path.Database, path.Table}
	for _, k := range keys {
		args = append(args, strconv.FormatInt(k, 10))
	}
	out := runJava(t, "JavaLookup.java", javaLookup, 3*time.Minute, args...)
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok {
			got[k] = v
		}
	}
	for _, k := range keys {
		ks := strconv.FormatInt(k, 10)
		assert.Equal(t, "v"+ks, got[ks], fmt.Sprintf("key %d as seen by the Java client", k))
	}
}
