# Sourced (not run) by tests/bench-native/run.sh, scan.sh, ab.sh and
# knobs.sh, from the repository root with ROOT set. It sets GO, JAVA and V
# (FLUSS_VERSION) and defines what they do the same way:
#   bench_build_writes       fetches the Fluss jars, compiles BenchNative.java
#                            (bench_java_build) and builds $OUT/fluss-gateway
#                            and $OUT/load (tools/load)
#   bench_cluster_start LABEL STATE PORT SASL_PORT ZK_PORT
#                            starts a local cluster of V with one tablet server
#                            (replication 1), its state in .cache/STATE, on
#                            those ports (gw_cluster_start of
#                            tests/lib/gateway-run.sh, sourced first, which
#                            stops it on exit); sets BOOT to its address and
#                            FPIDS to its processes' pids, comma-separated
#   bench_java_build SRC...  compiles the Java sources against the Fluss client
#                            jar of V under FLUSS_HOME (.cache/fluss) into
#                            $OUT/classes and sets CP to run them
#   jrun CLASS ARGS...       runs one of those classes, SLF4J and log4j status
#                            lines dropped from stderr
#   bench_gateway_start [VAR=value...]
#                            starts $OUT/fluss-gateway (configs/local.yaml, no
#                            metrics) on 127.0.0.1:$GW_PORT against $BOOT with
#                            the extra environment, logging to $OUT/gateway.log;
#                            sets gw_pid (tests/lib/gateway-run.sh stops it) and
#                            waits for /ready
#   bench_verify MODE...     checks that every row landed, for each mode the
#                            runs listed in $OUT/verify-MODE.txt (lines
#                            table=total rows:timed rows; BenchNative verify:
#                            end offsets, for pk sampled keys too); a mode
#                            without runs is skipped
#   load1                    prints the 1-minute load average
#   bench_quiet SECONDS MAX  waits up to SECONDS for the 1-minute load average
#                            to fall to MAX
#   bench_settle SECONDS BUSY
#                            waits up to SECONDS for one second in which the
#                            machine's CPUs (/proc/stat, all processes and the
#                            kernel's writeback) were busy less than BUSY
#                            percent, and prints the busy percent of the last
#                            second it measured: the work a run leaves behind
#                            (the tablet server flushing and collecting the
#                            rows of a 2,000,000-row Arrow run) must not fall
#                            into the next run's measurement
GO=${GO:-go}
JAVA=${FLUSS_JAVA:-java}
V=${FLUSS_VERSION:-0.9.1-incubating}

bench_java_build() {
  local home=${FLUSS_HOME:-$ROOT/.cache/fluss} j
  CP="$home/$V/client/fluss-client-$V.jar"
  for j in "$home/$V"/lib/log4j-*.jar; do CP="$CP:$j"; done
  mkdir -p "$OUT/classes"
  javac -nowarn -cp "$CP" -d "$OUT/classes" "$@"
  CP="$CP:$OUT/classes"
}

bench_build_writes() {
  bash deployments/local/fluss-cluster.sh fetch >&2
  bench_java_build tests/bench-native/BenchNative.java
  $GO build -o "$OUT/fluss-gateway" ./bootstrap/cmd/gateway
  $GO build -o "$OUT/load" ./tools/load
}

bench_cluster_start() {
  export FLUSS_VERSION=$V FLUSS_PORT=$3 FLUSS_SASL_PORT=$4 FLUSS_ZK_PORT=$5
  export FLUSS_STATE_DIR="$ROOT/.cache/$2" FLUSS_TABLET_SERVERS=1 FLUSS_REPLICATION_FACTOR=1
  echo "==> $1 on port $FLUSS_PORT" >&2
  gw_cluster_start
  BOOT=$GW_RUN_BOOTSTRAP
  FPIDS=$(cat "$FLUSS_STATE_DIR"/run/*.pid | paste -sd,)
}

jrun() { "$JAVA" --add-opens=java.base/java.nio=ALL-UNNAMED -cp "$CP" "$@" 2> >(grep -v -e '^SLF4J' -e 'StatusLogger' >&2); }

bench_gateway_start() {
  env "$@" \
    FLUSS_GATEWAY__REST__LISTEN="127.0.0.1:$GW_PORT" \
    FLUSS_GATEWAY__METRICS__ENABLED=false \
    FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS="$BOOT" \
    "$OUT/fluss-gateway" --config configs/local.yaml > "$OUT/gateway.log" 2>&1 &
  gw_pid=$!
  gw_await_ready "$GW_PORT" "$OUT/gateway.log" 150
}

bench_verify() {
  local mode specs
  echo "==> checking that every row landed" >&2
  for mode in "$@"; do
    mapfile -t specs < "$OUT/verify-$mode.txt"
    (( ${#specs[@]} )) || continue
    jrun BenchNative verify "$BOOT" "$DB" "$mode" "${specs[@]}" >&2
  done
}

load1() { cut -d' ' -f1 /proc/loadavg; }

bench_quiet() {
  local waited=0
  while (( waited < $1 )) && python3 -c "import sys; sys.exit(0 if float('$(load1)') > $2 else 1)"; do
    sleep 5; waited=$((waited + 5))
  done
}

bench_settle() {
  python3 - "$1" "$2" <<'EOF'
import sys, time
def snap():
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(v), v[3] + v[4]  # all, idle + iowait
limit, busy_max = time.monotonic() + float(sys.argv[1]), float(sys.argv[2])
while True:
    t0, i0 = snap(); time.sleep(1); t1, i1 = snap()
    busy = 100 * (1 - (i1 - i0) / max(1, t1 - t0))
    if busy < busy_max or time.monotonic() >= limit:
        print(f"{busy:.1f}")
        break
EOF
}
