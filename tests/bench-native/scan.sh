#!/usr/bin/env bash
# Side-by-side scan benchmark (issue 23): one log table (ARROW, ZSTD, the
# BenchNative schema, 4 buckets) of SCAN_ROWS rows written by the Java client
# (BenchNative write), then read whole, in interleaved rounds, by the official
# Java client's LogScanner (ScanNative.java) and through the gateway's
# POST .../records/scan cursor chain (scanclient, SCAN_CHAINS chains over
# disjoint buckets, SCAN_MAX_ROWS rows per request; answers not gzip'd unless
# SCAN_GZIP=1, see scanclient; with SCAN_PREFETCH=1 each chain sends its next
# request as soon as an answer's headers carry the cursor, X-Fluss-Scan-Cursor,
# and reads the records meanwhile, as the LogScanner fetches ahead; with
# SCAN_NDJSON=1 the answers are streamed NDJSON, read as they arrive). Prints each side's rows/s
# (median of the rounds) and the ratio, CPU per row (utime+stime of the
# gateway process, of the Java client's JVM), peak RSS (VmHWM) of both, the
# gateway's request p50/p99, and the 1-minute load average before and after
# every run. Both sides fail unless every bucket's offsets came 0, 1, 2, ...
# with no gap or repeat, and the run fails unless each read SCAN_ROWS rows:
# every row exactly once. Numbers on a shared machine are noisy; the final
# figures are taken on a quiet one (SCAN_QUIET_WAIT seconds, 0 by default,
# lets each run wait for the load average to fall to 1.0).
#
#   make bench-scan            (starts a Fluss cluster of its own on 48123, as bench-native)
#   BENCH_BOOTSTRAP=127.0.0.1:43123 bash tests/bench-native/scan.sh
#
# Environment: BENCH_BOOTSTRAP (a running cluster; unset: a local cluster of its own on
# BENCH_PORT/BENCH_SASL_PORT/BENCH_ZK_PORT, 48123/48124/48181), SCAN_ROWS (500000),
# SCAN_ROUNDS (3), SCAN_CHAINS (1), SCAN_MAX_ROWS (10000), SCAN_GZIP (0), SCAN_PREFETCH (0), SCAN_NDJSON (0), SCAN_QUIET_WAIT (0), BENCH_GATEWAY_PORT (28088),
# FLUSS_VERSION (0.9.1-incubating), FLUSS_HOME (.cache/fluss).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source tests/bench-native/common.sh
OUT="$ROOT/.cache/bench-native/scan"
ROWS=${SCAN_ROWS:-500000}
ROUNDS=${SCAN_ROUNDS:-3}
CHAINS=${SCAN_CHAINS:-1}
MAXROWS=${SCAN_MAX_ROWS:-10000}
GZIP_ARGS=()
[[ ${SCAN_GZIP:-0} == 1 ]] && GZIP_ARGS=(-gzip)
[[ ${SCAN_PREFETCH:-0} == 1 ]] && GZIP_ARGS+=(-prefetch)
[[ ${SCAN_NDJSON:-0} == 1 ]] && GZIP_ARGS+=(-ndjson)
GW_PORT=${BENCH_GATEWAY_PORT:-28088}
GW_RUN_LABEL="the scan benchmark cluster"
source tests/lib/gateway-run.sh
BOOT=${BENCH_BOOTSTRAP:-}
if [[ -z $BOOT ]]; then
  bench_cluster_start "scan benchmark cluster" fluss-bench "${BENCH_PORT:-48123}" "${BENCH_SASL_PORT:-48124}" "${BENCH_ZK_PORT:-48181}"
fi

bench_java_build tests/bench-native/BenchNative.java tests/bench-native/ScanNative.java
$GO build -o "$OUT/fluss-gateway" ./bootstrap/cmd/gateway
$GO build -o "$OUT/scanclient" ./tests/bench-native/scanclient

DB="scanbench_$(date +%s)"
echo "==> $DB.events: $ROWS rows written by the Java client" >&2
jrun BenchNative create "$BOOT" "$DB" log events >&2
jrun BenchNative write "$BOOT" "$DB" events log 0 "$ROWS" >&2

bench_gateway_start

: > "$OUT/results.jsonl"
quiet() { bench_quiet "${SCAN_QUIET_WAIT:-0}" 1.0; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # utime+stime of a process, clock ticks
for r in $(seq 0 "$ROUNDS"); do # round 0 warms both sides up and is not counted
  quiet; jl0=$(load1)
  j=$(jrun ScanNative "$BOOT" "$DB" events)
  jl1=$(load1); quiet; gl0=$(load1); c0=$(ticks "$gw_pid")
  g=$("$OUT/scanclient" -url "http://127.0.0.1:$GW_PORT/v1/clusters/default" -db "$DB" -table events \
      -max-rows "$MAXROWS" -chains "$CHAINS" "${GZIP_ARGS[@]}")
  c1=$(ticks "$gw_pid"); gl1=$(load1)
  echo "round $r: java $j (load $jl0 -> $jl1); gateway $g (load $gl0 -> $gl1, $((c1 - c0)) ticks)" >&2
  [[ $r == 0 ]] && continue
  echo "{\"java\": $j, \"gateway\": $g, \"gateway_ticks\": $((c1 - c0)), \"load\": {\"java\": [$jl0, $jl1], \"gateway\": [$gl0, $gl1]}}" >> "$OUT/results.jsonl"
done
gw_hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$gw_pid/status")

python3 - "$OUT/results.jsonl" "$ROWS" "$(getconf CLK_TCK)" "$gw_hwm" "$CHAINS" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
rows, hz, gw_hwm, chains = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
for r in runs:
    for side in ("java", "gateway"):
        assert r[side]["rows"] == rows, f"{side} read {r[side]['rows']} rows, not {rows}"
med = lambda f: statistics.median(f(r) for r in runs)
j = med(lambda r: r["java"]["rows"] / r["java"]["seconds"])
g = med(lambda r: r["gateway"]["rows"] / r["gateway"]["seconds"])
jcpu = med(lambda r: r["java"]["cpu_ticks"] / hz / rows * 1e6)
gcpu = med(lambda r: r["gateway_ticks"] / hz / rows * 1e6)
loads = [x for r in runs for side in ("java", "gateway") for x in r["load"][side]]
jhwm = max(r["java"].get("vmhwm_kib", 0) for r in runs)
print(f"load average (1 min) before/after the measured runs: {min(loads):.2f}–{max(loads):.2f}; every row read exactly once on both sides ({rows} rows, dense offsets per bucket)")
print("| rows | chains | Java LogScanner rows/s | gateway scan rows/s | gateway ÷ Java | gateway request p50 / p99 ms | gateway CPU/row | Java client CPU/row | VmHWM gateway / Java |")
print("|---|---|---|---|---|---|---|---|---|")
print(f"| {rows} | {chains} | {j:,.0f} | {g:,.0f} | {g / j:.2f} | {med(lambda r: r['gateway']['p50_ms']):.1f} / {med(lambda r: r['gateway']['p99_ms']):.1f} "
      f"| {gcpu:.2f} µs | {jcpu:.2f} µs | {gw_hwm / 1024:.0f} / {jhwm / 1024:.0f} MiB |")
PY
