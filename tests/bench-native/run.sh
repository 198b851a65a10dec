#!/usr/bin/env bash
# Side-by-side write benchmark (`make bench-native`): the same rows written
# through the gateway (HTTP/JSON, driven by tools/load -mode bench) and
# through the official Java client (BenchNative.java, fluss-client from Maven
# Central, default options) into one local Fluss cluster, in interleaved
# rounds, a fresh table per run, each run's warm-up rows not measured.
#
#   bash tests/bench-native/run.sh
#
# Table: k BIGINT (primary key in pk mode), name STRING, amount DECIMAL(18,2),
# qty INT, price DOUBLE, flag BOOLEAN, day DATE, ts TIMESTAMP_LTZ(3), note
# STRING, raw BYTES (16-byte values); 4 buckets. Modes: pk (upserts of new
# keys) and log (appends, ARROW with ZSTD).
#
# Printed per mode: rows/s of each side (median of the rounds) and their
# ratio, p50/p99 of the gateway's requests, CPU per row (utime+stime from
# /proc/<pid>/stat over the measured part) of the gateway, of the Java client
# JVM and of the Fluss processes (ZooKeeper, coordinator, tablet servers)
# during each side's runs, the gateway's peak RSS (VmHWM), and the latency the
# gateway adds (request time minus the writer's delivery time, Server-Timing)
# at half of the gateway's rows/s. Every run is checked: the end offsets of
# every bucket (log; changelog for pk, one +I per new key) must add up to the
# rows written, and for pk a sample of keys is looked up with the Java client
# and compared column by column.
#
# Environment:
#   BENCH_ROUNDS (3)          measured rounds per mode and side, after a warm-up round
#                             (BENCH_WARMUP_ROUND=0: none) whose results are not counted
#   BENCH_ROWS (200000)       measured rows per run; BENCH_WARMUP_ROWS (50000) before them
#   BENCH_ENTRIES (500)       entries per gateway request; BENCH_CONCURRENCY (16) requests in flight
#   BENCH_MODES ("pk log")
#   BENCH_SWEEP (0)           1: also the gateway at entries 100/500/2000 × concurrency 4/8/16/32
#                             (BENCH_SWEEP_ENTRIES, BENCH_SWEEP_CONCURRENCY; BENCH_SWEEP_ROWS rows per point)
#   BENCH_HALF (1)            0: skip the half-load latency run
#   BENCH_PPROF (0)           1: gateway pprof on 127.0.0.1:BENCH_PPROF_PORT (6067); CPU and allocation
#                             profiles (BENCH_PPROF_SECONDS, 6) of one extra run per mode into .cache/bench-native/
#   BENCH_BOOTSTRAP           use this running cluster (BENCH_FLUSS_PIDS: its pids, comma-separated)
#   BENCH_PORT/BENCH_SASL_PORT/BENCH_ZK_PORT (48123/48124/48181) ports of the cluster it starts
#   BENCH_PAUSE (0)           seconds of rest before every run (a machine shared with other work)
#   BENCH_GATEWAY_PORT (28088), plus any FLUSS_GATEWAY__* override for the gateway
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GO=${GO:-go}
JAVA=${FLUSS_JAVA:-java}
V=${FLUSS_VERSION:-0.9.1-incubating}
OUT="$ROOT/.cache/bench-native"
mkdir -p "$OUT"
ROUNDS=${BENCH_ROUNDS:-3}
ROWS=${BENCH_ROWS:-200000}
WARM=${BENCH_WARMUP_ROWS:-50000}
ENTRIES=${BENCH_ENTRIES:-500}
CONC=${BENCH_CONCURRENCY:-16}
MODES=${BENCH_MODES:-pk log}
GW_PORT=${BENCH_GATEWAY_PORT:-28088}
PPROF_PORT=${BENCH_PPROF_PORT:-6067}
RESULTS="$OUT/results.jsonl"
: > "$RESULTS"

started_cluster=0
gw_pid=""
cleanup() {
  local rc=$?
  if [[ -n $gw_pid ]] && kill -0 "$gw_pid" 2>/dev/null; then
    kill -TERM "$gw_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$gw_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$gw_pid" 2>/dev/null || true
  fi
  if [[ $started_cluster == 1 ]]; then
    echo "==> stopping the benchmark cluster" >&2
    FLUSS_KEEP_STATE=0 bash deployments/local/fluss-cluster.sh stop >&2 || true
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- build
bash deployments/local/fluss-cluster.sh fetch >&2
HOME_DIR=${FLUSS_HOME:-$ROOT/.cache/fluss}
CP="$HOME_DIR/$V/client/fluss-client-$V.jar"
for j in "$HOME_DIR/$V"/lib/log4j-*.jar; do CP="$CP:$j"; done
mkdir -p "$OUT/classes"
javac -nowarn -cp "$CP" -d "$OUT/classes" tests/bench-native/BenchNative.java
CP="$CP:$OUT/classes"
jrun() { "$JAVA" --add-opens=java.base/java.nio=ALL-UNNAMED -cp "$CP" BenchNative "$@" 2> >(grep -v -e '^SLF4J' -e 'StatusLogger' >&2); }
$GO build -o "$OUT/fluss-gateway" ./bootstrap/cmd/gateway
$GO build -o "$OUT/load" ./tools/load

# ---------------------------------------------------------------- cluster
if [[ -z ${BENCH_BOOTSTRAP:-} ]]; then
  export FLUSS_PORT=${BENCH_PORT:-48123} FLUSS_SASL_PORT=${BENCH_SASL_PORT:-48124} FLUSS_ZK_PORT=${BENCH_ZK_PORT:-48181}
  export FLUSS_STATE_DIR="$ROOT/.cache/fluss-bench"
  export FLUSS_TABLET_SERVERS=1 FLUSS_REPLICATION_FACTOR=1
  echo "==> benchmark cluster on port $FLUSS_PORT" >&2
  started_cluster=1
  out=$(bash deployments/local/fluss-cluster.sh start)
  BENCH_BOOTSTRAP=$(echo "$out" | sed -n 's/^FLUSS_BOOTSTRAP=//p')
  BENCH_FLUSS_PIDS=$(cat "$FLUSS_STATE_DIR"/run/*.pid | paste -sd,)
fi
BOOT=$BENCH_BOOTSTRAP
FPIDS=${BENCH_FLUSS_PIDS:-}

# ---------------------------------------------------------------- gateway
pprof_env=()
[[ ${BENCH_PPROF:-0} == 1 ]] && pprof_env=(FLUSS_GATEWAY_PPROF_LISTEN=127.0.0.1:$PPROF_PORT)
env "${pprof_env[@]}" \
FLUSS_GATEWAY__REST__LISTEN=127.0.0.1:$GW_PORT \
FLUSS_GATEWAY__METRICS__ENABLED=false \
FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS=$BOOT \
  "$OUT/fluss-gateway" --config configs/local.yaml > "$OUT/gateway.log" 2>&1 &
gw_pid=$!
for i in $(seq 1 150); do
  curl -fsS "http://127.0.0.1:$GW_PORT/ready" >/dev/null 2>&1 && break
  kill -0 "$gw_pid" 2>/dev/null || { tail -30 "$OUT/gateway.log" >&2; echo "gateway died" >&2; exit 1; }
  [[ $i == 150 ]] && { tail -30 "$OUT/gateway.log" >&2; echo "gateway not ready" >&2; exit 1; }
  sleep 0.2
done

# ---------------------------------------------------------------- runs
DB="bench_$(date +%s)"
# Fresh tables for every run, created up front (one JVM per mode): gw_<mode>_<n>, java_<mode>_<n>.
sweep_points=0
if [[ ${BENCH_SWEEP:-0} == 1 ]]; then
  sweep_points=$(( $(wc -w <<<"${BENCH_SWEEP_ENTRIES:-100 500 2000}") * $(wc -w <<<"${BENCH_SWEEP_CONCURRENCY:-4 8 16 32}") ))
fi
WARMUP_ROUND=${BENCH_WARMUP_ROUND:-1}
gw_tables=$(( WARMUP_ROUND + ROUNDS + ${BENCH_HALF:-1} + sweep_points + ${BENCH_PPROF:-0} ))
for mode in $MODES; do
  : > "$OUT/verify-$mode.txt"
  names=()
  for i in $(seq 1 "$gw_tables"); do names+=("gw_${mode}_$i"); done
  for i in $(seq 1 $((WARMUP_ROUND + ROUNDS))); do names+=("java_${mode}_$i"); done
  echo "==> creating ${#names[@]} $mode tables in $DB" >&2
  jrun create "$BOOT" "$DB" "$mode" "${names[@]}" >&2
done
declare -A NEXT_GW NEXT_JAVA
PPROF_ARGS=()
gw_run() { # mode kind entries conc rows [rate]: one gateway run, its JSON result appended to $RESULTS
  local mode=$1 kind=$2 e=$3 c=$4 rows=$5 rate=${6:-0} op=upsert t r
  sleep "${BENCH_PAUSE:-0}"
  [[ $mode == log ]] && op=append
  NEXT_GW[$mode]=$(( ${NEXT_GW[$mode]:-0} + 1 )); t=gw_${mode}_${NEXT_GW[$mode]}
  [[ $kind == pprof ]] || echo "$t=$((WARM + rows)):$rows" >> "$OUT/verify-$mode.txt"
  r=$("$OUT/load" -mode bench "${PPROF_ARGS[@]}" -schema bench10 -url "http://127.0.0.1:$GW_PORT" -db "$DB" -table "$t" -op "$op" \
      -rows "$e" -concurrency "$c" -rate "$rate" -warmup-rows "$WARM" -total-rows "$rows" -timeout 30s \
      -pid "$gw_pid" -fluss-pids "$FPIDS")
  echo "{\"side\":\"gateway\",\"kind\":\"$kind\",\"mode\":\"$mode\",\"result\":$r}" | tee -a "$RESULTS" >&2
}
java_run() { # mode [kind]: one Java client run
  local mode=$1 kind=${2:-main} t r
  sleep "${BENCH_PAUSE:-0}"
  NEXT_JAVA[$mode]=$(( ${NEXT_JAVA[$mode]:-0} + 1 )); t=java_${mode}_${NEXT_JAVA[$mode]}
  echo "$t=$((WARM + ROWS)):$ROWS" >> "$OUT/verify-$mode.txt"
  r=$(jrun write "$BOOT" "$DB" "$t" "$mode" "$WARM" "$ROWS" "$FPIDS")
  echo "{\"side\":\"java\",\"kind\":\"$kind\",\"mode\":\"$mode\",\"result\":$r}" | tee -a "$RESULTS" >&2
}

echo "==> $ROUNDS interleaved rounds per mode ($MODES): $ROWS rows per run after $WARM warm-up rows; gateway $ENTRIES entries × $CONC concurrent" >&2
if [[ $WARMUP_ROUND == 1 ]]; then
  echo "==> warm-up round (not counted)" >&2
  for mode in $MODES; do gw_run "$mode" warmup "$ENTRIES" "$CONC" "$ROWS"; java_run "$mode" warmup; done
fi
for r in $(seq 1 "$ROUNDS"); do
  for mode in $MODES; do
    if (( r % 2 )); then gw_run "$mode" main "$ENTRIES" "$CONC" "$ROWS"; java_run "$mode"
    else java_run "$mode"; gw_run "$mode" main "$ENTRIES" "$CONC" "$ROWS"; fi
  done
done

if [[ ${BENCH_HALF:-1} == 1 ]]; then
  for mode in $MODES; do
    rate=$(python3 - "$RESULTS" "$mode" "$ENTRIES" <<'EOF'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
v = [x["result"]["rows_per_s"] for x in rs if x["side"] == "gateway" and x["kind"] == "main" and x["mode"] == sys.argv[2]]
print(f"{statistics.median(v) / 2 / int(sys.argv[3]):.2f}")
EOF
)
    echo "==> $mode at half load: $rate requests/s" >&2
    gw_run "$mode" half "$ENTRIES" "$CONC" "$ROWS" "$rate"
  done
fi

if [[ ${BENCH_SWEEP:-0} == 1 ]]; then
  for mode in $MODES; do
    for e in ${BENCH_SWEEP_ENTRIES:-100 500 2000}; do
      for c in ${BENCH_SWEEP_CONCURRENCY:-4 8 16 32}; do
        gw_run "$mode" "sweep:$e:$c" "$e" "$c" "${BENCH_SWEEP_ROWS:-$ROWS}"
      done
    done
  done
fi

if [[ ${BENCH_PPROF:-0} == 1 ]]; then
  # Profiles of the measured part of one more run per mode (its bodies sent
  # BENCH_PPROF_REPEAT_<MODE> times, so it lasts the profile; not verified).
  for mode in $MODES; do
    repeat=${BENCH_PPROF_REPEAT_PK:-3}; [[ $mode == log ]] && repeat=${BENCH_PPROF_REPEAT_LOG:-10}
    PPROF_ARGS=(-repeat "$repeat" -pprof "http://127.0.0.1:$PPROF_PORT" -pprof-out "$OUT/$mode-" -pprof-seconds "${BENCH_PPROF_SECONDS:-6}s")
    gw_run "$mode" pprof "$ENTRIES" "$CONC" "$ROWS"
    PPROF_ARGS=()
    echo "==> profiles: $OUT/$mode-profile.pprof, $OUT/$mode-allocs.pprof (go tool pprof -top $OUT/fluss-gateway ...)" >&2
  done
fi

# ---------------------------------------------------------------- verify
echo "==> checking that every row landed" >&2
for mode in $MODES; do
  mapfile -t specs < "$OUT/verify-$mode.txt"
  jrun verify "$BOOT" "$DB" "$mode" "${specs[@]}" >&2
done

# ---------------------------------------------------------------- report
python3 - "$RESULTS" "$(getconf CLK_TCK)" <<'EOF'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
for x in rs:
    x["result"].setdefault("rows_per_s", x["result"]["rows"] / x["result"]["seconds"])
tick_us = 1e6 / int(sys.argv[2])
med = statistics.median
def sel(side, kind, mode): return [x["result"] for x in rs if x["side"] == side and x["kind"] == kind and x["mode"] == mode]
def us(rows, ticks): return ticks * tick_us / rows
modes = []
for x in rs:
    if x["mode"] not in modes: modes.append(x["mode"])
name = {"pk": "PK upsert", "log": "log append (ARROW, ZSTD)"}
print("| mode | Java client rows/s | gateway rows/s | gateway ÷ Java | gateway p50 / p99 ms | gateway CPU/row | Java client CPU/row | Fluss CPU/row (gateway runs / Java runs) | gateway VmHWM |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for m in modes:
    g, j = sel("gateway", "main", m), sel("java", "main", m)
    if not g or not j: continue
    gr, jr = med([x["rows_per_s"] for x in g]), med([x["rows_per_s"] for x in j])
    print(f"| {name.get(m, m)} | {jr:,.0f} | {gr:,.0f} | {gr / jr:.2f}× | {med([x['p50_ms'] for x in g]):.1f} / {med([x['p99_ms'] for x in g]):.1f} "
          f"| {med([us(x['rows'], x['gateway_ticks']) for x in g]):.2f} µs | {med([us(x['rows'], x['client_ticks']) for x in j]):.2f} µs "
          f"| {med([us(x['rows'], x['fluss_ticks']) for x in g]):.2f} / {med([us(x['rows'], x['fluss_ticks']) for x in j]):.2f} µs "
          f"| {max(x['gateway_hwm_kb'] for x in g) / 1024:.0f} MiB |")
print()
for m in modes:
    for h in sel("gateway", "half", m):
        print(f"{name.get(m, m)} at half load ({h['rows_per_s']:,.0f} rows/s): request p50/p99 {h['p50_ms']:.1f}/{h['p99_ms']:.1f} ms, "
              f"added by the gateway (request − delivery) p50/p99 {h['added_p50_ms']:.2f}/{h['added_p99_ms']:.2f} ms")
sweep = [x for x in rs if x["kind"].startswith("sweep:")]
if sweep:
    print()
    print("| mode | entries × concurrency | gateway rows/s | ÷ Java median | p50 / p99 ms | gateway CPU/row |")
    print("|---|---|---:|---:|---:|---:|")
    for x in sweep:
        _, e, c = x["kind"].split(":")
        j = sel("java", "main", x["mode"]); r = x["result"]
        jr = med([y["rows_per_s"] for y in j]) if j else float("nan")
        print(f"| {x['mode']} | {e} × {c} | {r['rows_per_s']:,.0f} | {r['rows_per_s'] / jr:.2f}× | {r['p50_ms']:.1f} / {r['p99_ms']:.1f} | {us(r['rows'], r['gateway_ticks']):.2f} µs |")
EOF
