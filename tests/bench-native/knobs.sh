#!/usr/bin/env bash
# The writer's knobs side by side (issue 22): PK upserts (or log appends) at
# ENTRIES × CONCURRENCY through one gateway per setting, the Java client
# (BenchNative.java) first in every round, all against one local cluster.
# Runs follow each other without waiting for a quiet machine, so compare
# settings within a round, not with bench-native's figures.
#
#   bash tests/bench-native/knobs.sh NAME:SETTINGS ...
#
# SETTINGS is "-" (the defaults) or comma-separated VAR=value gateway
# environment overrides, e.g.
#
#   P=FLUSS_GATEWAY__CLUSTER__DEFAULT__WRITE__
#   bash tests/bench-native/knobs.sh "defaults:-" "one-lane:${P}LANES=1" \
#     "always-linger:${P}LINGER_AFTER_IN_FLIGHT=0,${P}KV_LINGER=10ms"
#
# Prints one line per run: rows/s, CPU per row of the gateway (or the Java
# client) and of the Fluss processes, of the load generator, and the
# request p50/p99. Round 0 is a warm-up.
#
# Environment: KNOBS_MODE (pk | log, pk), KNOBS_ROWS (200000) measured rows
# per run after 50,000 warm-up rows, KNOBS_ROUNDS (2) after the warm-up
# round, KNOBS_ENTRIES (500), KNOBS_CONCURRENCY (16); the cluster listens on
# 47123/47124 (ZooKeeper 47181) and the gateway on 47088.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source tests/bench-native/common.sh
OUT="$ROOT/.cache/bench-knobs"
mkdir -p "$OUT"
GW_PORT=47088
MODE=${KNOBS_MODE:-pk}
ROWS=${KNOBS_ROWS:-200000}
ROUNDS=${KNOBS_ROUNDS:-2}
ENTRIES=${KNOBS_ENTRIES:-500}
CONC=${KNOBS_CONCURRENCY:-16}
OP=upsert
[[ $MODE == log ]] && OP=append
(( $# > 0 )) || { echo "usage: $0 NAME:SETTINGS ..." >&2; exit 2; }

GW_RUN_LABEL="the knobs cluster"
source tests/lib/gateway-run.sh
bench_build_writes
bench_cluster_start "knobs cluster" fluss-knobs 47123 47124 47181
DB="knobs_$(date +%s)"
names=()
for r in $(seq 0 "$ROUNDS"); do
  names+=("java_$r")
  for i in $(seq 1 $#); do names+=("g${i}_$r"); done
done
jrun BenchNative create "$BOOT" "$DB" "$MODE" "${names[@]}" >&2

summary() { # the JSON result of a run: one line of figures
  python3 -c '
import json, sys
d = json.loads(sys.argv[1]); rows = d["rows"]
us = lambda k: "%.2f" % (d[k] * 1e4 / rows) if k in d else "-"
own = "gateway_ticks" if "gateway_ticks" in d else "client_ticks"
print("rows/s %d  cpu/row %s µs  fluss/row %s µs  load/row %s µs  p50/p99 %s/%s ms" % (
    rows / d["seconds"], us(own), us("fluss_ticks"), us("load_ticks"), d.get("p50_ms", "-"), d.get("p99_ms", "-")))
' "$1"
}

for r in $(seq 0 "$ROUNDS"); do
  res=$(jrun BenchNative write "$BOOT" "$DB" "java_$r" "$MODE" 50000 "$ROWS" "$FPIDS")
  echo "round $r  java  load $(load1)  $(summary "$res")"
  i=0
  for spec in "$@"; do
    i=$((i + 1))
    name=${spec%%:*} vars=${spec#*:} envs=()
    [[ $vars != - ]] && IFS=, read -ra envs <<<"$vars"
    bench_gateway_start "${envs[@]}"
    res=$("$OUT/load" -mode bench -schema bench10 -url "http://127.0.0.1:$GW_PORT" -db "$DB" -table "g${i}_$r" \
      -op "$OP" -rows "$ENTRIES" -concurrency "$CONC" -warmup-rows 50000 -total-rows "$ROWS" -timeout 30s \
      -pid "$gw_pid" -fluss-pids "$FPIDS")
    echo "round $r  $name  load $(load1)  $(summary "$res")"
    kill "$gw_pid"; wait "$gw_pid" 2>/dev/null || true; gw_pid=""
  done
done
