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
# Printed first: the machine (CPU model, cores, memory, kernel), the versions
# (Fluss, Go, Java, the gateway's commit) and the conditions (rows, entries ×
# concurrency, rounds, the 1-minute load average before and after every run).
# Then per mode: rows/s of each side (median of the rounds) and their ratio,
# p50/p99 of the gateway's requests, CPU per row (utime+stime from
# /proc/<pid>/stat over the measured part) of the gateway, of the Java client
# JVM and of the Fluss processes (ZooKeeper, coordinator, tablet servers)
# during each side's runs, both sides' peak RSS (VmHWM), the rows per batch
# each side's tables received (counted in the tablet server's log segments
# when the script started the cluster or BENCH_FLUSS_DATA names its data
# directory), where a gateway request's time went (p50 of each phase of the
# writer's timeline, from the Server-Timing answer header: encode, queue for
# a batch, wait for an in-flight slot, build, the Fluss round trip, resolve;
# and the time outside the handler), and the latency the gateway adds
# (request time minus the writer's delivery time) at half of the gateway's
# rows/s. Lookups (pk in BENCH_MODES): keys/s, CPU per key and p50/p99 of the
# gateway's POST .../records/lookup (BENCH_LOOKUP_BATCH keys per request ×
# BENCH_LOOKUP_CONCURRENCY) against the Java client's Lookuper (as many
# lookups outstanding), and of prefix lookups (.../records/prefix-lookup,
# BENCH_PREFIX_BATCH prefixes per request, against lookupBy on a table with
# primary key (k, name) and bucket key k), one of four keys missing; every
# answer is checked. Every write run is checked: the end offsets of every
# bucket (log; changelog for pk, one +I per new key) must add up to the rows
# written, and for pk a sample of keys is looked up with the Java client and
# compared column by column.
#
# Noise: a ratio is only meaningful on a quiet machine. A run that starts
# with the 1-minute load average above BENCH_MAX_LOAD (1.0) makes its mode's
# ratios NOISY: they are printed marked so (BENCH_STRICT=1: not printed at
# all, and the script exits 3). BENCH_QUIET_WAIT seconds (0) lets every run
# wait for the load to settle first.
#
# A 429 (the memory budget or a limit refused the whole body before any row
# was sent) is waited out as its Retry-After says and the body resent, as a
# client should (tools/load); the sweep's table counts them, and the time
# waited counts in rows/s and the latencies.
#
# Environment:
#   BENCH_ROUNDS (3)          measured rounds per mode and side, after a warm-up round
#                             (BENCH_WARMUP_ROUND=0: none) whose results are not counted
#   BENCH_ROWS (500000)       measured rows per run; BENCH_WARMUP_ROWS (50000) before them
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
#   BENCH_MAX_LOAD (1.0)      1-minute load average above which a run is NOISY
#   BENCH_QUIET_WAIT (0)      seconds each run may wait for the load average to fall to BENCH_MAX_LOAD
#   BENCH_SETTLE (30)         seconds each run may wait, after that, for one second in which the machine's
#                             CPUs were busy less than BENCH_SETTLE_BUSY (10) percent: what the previous run
#                             left the cluster to do (a 2,000,000-row Arrow run's flushes and collections)
#                             stays out of the next run; the busy percent before each run is kept in
#                             results.jsonl and its range printed with the conditions
#   BENCH_STRICT (0)          1: print no ratio computed from NOISY runs, exit 3 if there were any
#   BENCH_LOOKUP (1)          0: no lookup runs; BENCH_LOOKUP_KEYS (200000) measured keys per run,
#                             BENCH_LOOKUP_WARMUP (20000), BENCH_LOOKUP_BATCH (128) keys per request,
#                             BENCH_LOOKUP_CONCURRENCY (16), BENCH_PREFIX_BATCH (16) prefixes per request
#   BENCH_LOOKUP_ONLY (0)     1: only the lookup runs (BENCH_MODES is pk, no write runs; the Java client
#                             fills gw_pk_1 and pfx_1 with BENCH_ROWS rows); with BENCH_PPROF=1, CPU and
#                             allocation profiles of one extra prefix-lookup run (lookup-prefix-*.pprof)
#   BENCH_FLUSS_DATA          the data directory of a BENCH_BOOTSTRAP cluster (rows per batch)
#   BENCH_GATEWAY_PORT (28088), plus any FLUSS_GATEWAY__* override for the gateway
#   BENCH_ARROW (1)           log mode: also the same rows as Arrow IPC stream bodies (Content-Type
#                             application/vnd.apache.arrow.stream, one record batch of BENCH_ARROW_ENTRIES
#                             (10000) rows per request × BENCH_ARROW_CONCURRENCY (4), BENCH_ARROW_ROWS (4 ×
#                             BENCH_ROWS) measured rows per run: at about 2,000,000 rows/s a run of BENCH_ROWS
#                             lasted a quarter of a second, 13 rounds of 4 requests), in the same interleaved
#                             rounds; reported beside JSON and the Java AppendWriter (Arrow ÷ JSON, Arrow ÷ Java)
#   BENCH_ARROW_ZSTD (1)      with BENCH_ARROW: also the same Arrow IPC streams with ZSTD-compressed record
#                             batches (pyarrow's IpcWriteOptions(compression="zstd")), which the gateway sends
#                             to a ZSTD table as they are; a row of its own in the Arrow table
#   BENCH_NDJSON (1)          both modes: also the same rows as NDJSON bodies (Content-Type application/x-ndjson,
#                             BENCH_NDJSON_ENTRIES (BENCH_ENTRIES) lines per request × BENCH_NDJSON_CONCURRENCY
#                             (BENCH_CONCURRENCY), the JSON documents' entries one per line), in the same
#                             interleaved rounds; reported as NDJSON ÷ JSON (issue 25)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source tests/bench-native/common.sh
OUT="$ROOT/.cache/bench-native"
mkdir -p "$OUT"
ROUNDS=${BENCH_ROUNDS:-3}
ROWS=${BENCH_ROWS:-500000}
WARM=${BENCH_WARMUP_ROWS:-50000}
ENTRIES=${BENCH_ENTRIES:-500}
CONC=${BENCH_CONCURRENCY:-16}
MODES=${BENCH_MODES:-pk log}
LOOKUP_ONLY=${BENCH_LOOKUP_ONLY:-0}
[[ $LOOKUP_ONLY == 1 ]] && MODES=pk
ARROW=${BENCH_ARROW:-1}
ARROW_ENTRIES=${BENCH_ARROW_ENTRIES:-10000}
ARROW_CONC=${BENCH_ARROW_CONCURRENCY:-4}
ARROW_ZSTD=${BENCH_ARROW_ZSTD:-1}
NDJSON_ENTRIES=${BENCH_NDJSON_ENTRIES:-$ENTRIES}
NDJSON_CONC=${BENCH_NDJSON_CONCURRENCY:-$CONC}
ARROW_ROWS=${BENCH_ARROW_ROWS:-$((4 * ROWS))}
NDJSON=${BENCH_NDJSON:-1}
GW_PORT=${BENCH_GATEWAY_PORT:-28088}
PPROF_PORT=${BENCH_PPROF_PORT:-6067}
RESULTS="$OUT/results.jsonl"
: > "$RESULTS"

GW_RUN_LABEL="the benchmark cluster"
source tests/lib/gateway-run.sh

# ---------------------------------------------------------------- build
bench_build_writes

# ---------------------------------------------------------------- cluster
if [[ -z ${BENCH_BOOTSTRAP:-} ]]; then
  bench_cluster_start "benchmark cluster" fluss-bench "${BENCH_PORT:-48123}" "${BENCH_SASL_PORT:-48124}" "${BENCH_ZK_PORT:-48181}"
else
  BOOT=$BENCH_BOOTSTRAP FPIDS=${BENCH_FLUSS_PIDS:-}
fi

# ---------------------------------------------------------------- gateway
pprof_env=()
[[ ${BENCH_PPROF:-0} == 1 ]] && pprof_env=(FLUSS_GATEWAY_PPROF_LISTEN=127.0.0.1:$PPROF_PORT)
bench_gateway_start "${pprof_env[@]}"

# ---------------------------------------------------------------- runs
DB="bench_$(date +%s)"
# Fresh tables for every run, created up front (one JVM per mode): gw_<mode>_<n>, java_<mode>_<n>.
sweep_points=0
if [[ ${BENCH_SWEEP:-0} == 1 ]]; then
  sweep_points=$(( $(wc -w <<<"${BENCH_SWEEP_ENTRIES:-100 500 2000}") * $(wc -w <<<"${BENCH_SWEEP_CONCURRENCY:-4 8 16 32}") ))
fi
WARMUP_ROUND=${BENCH_WARMUP_ROUND:-1}
gw_tables=$(( WARMUP_ROUND + ROUNDS + ${BENCH_HALF:-1} + sweep_points + ${BENCH_PPROF:-0} ))
java_tables=$(( WARMUP_ROUND + ROUNDS ))
(( LOOKUP_ONLY )) && gw_tables=1 java_tables=0
for mode in $MODES; do
  : > "$OUT/verify-$mode.txt"
  names=()
  for i in $(seq 1 "$gw_tables"); do names+=("gw_${mode}_$i"); done
  for i in $(seq 1 "$java_tables"); do names+=("java_${mode}_$i"); done
  if [[ $mode == log && $ARROW == 1 ]]; then
    for i in $(seq 1 $((WARMUP_ROUND + ROUNDS))); do names+=("gwa_${mode}_$i"); done
    if [[ $ARROW_ZSTD == 1 ]]; then
      for i in $(seq 1 $((WARMUP_ROUND + ROUNDS))); do names+=("gwz_${mode}_$i"); done
    fi
  fi
  if [[ $NDJSON == 1 ]] && (( ! LOOKUP_ONLY )); then
    for i in $(seq 1 $((WARMUP_ROUND + ROUNDS))); do names+=("gwn_${mode}_$i"); done
  fi
  echo "==> creating ${#names[@]} $mode tables in $DB" >&2
  jrun BenchNative create "$BOOT" "$DB" "$mode" "${names[@]}" >&2
done
LOOKUPS=0
if [[ ${BENCH_LOOKUP:-1} == 1 && " $MODES " == *" pk "* ]]; then
  LOOKUPS=1
  jrun BenchNative create "$BOOT" "$DB" pfx pfx_1 >&2
fi
declare -A NEXT_GW NEXT_JAVA NEXT_GWA NEXT_GWN
PPROF_ARGS=()
MAX_LOAD=${BENCH_MAX_LOAD:-1.0}
BUSY=0
quiet() { # the load average, then the settling of the previous run's work (sets BUSY)
  bench_quiet "${BENCH_QUIET_WAIT:-0}" "$MAX_LOAD"
  BUSY=$(bench_settle "${BENCH_SETTLE:-30}" "${BENCH_SETTLE_BUSY:-10}")
}
record() { # side kind mode table load_before result: one line of $RESULTS
  echo "{\"side\":\"$1\",\"kind\":\"$2\",\"mode\":\"$3\",\"table\":\"$4\",\"load_before\":$5,\"load_after\":$(load1),\"busy_before\":$BUSY,\"result\":$6}" | tee -a "$RESULTS" >&2
}
gw_run() { # mode kind entries conc rows [rate]: one gateway run, its JSON result appended to $RESULTS
  local mode=$1 kind=$2 e=$3 c=$4 rows=$5 rate=${6:-0} op=upsert t r l0
  sleep "${BENCH_PAUSE:-0}"; quiet; l0=$(load1)
  [[ $mode == log ]] && op=append
  NEXT_GW[$mode]=$(( ${NEXT_GW[$mode]:-0} + 1 )); t=gw_${mode}_${NEXT_GW[$mode]}
  [[ $kind == pprof ]] || echo "$t=$((WARM + rows)):$rows" >> "$OUT/verify-$mode.txt"
  r=$("$OUT/load" -mode bench "${PPROF_ARGS[@]}" -schema bench10 -url "http://127.0.0.1:$GW_PORT" -db "$DB" -table "$t" -op "$op" \
      -rows "$e" -concurrency "$c" -rate "$rate" -warmup-rows "$WARM" -total-rows "$rows" -timeout 30s \
      -pid "$gw_pid" -fluss-pids "$FPIDS")
  record gateway "$kind" "$mode" "$t" "$l0" "$r"
}
gwa_run() { # mode kind [body]: one gateway run with Arrow IPC bodies (log mode), side gateway-arrow
  # (body arrow) or gateway-arrow-zstd (body arrow-zstd: ZSTD-compressed record batches)
  local mode=$1 kind=$2 body=${3:-arrow} side=gateway-arrow prefix=gwa t r l0
  sleep "${BENCH_PAUSE:-0}"; quiet; l0=$(load1)
  [[ $body == arrow-zstd ]] && side=gateway-arrow-zstd prefix=gwz
  NEXT_GWA[$mode$body]=$(( ${NEXT_GWA[$mode$body]:-0} + 1 )); t=${prefix}_${mode}_${NEXT_GWA[$mode$body]}
  echo "$t=$((WARM + ARROW_ROWS)):$ARROW_ROWS" >> "$OUT/verify-$mode.txt"
  r=$("$OUT/load" -mode bench -body "$body" -schema bench10 -url "http://127.0.0.1:$GW_PORT" -db "$DB" -table "$t" -op append \
      -rows "$ARROW_ENTRIES" -concurrency "$ARROW_CONC" -warmup-rows "$WARM" -total-rows "$ARROW_ROWS" -timeout 60s \
      -pid "$gw_pid" -fluss-pids "$FPIDS")
  record "$side" "$kind" "$mode" "$t" "$l0" "$r"
}
arrow_on() { [[ $1 == log && $ARROW == 1 ]]; }
arrow_runs() { # mode kind: the Arrow IPC runs of a round (uncompressed, then ZSTD-compressed with BENCH_ARROW_ZSTD)
  gwa_run "$1" "$2" arrow
  if [[ $ARROW_ZSTD == 1 ]]; then gwa_run "$1" "$2" arrow-zstd; fi
}
gwn_run() { # mode kind: one gateway run with NDJSON bodies (NDJSON_ENTRIES lines × NDJSON_CONC), side gateway-ndjson
  local mode=$1 kind=$2 op=upsert t r l0
  sleep "${BENCH_PAUSE:-0}"; quiet; l0=$(load1)
  [[ $mode == log ]] && op=append
  NEXT_GWN[$mode]=$(( ${NEXT_GWN[$mode]:-0} + 1 )); t=gwn_${mode}_${NEXT_GWN[$mode]}
  echo "$t=$((WARM + ROWS)):$ROWS" >> "$OUT/verify-$mode.txt"
  r=$("$OUT/load" -mode bench -body ndjson -schema bench10 -url "http://127.0.0.1:$GW_PORT" -db "$DB" -table "$t" -op "$op" \
      -rows "$NDJSON_ENTRIES" -concurrency "$NDJSON_CONC" -warmup-rows "$WARM" -total-rows "$ROWS" -timeout 30s \
      -pid "$gw_pid" -fluss-pids "$FPIDS")
  record gateway-ndjson "$kind" "$mode" "$t" "$l0" "$r"
}
ndjson_on() { [[ $NDJSON == 1 ]]; }
java_run() { # mode [kind]: one Java client run
  local mode=$1 kind=${2:-main} t r l0
  sleep "${BENCH_PAUSE:-0}"; quiet; l0=$(load1)
  NEXT_JAVA[$mode]=$(( ${NEXT_JAVA[$mode]:-0} + 1 )); t=java_${mode}_${NEXT_JAVA[$mode]}
  echo "$t=$((WARM + ROWS)):$ROWS" >> "$OUT/verify-$mode.txt"
  r=$(jrun BenchNative write "$BOOT" "$DB" "$t" "$mode" "$WARM" "$ROWS" "$FPIDS")
  record java "$kind" "$mode" "$t" "$l0" "$r"
}
LOOKUP_KEYS=${BENCH_LOOKUP_KEYS:-200000}
LOOKUP_WARM=${BENCH_LOOKUP_WARMUP:-20000}
LOOKUP_BATCH=${BENCH_LOOKUP_BATCH:-128}
LOOKUP_CONC=${BENCH_LOOKUP_CONCURRENCY:-16}
PREFIX_BATCH=${BENCH_PREFIX_BATCH:-16}
lookup_run() { # side key|prefix [pprof]: one lookup run against gw_pk_1 (key) or pfx_1 (prefix), ids 0..ROWS-1 present
  local side=$1 how=$2 kind=lookup:$2 t=gw_pk_1 per=$LOOKUP_BATCH r l0 pfx=()
  [[ $how == prefix ]] && { t=pfx_1; per=$PREFIX_BATCH; pfx=(-prefix); }
  sleep "${BENCH_PAUSE:-0}"; quiet; l0=$(load1)
  if [[ $side == gateway ]]; then
    r=$("$OUT/load" -mode bench-lookup "${pfx[@]}" "${PPROF_ARGS[@]}" -schema bench10 -url "http://127.0.0.1:$GW_PORT" -db "$DB" -table "$t" \
        -keys "$per" -concurrency "$LOOKUP_CONC" -total-keys "$LOOKUP_KEYS" -warmup-keys "$LOOKUP_WARM" -table-rows "$ROWS" \
        -timeout 30s -pid "$gw_pid" -fluss-pids "$FPIDS")
  else
    r=$(jrun BenchNative lookup "$BOOT" "$DB" "$t" "$how" "$ROWS" "$LOOKUP_KEYS" $((per * LOOKUP_CONC)) "$LOOKUP_WARM" "$FPIDS")
  fi
  [[ ${3:-} == pprof ]] && kind=pprof:$how
  record "$side" "$kind" pk "$t" "$l0" "$r"
}

echo "==> $ROUNDS interleaved rounds per mode ($MODES): $ROWS rows per run after $WARM warm-up rows; gateway $ENTRIES entries × $CONC concurrent" >&2
if [[ $LOOKUP_ONLY == 1 ]]; then
  echo "==> lookups only: the Java client fills gw_pk_1 with $ROWS rows" >&2
  jrun BenchNative write "$BOOT" "$DB" gw_pk_1 pk 0 "$ROWS" >/dev/null
  WARMUP_ROUND=0 ROUNDS_W=0
else
  ROUNDS_W=$ROUNDS
fi
if [[ $WARMUP_ROUND == 1 ]]; then
  echo "==> warm-up round (not counted)" >&2
  for mode in $MODES; do
    gw_run "$mode" warmup "$ENTRIES" "$CONC" "$ROWS"; java_run "$mode" warmup
    if arrow_on "$mode"; then arrow_runs "$mode" warmup; fi
    if ndjson_on; then gwn_run "$mode" warmup; fi
  done
fi
for r in $(seq 1 "$ROUNDS_W"); do
  for mode in $MODES; do
    if (( r % 2 )); then
      gw_run "$mode" main "$ENTRIES" "$CONC" "$ROWS"
      if ndjson_on; then gwn_run "$mode" main; fi
      if arrow_on "$mode"; then arrow_runs "$mode" main; fi
      java_run "$mode"
    else
      java_run "$mode"
      if arrow_on "$mode"; then arrow_runs "$mode" main; fi
      if ndjson_on; then gwn_run "$mode" main; fi
      gw_run "$mode" main "$ENTRIES" "$CONC" "$ROWS"
    fi
  done
done

if [[ ${BENCH_HALF:-1} == 1 && $LOOKUP_ONLY != 1 ]]; then
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

if [[ ${BENCH_SWEEP:-0} == 1 && $LOOKUP_ONLY != 1 ]]; then
  for mode in $MODES; do
    for e in ${BENCH_SWEEP_ENTRIES:-100 500 2000}; do
      for c in ${BENCH_SWEEP_CONCURRENCY:-4 8 16 32}; do
        gw_run "$mode" "sweep:$e:$c" "$e" "$c" "${BENCH_SWEEP_ROWS:-$ROWS}"
      done
    done
  done
fi

if [[ ${BENCH_PPROF:-0} == 1 && $LOOKUP_ONLY != 1 ]]; then
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

if [[ $LOOKUPS == 1 ]]; then
  echo "==> lookups: $LOOKUP_KEYS keys per run ($LOOKUP_BATCH per request × $LOOKUP_CONC; prefixes $PREFIX_BATCH per request), $ROUNDS interleaved rounds" >&2
  jrun BenchNative write "$BOOT" "$DB" pfx_1 pfx 0 "$ROWS" >/dev/null
  for r in $(seq 1 "$ROUNDS"); do
    for how in key prefix; do
      if (( r % 2 )); then lookup_run gateway "$how"; lookup_run java "$how"
      else lookup_run java "$how"; lookup_run gateway "$how"; fi
    done
  done
  if [[ ${BENCH_PPROF:-0} == 1 && $LOOKUP_ONLY == 1 ]]; then
    PPROF_ARGS=(-pprof "http://127.0.0.1:$PPROF_PORT" -pprof-out "$OUT/lookup-prefix-" -pprof-seconds "${BENCH_PPROF_SECONDS:-6}s")
    lookup_run gateway prefix pprof
    PPROF_ARGS=()
    echo "==> profiles: $OUT/lookup-prefix-profile.pprof, $OUT/lookup-prefix-allocs.pprof" >&2
  fi
fi

# ---------------------------------------------------------------- verify
# shellcheck disable=SC2086 # MODES is a list
bench_verify $MODES

# ---------------------------------------------------------------- report
DATA=${BENCH_FLUSS_DATA:-}
[[ $started_cluster == 1 ]] && DATA="$FLUSS_STATE_DIR/data"
BENCH_MACHINE="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r)"
BENCH_VERSIONS="Fluss $V ($( [[ $started_cluster == 1 ]] && echo "local cluster started here, 1 tablet server" || echo "cluster at $BOOT")), $($GO version | cut -d' ' -f3), Java $("$JAVA" -version 2>&1 | head -1 | sed 's/.*version "\([^"]*\)".*/\1/'), gateway $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo +dirty)"
arrow_cond=""
[[ " $MODES " == *" log "* && $ARROW == 1 ]] && arrow_cond=" ($ARROW_ROWS for Arrow IPC bodies)"
BENCH_CONDITIONS="$ROWS measured rows per write run$arrow_cond after $WARM warm-up rows, $ROUNDS interleaved rounds (medians), gateway $ENTRIES entries × $CONC concurrent requests, 4 buckets, $(date -u +%Y-%m-%dT%H:%MZ)"
export BENCH_MACHINE BENCH_VERSIONS BENCH_CONDITIONS
python3 - "$RESULTS" "$(getconf CLK_TCK)" "$MAX_LOAD" "${BENCH_STRICT:-0}" "$DATA" "$DB" "$WARM" <<'EOF'
import glob, json, os, statistics, struct, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
for x in rs:
    r = x["result"]
    if "rows" in r:
        r.setdefault("rows_per_s", r["rows"] / r["seconds"])
    if "keys" in r:
        r.setdefault("keys_per_s", r["keys"] / r["seconds"])
tick_us = 1e6 / int(sys.argv[2])
max_load, strict, data, db, warm = float(sys.argv[3]), sys.argv[4] == "1", sys.argv[5], sys.argv[6], int(sys.argv[7])
med = statistics.median
def sel(side, kind, mode): return [x for x in rs if x["side"] == side and x["kind"] == kind and x["mode"] == mode]
def res(xs): return [x["result"] for x in xs]
def us(n, ticks): return ticks * tick_us / n
def noisy(xs): return [x for x in xs if x.get("load_before", 0) > max_load]
print(f"Machine: {os.environ['BENCH_MACHINE']}")
print(f"Versions: {os.environ['BENCH_VERSIONS']}")
print(f"Conditions: {os.environ['BENCH_CONDITIONS']}")
if rs:
    print(f"1-minute load average: before the runs {min(x.get('load_before', 0) for x in rs):.2f}..{max(x.get('load_before', 0) for x in rs):.2f}, "
          f"after {min(x.get('load_after', 0) for x in rs):.2f}..{max(x.get('load_after', 0) for x in rs):.2f} (NOISY above {max_load})")
    busy = [x["busy_before"] for x in rs if "busy_before" in x]
    if busy:
        print(f"CPUs busy in the second before each run (BENCH_SETTLE): {min(busy):.1f}..{max(busy):.1f} %")
bad_runs = noisy(rs)
if bad_runs:
    print(f"NOISY: {len(bad_runs)} of {len(rs)} runs started with the load average above {max_load}; "
          + ("no ratio computed from them is printed." if strict else "ratios computed from them are marked NOISY and are not a result."))
print()

def batches(table):
    """The number of batches in a table's log segments (log tables: the log;
    pk: the changelog, one batch per PutKv bucket batch), None if unknown."""
    if not data or not table:
        return None
    n = 0
    for seg in glob.glob(os.path.join(data, "*", db, table + "-*", "log-*", "*.log")):
        b = open(seg, "rb").read()
        p = 0
        while p + 12 <= len(b):  # base offset int64, length int32 (little-endian), then length bytes
            _, ln = struct.unpack_from("<qi", b, p)
            if ln <= 0 or p + 12 + ln > len(b):
                break
            n += 1
            p += 12 + ln
    return n or None

def per_batch(xs):
    v = []
    for x in xs:
        nb = batches(x.get("table"))
        if nb:
            v.append((x["result"]["rows"] + warm) / nb)
    return f"{med(v):,.0f}" if v else "?"

modes = []
for x in rs:
    if x["mode"] not in modes and not x["kind"].startswith(("lookup:", "pprof:")):
        modes.append(x["mode"])
name = {"pk": "PK upsert", "log": "log append (ARROW, ZSTD)"}
def ratio(a, b, xs):
    if strict and noisy(xs):
        return "— (NOISY)"
    return f"{a / b:.2f}×" + (" NOISY" if noisy(xs) else "")
if any(sel("gateway", "main", m) for m in modes):
    print("| mode | Java client rows/s | gateway rows/s | gateway ÷ Java | gateway p50 / p99 ms | gateway CPU/row | Java client CPU/row | Fluss CPU/row (gateway runs / Java runs) | VmHWM gateway / Java | rows per batch gateway / Java |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for m in modes:
    gx, jx = sel("gateway", "main", m), sel("java", "main", m)
    g, j = res(gx), res(jx)
    if not g or not j:
        continue
    gr, jr = med([x["rows_per_s"] for x in g]), med([x["rows_per_s"] for x in j])
    jh = max(x.get("client_hwm_kb", -1) for x in j)
    print(f"| {name.get(m, m)} | {jr:,.0f} | {gr:,.0f} | {ratio(gr, jr, gx + jx)} | {med([x['p50_ms'] for x in g]):.1f} / {med([x['p99_ms'] for x in g]):.1f} "
          f"| {med([us(x['rows'], x['gateway_ticks']) for x in g]):.2f} µs | {med([us(x['rows'], x['client_ticks']) for x in j]):.2f} µs "
          f"| {med([us(x['rows'], x['fluss_ticks']) for x in g]):.2f} / {med([us(x['rows'], x['fluss_ticks']) for x in j]):.2f} µs "
          f"| {max(x['gateway_hwm_kb'] for x in g) / 1024:.0f} / {jh / 1024:.0f} MiB | {per_batch(gx)} / {per_batch(jx)} |")
print()
def per_round(side, label, ms):
    """Prints side's rows/s ÷ the gateway's JSON rows/s in each round of each
    mode of ms: the same round's two runs were made minutes apart, the
    machine's speed moving less between them than between rounds, so their
    ratio per round shows the spread a median of each side hides."""
    for m in ms:
        rr = [a["rows_per_s"] / b["rows_per_s"] for a, b in zip(res(sel(side, "main", m)), res(sel("gateway", "main", m)))]
        if rr:
            print(f"{label} ÷ JSON in each round, {name.get(m, m)}: " + ", ".join(f"{x:.2f}" for x in rr) + f" (median {med(rr):.2f})")
    print()
arrow_sides = [("gateway-arrow", "Arrow IPC"), ("gateway-arrow-zstd", "Arrow IPC, ZSTD-compressed")]
arrows = [m for m in modes if any(sel(side, "main", m) for side, _ in arrow_sides)]
if arrows:
    print("Arrow IPC bodies (issue 25; targets: Arrow ≥ 3× JSON, ≥ 2× the Java AppendWriter):")
    print()
    print("| mode | body | Java client rows/s | gateway JSON rows/s | gateway Arrow IPC rows/s | Arrow ÷ JSON | Arrow ÷ Java | Arrow p50 / p99 ms | Arrow gateway CPU/row | Fluss CPU/row (Arrow runs) | VmHWM gateway | rows per batch Arrow |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in arrows:
        for side, label in arrow_sides:
            ax, gx, jx = sel(side, "main", m), sel("gateway", "main", m), sel("java", "main", m)
            a, g, j = res(ax), res(gx), res(jx)
            if not a:
                continue
            ar = med([x["rows_per_s"] for x in a])
            gr = med([x["rows_per_s"] for x in g]) if g else float("nan")
            jr = med([x["rows_per_s"] for x in j]) if j else float("nan")
            print(f"| {name.get(m, m)} | {label} | {jr:,.0f} | {gr:,.0f} | {ar:,.0f} | {ratio(ar, gr, ax + gx)} | {ratio(ar, jr, ax + jx)} "
                  f"| {med([x['p50_ms'] for x in a]):.1f} / {med([x['p99_ms'] for x in a]):.1f} "
                  f"| {med([us(x['rows'], x['gateway_ticks']) for x in a]):.2f} µs | {med([us(x['rows'], x['fluss_ticks']) for x in a]):.2f} µs "
                  f"| {max(x['gateway_hwm_kb'] for x in a) / 1024:.0f} MiB | {per_batch(ax)} |")
    print()
    for side, label in arrow_sides:
        per_round(side, label, [m for m in arrows if sel(side, "main", m)])
ndjsons = [m for m in modes if sel("gateway-ndjson", "main", m)]
if ndjsons:
    print("NDJSON bodies, the same entries one per line (issue 25; target: NDJSON ≥ 1.0× JSON documents):")
    print()
    print("| mode | gateway JSON rows/s | gateway NDJSON rows/s | NDJSON ÷ JSON | NDJSON p50 / p99 ms | NDJSON gateway CPU/row | JSON gateway CPU/row | VmHWM gateway |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for m in ndjsons:
        nx, gx = sel("gateway-ndjson", "main", m), sel("gateway", "main", m)
        n, g = res(nx), res(gx)
        nr = med([x["rows_per_s"] for x in n])
        gr = med([x["rows_per_s"] for x in g]) if g else float("nan")
        gcpu = f"{med([us(x['rows'], x['gateway_ticks']) for x in g]):.2f} µs" if g else "?"
        print(f"| {name.get(m, m)} | {gr:,.0f} | {nr:,.0f} | {ratio(nr, gr, nx + gx)} "
              f"| {med([x['p50_ms'] for x in n]):.1f} / {med([x['p99_ms'] for x in n]):.1f} "
              f"| {med([us(x['rows'], x['gateway_ticks']) for x in n]):.2f} µs | {gcpu} "
              f"| {max(x['gateway_hwm_kb'] for x in n) / 1024:.0f} MiB |")
    print()
    per_round("gateway-ndjson", "NDJSON", ndjsons)
phases = [("outside", "outside the handler (HTTP, body, answer)"), ("w-encode", "writer: encode + buffer"),
          ("w-queue", "writer: queued for a batch"), ("w-slot", "… of which waiting for an in-flight slot"),
          ("w-build", "writer: batch build + send"), ("w-fluss", "writer: Fluss round trip"),
          ("w-resolve", "writer: verdicts back to the handler")]
tl = {m: [x["timeline"] for x in res(sel("gateway", "main", m)) if x.get("timeline")] for m in modes}
if any(tl.values()):
    print("Where a gateway request's time went (p50 ms of each phase, median of the rounds; the writer's phases are those of the batch that finished last):")
    print()
    print("| phase | " + " | ".join(name.get(m, m) for m in modes) + " |")
    print("|---|" + "---:|" * len(modes))
    lines = [("request (client side)", lambda m: med([x["p50_ms"] for x in res(sel("gateway", "main", m))])),
             ("handler (decode + delivery)", lambda m: med([t["handler"]["p50_ms"] for t in tl[m]]))]
    lines += [(title, (lambda k: lambda m: med([t[k]["p50_ms"] for t in tl[m]]))(k)) for k, title in phases]
    for title, f in lines:
        print(f"| {title} | " + " | ".join(f"{f(m):.1f}" if tl[m] else "?" for m in modes) + " |")
    print("| batches per request / rows in the last batch / its bucket's batches in flight (means) | "
          + " | ".join(f"{med([t['mean_batches'] for t in tl[m]]):.1f} / {med([t['mean_rows'] for t in tl[m]]):,.0f} / {med([t['mean_inflight'] for t in tl[m]]):.1f}"
                       if tl[m] else "?" for m in modes) + " |")
    print()
for m in modes:
    for h in res(sel("gateway", "half", m)):
        print(f"{name.get(m, m)} at half load ({h['rows_per_s']:,.0f} rows/s): request p50/p99 {h['p50_ms']:.1f}/{h['p99_ms']:.1f} ms, "
              f"added by the gateway (request − delivery) p50/p99 {h['added_p50_ms']:.2f}/{h['added_p99_ms']:.2f} ms")
looks = [k for k in ("lookup:key", "lookup:prefix") if sel("gateway", k, "pk") and sel("java", k, "pk")]
if looks:
    print()
    print("| lookups (1 of 4 keys missing) | Java client keys/s | gateway keys/s | gateway ÷ Java | gateway p50 / p99 ms (request) | Java p50 / p99 ms (one lookup) | gateway CPU/key | Java client CPU/key | Fluss CPU/key (gateway runs / Java runs) | VmHWM gateway / Java |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k in looks:
        gx, jx = sel("gateway", k, "pk"), sel("java", k, "pk")
        g, j = res(gx), res(jx)
        gr, jr = med([x["keys_per_s"] for x in g]), med([x["keys_per_s"] for x in j])
        what = ("primary key" if k == "lookup:key" else "prefix") + f", {g[0]['keys_per_request']} per request × {g[0]['concurrency']}"
        print(f"| {what} | {jr:,.0f} | {gr:,.0f} | {ratio(gr, jr, gx + jx)} | {med([x['p50_ms'] for x in g]):.1f} / {med([x['p99_ms'] for x in g]):.1f} "
              f"| {med([x['p50_ms'] for x in j]):.1f} / {med([x['p99_ms'] for x in j]):.1f} "
              f"| {med([us(x['keys'], x['gateway_ticks']) for x in g]):.2f} µs | {med([us(x['keys'], x['client_ticks']) for x in j]):.2f} µs "
              f"| {med([us(x['keys'], x['fluss_ticks']) for x in g]):.2f} / {med([us(x['keys'], x['fluss_ticks']) for x in j]):.2f} µs "
              f"| {max(x['gateway_hwm_kb'] for x in g) / 1024:.0f} / {max(x.get('client_hwm_kb', -1) for x in j) / 1024:.0f} MiB |")
sweep = [x for x in rs if x["kind"].startswith("sweep:")]
if sweep:
    print()
    print("| mode | entries × concurrency | gateway rows/s | ÷ Java median | p50 / p99 ms | gateway CPU/row | VmHWM gateway | 429s waited out | load before |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for x in sweep:
        _, e, c = x["kind"].split(":")
        jx = sel("java", "main", x["mode"])
        r = x["result"]
        jr = med([y["rows_per_s"] for y in res(jx)]) if jx else float("nan")
        print(f"| {x['mode']} | {e} × {c} | {r['rows_per_s']:,.0f} | {ratio(r['rows_per_s'], jr, [x] + jx)} | {r['p50_ms']:.1f} / {r['p99_ms']:.1f} "
              f"| {us(r['rows'], r['gateway_ticks']):.2f} µs | {r['gateway_hwm_kb'] / 1024:.0f} MiB | {r.get('retried_429', 0)} | {x.get('load_before', 0):.2f} |")
if strict and bad_runs:
    sys.exit(3)
EOF
