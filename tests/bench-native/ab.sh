#!/usr/bin/env bash
# A/B of the gateway's CPU per row between two commits (issue 22): both
# gateway binaries run side by side against one local Fluss cluster and are
# driven by tools/load -mode bench with the rows of make bench-native
# (bench10 table, 4 buckets), a fresh table per run.
#
#   BENCH_AB_BASE=3b2389e bash tests/bench-native/ab.sh        # base vs the work tree
#
# Two ways to run them:
#   sequential (default)  runs alternate base/head, the order swapped every
#                         round: the figures of a quiet machine.
#   BENCH_AB_PAIRED=1     each round loads both gateways at the same time (each
#                         with its own table), so that both see the same
#                         machine: only the ratio head/base counts, but it holds
#                         on a busy machine, where sequential runs differ by
#                         more than the change under test.
# Per run it prints the gateway's CPU per row (utime+stime of /proc/<pid>/stat
# over the measured part), rows/s, p50/p99, the Fluss processes' CPU per row
# and the 1-minute load average before/after; then the medians per side.
#
# Environment: BENCH_AB_BASE (required: a commit), BENCH_AB_HEAD (the work
# tree when unset), BENCH_AB_MODES ("pk log"), BENCH_AB_ROUNDS (3),
# BENCH_ROWS (200000) and BENCH_WARMUP_ROWS (30000) per run, BENCH_ENTRIES (500),
# BENCH_CONCURRENCY (16); ports BENCH_PORT/BENCH_SASL_PORT/BENCH_ZK_PORT
# (47123/47124/47181) of the cluster and BENCH_AB_GATEWAY_PORT (47088, and
# the next one) of the gateways. BENCH_AB_BODY (json) picks the request
# bodies: json (entries documents), ndjson (the same entries one per line),
# arrow (Arrow IPC streams, log mode only; BENCH_ENTRIES then defaults to
# 10000 rows a request and BENCH_CONCURRENCY to 4, as make bench-native's
# Arrow runs) or arrow-zstd (the same, each record batch ZSTD-compressed).
# BENCH_AB_BASE_BODY (BENCH_AB_BODY) gives the base side other bodies: with
# BENCH_AB_BASE=HEAD, BENCH_AB_BASE_BODY=json, BENCH_AB_BODY=ndjson and
# BENCH_AB_PAIRED=1, two gateways of one commit take JSON documents and the
# same rows as NDJSON at the same time (issue 25's NDJSON ÷ JSON, each
# gateway's CPU per row measured on the same machine at the same moment).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BASE=${BENCH_AB_BASE:?set BENCH_AB_BASE to the commit to compare with}
HEAD_REV=${BENCH_AB_HEAD:-}
MODES=${BENCH_AB_MODES:-pk log}
ROUNDS=${BENCH_AB_ROUNDS:-3}
ROWS=${BENCH_ROWS:-200000}
WARM=${BENCH_WARMUP_ROWS:-30000}
BODY=${BENCH_AB_BODY:-json}
case $BODY in
  json|ndjson) ENTRIES=${BENCH_ENTRIES:-500} CONC=${BENCH_CONCURRENCY:-16} ;;
  arrow|arrow-zstd) ENTRIES=${BENCH_ENTRIES:-10000} CONC=${BENCH_CONCURRENCY:-4} MODES=${BENCH_AB_MODES:-log}
    [[ $MODES == log ]] || { echo "BENCH_AB_BODY=$BODY takes BENCH_AB_MODES=log only" >&2; exit 2; } ;;
  *) echo "BENCH_AB_BODY: json, ndjson, arrow or arrow-zstd, not $BODY" >&2; exit 2 ;;
esac
BASE_BODY=${BENCH_AB_BASE_BODY:-$BODY}
case $BASE_BODY/$BODY in
  "$BODY/$BODY"|json/ndjson|ndjson/json) ;;
  *) echo "BENCH_AB_BASE_BODY differs from BENCH_AB_BODY only between json and ndjson, not $BASE_BODY and $BODY" >&2; exit 2 ;;
esac
PAIRED=${BENCH_AB_PAIRED:-0}
PORT0=${BENCH_AB_GATEWAY_PORT:-47088}
OUT="$ROOT/.cache/bench-ab"
mkdir -p "$OUT"
RESULTS="$OUT/results.jsonl"
: > "$RESULTS"

GW_RUN_LABEL="the A/B cluster"
source tests/lib/gateway-run.sh
source tests/bench-native/common.sh
base_pid="" trees=()
ab_exit() { # stops the base gateway, removes the worktrees, then gw_run_cleanup (head gateway, cluster)
  local rc=$?
  set +e
  [[ -n $base_pid ]] && kill -TERM "$base_pid" 2>/dev/null
  for t in "${trees[@]}"; do git worktree remove --force "$t" 2>/dev/null; done
  (exit "$rc")
  gw_run_cleanup
}
trap ab_exit EXIT

# ---------------------------------------------------------------- build
build_at() { # rev out: the gateway binary of commit rev
  local tree
  tree=$(mktemp -d "$OUT/tree.XXXXXX")
  rmdir "$tree"
  git worktree add --detach "$tree" "$1" >/dev/null 2>&1
  trees+=("$tree")
  (cd "$tree" && $GO build -o "$2" ./bootstrap/cmd/gateway)
}
build_at "$BASE" "$OUT/gateway-base"
if [[ -n $HEAD_REV ]]; then build_at "$HEAD_REV" "$OUT/gateway-head"; else $GO build -o "$OUT/gateway-head" ./bootstrap/cmd/gateway; fi
$GO build -o "$OUT/load" ./tools/load
bash deployments/local/fluss-cluster.sh fetch >&2
bench_java_build tests/bench-native/BenchNative.java

# ---------------------------------------------------------------- cluster and gateways
bench_cluster_start "A/B cluster" fluss-bench-ab "${BENCH_PORT:-47123}" "${BENCH_SASL_PORT:-47124}" "${BENCH_ZK_PORT:-47181}"
start_gateway() { # side port
  FLUSS_GATEWAY__REST__LISTEN=127.0.0.1:$2 FLUSS_GATEWAY__METRICS__ENABLED=false \
  FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS=$BOOT \
    "$OUT/gateway-$1" --config configs/local.yaml > "$OUT/gateway-$1.log" 2>&1 &
}
declare -A PORT=([base]=$PORT0 [head]=$((PORT0 + 1))) PID=()
start_gateway base "${PORT[base]}"; base_pid=$!; PID[base]=$base_pid
gw_pid=$base_pid; gw_await_ready "${PORT[base]}" "$OUT/gateway-base.log" 150
start_gateway head "${PORT[head]}"; gw_pid=$!; PID[head]=$gw_pid
gw_await_ready "${PORT[head]}" "$OUT/gateway-head.log" 150

DB="ab_$(date +%s)"
for mode in $MODES; do
  names=()
  for i in $(seq 1 $((2 * ROUNDS))); do names+=("${mode}_$i"); done
  jrun BenchNative create "$BOOT" "$DB" "$mode" "${names[@]}" >&2
done

# ---------------------------------------------------------------- runs
for mode in $MODES; do : > "$OUT/verify-$mode.txt"; done
one() { # side mode table: one run, its JSON line appended to $RESULTS
  local side=$1 mode=$2 t=$3 op=upsert l0 r body=$BODY
  [[ $mode == log ]] && op=append
  [[ $side == base ]] && body=$BASE_BODY
  l0=$(load1)
  r=$("$OUT/load" -mode bench -body "$body" -schema bench10 -url "http://127.0.0.1:${PORT[$side]}" -db "$DB" -table "$t" -op "$op" \
      -rows "$ENTRIES" -concurrency "$CONC" -warmup-rows "$WARM" -total-rows "$ROWS" -timeout 30s \
      -pid "${PID[$side]}" -fluss-pids "$FPIDS")
  echo "{\"side\":\"$side\",\"mode\":\"$mode\",\"load_before\":$l0,\"load_after\":$(load1),\"result\":$r}" >> "$RESULTS"
  echo "$t=$((WARM + ROWS)):$ROWS" >> "$OUT/verify-$mode.txt"
}
for mode in $MODES; do
  n=0
  for r in $(seq 1 "$ROUNDS"); do
    if [[ $PAIRED == 1 ]]; then
      one base "$mode" "${mode}_$((n + 1))" & a=$!
      one head "$mode" "${mode}_$((n + 2))" & b=$!
      wait "$a" "$b" # not the gateways
    elif (( r % 2 )); then
      one base "$mode" "${mode}_$((n + 1))"; one head "$mode" "${mode}_$((n + 2))"
    else
      one head "$mode" "${mode}_$((n + 2))"; one base "$mode" "${mode}_$((n + 1))"
    fi
    n=$((n + 2))
  done
done

# ---------------------------------------------------------------- verify
# shellcheck disable=SC2086 # MODES is a list
bench_verify $MODES

# ---------------------------------------------------------------- report
python3 - "$RESULTS" "$(getconf CLK_TCK)" "$BASE" "${HEAD_REV:-work tree $(git rev-parse --short HEAD)$(git diff --quiet || echo +dirty)}" "$PAIRED" "$BASE_BODY" "$BODY" <<'EOF'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
tick_us = 1e6 / int(sys.argv[2])
print(f"base {sys.argv[3]} ({sys.argv[6]} bodies), head {sys.argv[4]} ({sys.argv[7]} bodies), {'paired (simultaneous)' if sys.argv[5] == '1' else 'sequential'} runs")
for x in rs:
    r = x["result"]
    print(f"{x['mode']:3} {x['side']:4} load {x['load_before']:.2f}/{x['load_after']:.2f}  gateway {r['gateway_ticks'] * tick_us / r['rows']:.2f} µs/row  "
          f"{r['rows_per_s']:,.0f} rows/s  p50/p99 {r['p50_ms']:.1f}/{r['p99_ms']:.1f} ms  Fluss {r['fluss_ticks'] * tick_us / r['rows']:.2f} µs/row")
print()
for mode in dict.fromkeys(x["mode"] for x in rs):
    med, runs = {}, {}
    for side in ("base", "head"):
        v = runs[side] = [x["result"] for x in rs if x["mode"] == mode and x["side"] == side]
        med[side] = statistics.median(r["gateway_ticks"] * tick_us / r["rows"] for r in v)
        print(f"{mode} {side}: median gateway CPU {med[side]:.2f} µs/row, {statistics.median(r['rows_per_s'] for r in v):,.0f} rows/s, "
              f"p50 {statistics.median(r['p50_ms'] for r in v):.1f} ms")
    print(f"{mode} head ÷ base CPU per row: {med['head'] / med['base']:.3f}")
    rr = [h["rows_per_s"] / b["rows_per_s"] for b, h in zip(runs["base"], runs["head"])]
    print(f"{mode} head ÷ base rows/s in each round: " + ", ".join(f"{x:.2f}" for x in rr) + f" (median {statistics.median(rr):.2f})")
EOF
