#!/usr/bin/env bash
# Side-by-side scan benchmark (issue 23): one log table (ARROW, ZSTD, the
# BenchNative schema, 4 buckets) of SCAN_ROWS rows written by the Java client
# (BenchNative write), then read whole, in interleaved rounds, by the official
# Java client's LogScanner (ScanNative.java) and through the gateway's
# POST .../records/scan cursor chain (scanclient, SCAN_CHAINS chains over
# disjoint buckets, SCAN_MAX_ROWS rows per request; answers not gzip'd unless
# SCAN_GZIP=1, see scanclient). Prints each side's rows/s
# (median of the rounds) and the ratio. Numbers on a shared machine are noisy;
# the final figures are taken on a quiet one.
#
#   BENCH_BOOTSTRAP=127.0.0.1:43123 bash tests/bench-native/scan.sh
#
# Environment: BENCH_BOOTSTRAP (required: a running cluster), SCAN_ROWS (500000),
# SCAN_ROUNDS (3), SCAN_CHAINS (1), SCAN_MAX_ROWS (10000), SCAN_GZIP (0), BENCH_GATEWAY_PORT (28088),
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
GW_PORT=${BENCH_GATEWAY_PORT:-28088}
BOOT=${BENCH_BOOTSTRAP:?set BENCH_BOOTSTRAP to a running cluster (deployments/local/fluss-cluster.sh start)}

GW_RUN_LABEL="the cluster"
source tests/lib/gateway-run.sh

bench_java_build tests/bench-native/BenchNative.java tests/bench-native/ScanNative.java
$GO build -o "$OUT/fluss-gateway" ./bootstrap/cmd/gateway
$GO build -o "$OUT/scanclient" ./tests/bench-native/scanclient

DB="scanbench_$(date +%s)"
echo "==> $DB.events: $ROWS rows written by the Java client" >&2
jrun BenchNative create "$BOOT" "$DB" log events >&2
jrun BenchNative write "$BOOT" "$DB" events log 0 "$ROWS" >&2

bench_gateway_start

: > "$OUT/results.jsonl"
for r in $(seq 0 "$ROUNDS"); do # round 0 warms both sides up and is not counted
  j=$(jrun ScanNative "$BOOT" "$DB" events)
  g=$("$OUT/scanclient" -url "http://127.0.0.1:$GW_PORT/v1/clusters/default" -db "$DB" -table events \
      -max-rows "$MAXROWS" -chains "$CHAINS" "${GZIP_ARGS[@]}")
  echo "round $r: java $j; gateway $g" >&2
  [[ $r == 0 ]] && continue
  echo "{\"java\": $j, \"gateway\": $g}" >> "$OUT/results.jsonl"
done

python3 - "$OUT/results.jsonl" "$ROWS" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
rows = int(sys.argv[2])
for r in runs:
    for side in ("java", "gateway"):
        assert r[side]["rows"] == rows, f"{side} read {r[side]['rows']} rows, not {rows}"
j = statistics.median(r["java"]["rows"] / r["java"]["seconds"] for r in runs)
g = statistics.median(r["gateway"]["rows"] / r["gateway"]["seconds"] for r in runs)
print(f"| rows | Java LogScanner rows/s | gateway scan rows/s | gateway ÷ Java |")
print(f"|---|---|---|---|")
print(f"| {rows} | {j:,.0f} | {g:,.0f} | {g / j:.2f} |")
PY
